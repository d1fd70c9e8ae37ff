//! A second solution to each chapter 10 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::Tensor;

/// Exercise 1, with the shapes written as `B×h` in the message (any spelling that
/// names both shapes' sizes in order will do) and `v` applied by a broadcast product
/// and a sum.
#[track_caller]
pub fn single_query_scores(query: &Tensor, keys: &Tensor, v: &Tensor) -> Tensor {
    let spell = |shape: &[usize]| {
        shape
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("×")
    };
    let (q, k) = (query.shape(), keys.shape());
    if q.len() != 2 || k.len() != 3 || q[0] != k[0] || q[1] != k[2] {
        panic!(
            "single_query_scores: a query of {} does not fit keys of {} (the query must be B×h, the keys B×K×h)",
            spell(q),
            spell(k)
        );
    }
    ((query.unsqueeze(1) + keys).tanh() * v).sum_dim(-1)
}

/// Exercise 2, in `f32` and one example at a time: each example's queries, each
/// query's entropy over its real keys as `Σ p ln(1/p)`.
pub fn normalised_entropy(weights: &Tensor, lens: &[usize]) -> f32 {
    let (b, q, k) = (weights.size(0), weights.size(1), weights.size(2));
    let w = weights.to_vec();
    let mut sum = 0.0f32;
    for (example, &len) in lens.iter().enumerate().take(b) {
        for query in 0..q {
            let start = (example * q + query) * k;
            let entropy: f32 = w[start..start + len]
                .iter()
                .filter(|p| **p > 0.0)
                .map(|p| p * (1.0 / p).ln())
                .sum();
            sum += entropy / (len as f32).ln();
        }
    }
    sum / (b * q) as f32
}

/// Exercise 3, with the gain divided by the norm first, `v · (g / ‖v‖)`, and the norm
/// as `powf(0.5)`.
pub fn weight_norm_rows(g: &Tensor, v: &Tensor) -> Tensor {
    let norms = v.square().sum_dim_keepdim(1).powf(0.5); // [out, 1]
    v * &(g / &norms)
}

/// Exercise 4, as PyTorch's `clip_grad_norm_` writes it: the norm summed in `f64`, and
/// the scale `min(1, max_norm / (total + 1e-6))`.
pub fn clip_by_total_norm(grads: &[Vec<f32>], max_norm: f32) -> (Vec<Vec<f32>>, f32) {
    let squares: f64 = grads
        .iter()
        .map(|g| g.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>())
        .sum();
    let total = squares.sqrt() as f32;
    let scale = (max_norm / (total + 1e-6)).min(1.0);
    let clipped = grads
        .iter()
        .map(|g| g.iter().map(|&x| x * scale).collect())
        .collect();
    (clipped, total)
}
