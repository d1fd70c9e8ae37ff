// ANCHOR: all
//! Reference solutions to the chapter 5 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use engine::Tensor;

// ANCHOR: additive_scores
/// Exercise 1. Additive scores from plain weight tensors, for queries and keys of
/// different sizes: `queries: [B, Q, dq]`, `keys: [B, K, dk]`, `w_q: [h, dq]`, `w_k:
/// [h, dk]` (PyTorch's `[out, in]` layout) and `w_v: [h]`. Returns the `[B, Q, K]`
/// scores `w_v · tanh(W_q qᵢ + W_k kⱼ)`. Once projected, both sides have `h`
/// features, so `dq` and `dk` never meet.
pub fn additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
) -> Tensor {
    let q = queries.matmul(&w_q.transpose(0, 1)).unsqueeze(2); // [B, Q, 1, h]
    let k = keys.matmul(&w_k.transpose(0, 1)).unsqueeze(1); //    [B, 1, K, h]
    let features = (q + k).tanh(); //                              [B, Q, K, h]
    features.matmul(&w_v.unsqueeze(1)).squeeze(-1) //              [B, Q, K]
}
// ANCHOR_END: additive_scores

// ANCHOR: general_scores
/// Exercise 2. Luong's "general" multiplicative score `qᵢᵀ W kⱼ`: `queries: [B, Q,
/// dq]`, `keys: [B, K, dk]`, `w: [dq, dk]`. Returns `[B, Q, K]`. Like the additive
/// score it accepts queries and keys of different sizes, but it needs no `[B, Q, K,
/// h]` tensor.
pub fn general_scores(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    queries.matmul(w).bmm(&keys.transpose(1, 2))
}
// ANCHOR_END: general_scores

// ANCHOR: distance_scores
/// Exercise 3. A distance-based score, `−‖qᵢ − kⱼ‖²`: the nearer the key, the higher
/// the score. `queries: [B, Q, d]`, `keys: [B, K, d]`. Returns `[B, Q, K]`. Written
/// as `−(‖q‖² − 2 q·k + ‖k‖²)`, it needs only `[B, Q, K]` tensors, where the pairwise
/// differences would need `[B, Q, K, d]`.
pub fn distance_scores(queries: &Tensor, keys: &Tensor) -> Tensor {
    let q_norms = queries.square().sum_dim_keepdim(-1); //               [B, Q, 1]
    let k_norms = keys.square().sum_dim(-1).unsqueeze(1); //             [B, 1, K]
    let dots = queries.bmm(&keys.transpose(1, 2)); //                    [B, Q, K]
    dots * 2.0 - q_norms - k_norms
}
// ANCHOR_END: distance_scores

// ANCHOR: chunked_additive_scores
/// Exercise 4. The scores of exercise 1, computed `chunk` queries at a time, so that
/// the pairs tensor never holds more than `[B, chunk, K, h]` values at once. The last
/// chunk may be shorter. Each chunk's pairs tensor is freed before the next one is
/// made; only the `[B, chunk, K]` scores are kept.
pub fn chunked_additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
    chunk: usize,
) -> Tensor {
    assert!(
        chunk > 0,
        "chunked_additive_scores: chunk must be at least 1"
    );
    let total = queries.size(1);
    let parts: Vec<Tensor> = (0..total)
        .step_by(chunk)
        .map(|start| {
            let these = queries.narrow(1, start, chunk.min(total - start));
            additive_scores(&these, keys, w_q, w_k, w_v)
        })
        .collect();
    Tensor::concat(&parts, 1)
}
// ANCHOR_END: chunked_additive_scores
// ANCHOR_END: all
