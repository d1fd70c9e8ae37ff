//! Your solutions to the chapter 10 exercises. Replace each `todo!()` with your code,
//! then check it with `cargo test -p chapter10 --features exercises` (the same tests
//! the reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

/// Exercise 1. The single-query additive scores `v · tanh(q̃ + k̃ⱼ)` for projected
/// queries `[B, h]` and projected keys `[B, K, h]`, `v: [h]`, giving `[B, K]`; and a
/// check at the boundary: a query batch that differs from the keys' stops with a
/// message that starts `single_query_scores:` and names both shapes (their sizes in
/// order, in any spelling: `[3, 4]`, `(3, 4)`, `3×4`).
#[track_caller]
pub fn single_query_scores(query: &Tensor, keys: &Tensor, v: &Tensor) -> Tensor {
    let _ = (query, keys, v);
    todo!("exercise 1: check the shapes, unsqueeze the query, add, tanh, then v")
}

/// Exercise 2. The mean normalised entropy of attention weights `[B, Q, K]` whose
/// example `b` has `lens[b]` real keys: for each query, `−Σⱼ pⱼ ln pⱼ` over its real
/// keys divided by `ln(len)`, then the mean over every query. 1 for uniform weights,
/// 0 for all the weight on one key. (Every `len` is at least 2.)
pub fn normalised_entropy(weights: &Tensor, lens: &[usize]) -> f32 {
    let _ = (weights, lens);
    todo!("exercise 2: one row of K weights per query; skip zeros, divide by ln(len)")
}

/// Exercise 3. Weight normalisation by hand, one norm per output row: `w = g · v /
/// ‖v‖` for `g: [out, 1]` and `v: [out, in]`, with engine ops so that gradients reach
/// `g` and `v`.
pub fn weight_norm_rows(g: &Tensor, v: &Tensor) -> Tensor {
    let _ = (g, v);
    todo!("exercise 3: square, sum_dim_keepdim(1), sqrt; then g · v / norms")
}

/// Exercise 4. Gradient clipping by the global norm, as `clip_grad_norm` does: given
/// the gradients of every parameter (flattened), return them scaled by `min(1,
/// max_norm / total)`, with `total` the Euclidean norm of all of them together, and
/// `total` itself. The entries are compared to within `1e-5`, so dividing by `total +
/// 1e-6` (a guard against a zero norm) passes too.
pub fn clip_by_total_norm(grads: &[Vec<f32>], max_norm: f32) -> (Vec<Vec<f32>>, f32) {
    let _ = (grads, max_norm);
    todo!("exercise 4: one norm over every gradient, then one scale for all")
}
