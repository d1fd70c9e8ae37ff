//! Your solutions to the chapter 6 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter06 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

/// Exercise 1. Scaled dot-product attention with a temperature `τ > 0`:
/// `weights = softmax(Q Kᵀ / (τ √d))`, `output = weights V`. Returns `(output, weights)`.
/// Shapes: `queries [B, Q, d]`, `keys [B, K, d]`, `values [B, K, dv]`.
pub fn attention_with_temperature(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    temperature: f32,
) -> (Tensor, Tensor) {
    let _ = (queries, keys, values, temperature);
    todo!(
        "exercise 1: divide the scores by temperature · √d before the softmax over the keys"
    )
}

/// Exercise 2. Queries `[B, Q, dq]` and keys `[B, K, dk]` of different sizes, projected to
/// a common size `d` by `w_q: [dq, d]` and `w_k: [dk, d]`: the weights
/// `softmax((Q W_q)(K W_k)ᵀ / √d)`, `[B, Q, K]`.
pub fn projected_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
) -> Tensor {
    let _ = (queries, keys, w_q, w_k);
    todo!(
        "exercise 2: project both with matmul, then score as in the chapter with d the projected size"
    )
}

/// Exercise 3. Cosine-similarity attention: `weights = softmax(cos(q, k) / τ)` over the
/// keys, where `cos(q, k) = q · k / (|q| |k|)`. Shapes: `queries [B, Q, d]`,
/// `keys [B, K, d]`, result `[B, Q, K]`.
pub fn cosine_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    temperature: f32,
) -> Tensor {
    let _ = (queries, keys, temperature);
    todo!(
        "exercise 3: divide each query and each key by its length, then dot products, / τ, softmax"
    )
}

/// Exercise 4. The variance of `q · k` for `samples` pairs of random vectors of size `d`
/// whose entries are drawn uniformly from `[-1, 1)` (not from N(0, 1)).
pub fn uniform_score_variance(d: usize, samples: usize) -> f32 {
    let _ = (d, samples);
    todo!(
        "exercise 4: draw with Tensor::rand, multiply, sum over the features, take the variance"
    )
}
