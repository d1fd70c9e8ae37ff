// ANCHOR: all
//! The reference solutions of the chapter 10 exercises (the tests in
//! `tests/exercises.rs` hold your `src/exercises.rs` to the same assertions).

use engine::Tensor;

// ANCHOR: exercise_1
/// Exercise 1. The single-query additive scores `v · tanh(q̃ + k̃ⱼ)` for projected
/// queries `[B, h]` and projected keys `[B, K, h]`, `v: [h]`, giving `[B, K]`; and a
/// check at the boundary: a query batch that differs from the keys' stops with a
/// message that starts `single_query_scores:` and names both shapes (their sizes in
/// order, in any spelling: `[3, 4]`, `(3, 4)`, `3×4`).
#[track_caller]
pub fn single_query_scores(query: &Tensor, keys: &Tensor, v: &Tensor) -> Tensor {
    let (q, k) = (query.shape(), keys.shape());
    assert!(
        q.len() == 2 && k.len() == 3 && q[0] == k[0] && q[1] == k[2],
        "single_query_scores: the query must be [B, h] and the keys [B, K, h], \
         found {q:?} and {k:?}"
    );
    (query.unsqueeze(1) + keys)
        .tanh()
        .matmul(&v.unsqueeze(1))
        .squeeze(-1)
}
// ANCHOR_END: exercise_1

// ANCHOR: exercise_2
/// Exercise 2. The mean normalised entropy of attention weights `[B, Q, K]` whose
/// example `b` has `lens[b]` real keys: for each query, `−Σⱼ pⱼ ln pⱼ` over its real
/// keys divided by `ln(len)`, then the mean over every query. 1 for uniform weights,
/// 0 for all the weight on one key. (Every `len` is at least 2.)
pub fn normalised_entropy(weights: &Tensor, lens: &[usize]) -> f32 {
    let shape = weights.shape();
    let (queries, keys) = (shape[1], shape[2]);
    let w = weights.to_vec();
    let mut total = 0.0f64;
    for (row, p) in w.chunks(keys).enumerate() {
        let len = lens[row / queries];
        let h: f64 = p[..len]
            .iter()
            .filter(|&&x| x > 0.0)
            .map(|&x| -(x as f64) * (x as f64).ln())
            .sum();
        total += h / (len as f64).ln();
    }
    (total / (w.len() / keys) as f64) as f32
}
// ANCHOR_END: exercise_2

// ANCHOR: exercise_3
/// Exercise 3. Weight normalisation by hand, one norm per output row: `w = g · v /
/// ‖v‖` for `g: [out, 1]` and `v: [out, in]`, with engine ops so that gradients reach
/// `g` and `v`.
pub fn weight_norm_rows(g: &Tensor, v: &Tensor) -> Tensor {
    let norms = v.square().sum_dim_keepdim(1).sqrt();
    g * &(v / &norms)
}
// ANCHOR_END: exercise_3

// ANCHOR: exercise_4
/// Exercise 4. Gradient clipping by the global norm, as `clip_grad_norm` does: given
/// the gradients of every parameter (flattened), return them scaled by `min(1,
/// max_norm / total)`, with `total` the Euclidean norm of all of them together, and
/// `total` itself. The entries are compared to within `1e-5`, so dividing by `total +
/// 1e-6` (a guard against a zero norm) passes too.
pub fn clip_by_total_norm(grads: &[Vec<f32>], max_norm: f32) -> (Vec<Vec<f32>>, f32) {
    let total = grads.iter().flatten().map(|g| g * g).sum::<f32>().sqrt();
    let scale = if total > max_norm {
        max_norm / total
    } else {
        1.0
    };
    let clipped = grads
        .iter()
        .map(|g| g.iter().map(|x| x * scale).collect())
        .collect();
    (clipped, total)
}
// ANCHOR_END: exercise_4
// ANCHOR_END: all
