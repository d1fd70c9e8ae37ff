//! A second solution to each chapter 6 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::Tensor;

/// Exercise 1, with the queries scaled by `1 / (τ √d)` before the product instead of
/// the scores after it.
pub fn attention_with_temperature(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    temperature: f32,
) -> (Tensor, Tensor) {
    let d = queries.size(-1) as f32;
    let scaled = queries * (1.0 / (temperature * d.sqrt()));
    let weights = scaled.bmm(&keys.transpose(1, 2)).softmax(-1);
    let output = weights.matmul(values);
    (output, weights)
}

/// Exercise 2, with both projections scaled by `d^(−1/4)` before the product (the same
/// `1/√d` overall) and a plain softmax.
pub fn projected_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
) -> Tensor {
    let d = w_q.size(1) as f32;
    let s = d.powf(-0.25);
    let q = queries.matmul(w_q) * s;
    let k = keys.matmul(w_k) * s;
    q.bmm(&k.transpose(1, 2)).softmax(-1)
}

/// Exercise 3, with the raw dot products divided by the outer product of the lengths,
/// `q · k / (|q| |k|)`, instead of normalising the vectors first.
pub fn cosine_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    temperature: f32,
) -> Tensor {
    let dots = queries.bmm(&keys.transpose(1, 2)); // [B, Q, K]
    let q_len = queries.square().sum_dim(-1).sqrt().unsqueeze(2); // [B, Q, 1]
    let k_len = keys.square().sum_dim(-1).sqrt().unsqueeze(1); // [B, 1, K]
    let cosines = dots / (q_len * k_len);
    (cosines / temperature).softmax(-1)
}

/// Exercise 4, with one draw of `[2, samples, d]` for the queries and the keys, and
/// the unbiased sample variance (divided by `samples − 1`), summed in `f64`.
pub fn uniform_score_variance(d: usize, samples: usize) -> f32 {
    let both = Tensor::rand([2, samples, d], -1.0, 1.0);
    let (q, k) = (both.narrow(0, 0, 1), both.narrow(0, 1, 1));
    let scores: Vec<f64> = (q * k)
        .sum_dim(-1)
        .to_vec()
        .into_iter()
        .map(f64::from)
        .collect();
    let n = scores.len() as f64;
    let mean = scores.iter().sum::<f64>() / n;
    let squares: f64 = scores.iter().map(|s| (s - mean) * (s - mean)).sum();
    (squares / (n - 1.0)) as f32
}
