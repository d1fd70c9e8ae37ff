// ANCHOR: all
//! Reference solutions to the chapter 6 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

// ANCHOR: attention_with_temperature
/// Exercise 1. Scaled dot-product attention with a temperature `τ > 0`: `weights =
/// softmax(Q Kᵀ / (τ √d))`, `output = weights V`. Returns `(output, weights)`. `τ <
/// 1` sharpens the weights towards the largest score, `τ > 1` flattens them towards
/// uniform, and `τ = 1` is the chapter's attention.
pub fn attention_with_temperature(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    temperature: f32,
) -> (Tensor, Tensor) {
    let d = queries.size(-1) as f32;
    let scores = queries.matmul(&keys.transpose(1, 2)) / (temperature * d.sqrt());
    let weights = scores.softmax(-1);
    (weights.bmm(values), weights)
}
// ANCHOR_END: attention_with_temperature

// ANCHOR: projected_attention_weights
/// Exercise 2. Queries `[B, Q, dq]` and keys `[B, K, dk]` of different sizes,
/// projected to a common size `d` by `w_q: [dq, d]` and `w_k: [dk, d]`: the weights
/// `softmax((Q W_q)(K W_k)ᵀ / √d)`, `[B, Q, K]`. The scale uses `d`, the size the dot
/// product sums over, not `dq` or `dk`.
pub fn projected_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
) -> Tensor {
    let q = queries.matmul(w_q); // [B, Q, dq] x [dq, d] -> [B, Q, d]
    let k = keys.matmul(w_k); //    [B, K, dk] x [dk, d] -> [B, K, d]
    let d = q.size(-1) as f32;
    let scores = q.matmul(&k.transpose(1, 2)) / d.sqrt();
    masked_softmax(&scores, &Mask::none(), Fill::Safe)
}
// ANCHOR_END: projected_attention_weights

// ANCHOR: cosine_attention_weights
/// Exercise 3. Cosine-similarity attention: `weights = softmax(cos(q, k) / τ)` over
/// the keys. The cosine lies in `[-1, 1]` whatever `d` is, so no `√d` is needed; the
/// temperature alone sets how sharp the weights can be.
pub fn cosine_attention_weights(
    queries: &Tensor,
    keys: &Tensor,
    temperature: f32,
) -> Tensor {
    let unit = |x: &Tensor| x / x.square().sum_dim_keepdim(-1).sqrt();
    let cosines = unit(queries).matmul(&unit(keys).transpose(1, 2)); // [B, Q, K]
    (cosines / temperature).softmax(-1)
}
// ANCHOR_END: cosine_attention_weights

// ANCHOR: uniform_score_variance
/// Exercise 4. The variance of `q · k` for `samples` pairs of random vectors of size
/// `d` with entries uniform in `[-1, 1)`. Each entry has variance 1/3, so each
/// product `qᵢ kᵢ` has variance 1/9 and the sum of `d` of them `d/9`: the right scale
/// for such queries and keys would be `3/√d`.
pub fn uniform_score_variance(d: usize, samples: usize) -> f32 {
    let q = Tensor::rand([samples, d], -1.0, 1.0);
    let k = Tensor::rand([samples, d], -1.0, 1.0);
    let scores = (q * k).sum_dim(-1); // [samples]
    let centred = &scores - scores.mean();
    centred.square().mean().item()
}
// ANCHOR_END: uniform_score_variance
// ANCHOR_END: all
