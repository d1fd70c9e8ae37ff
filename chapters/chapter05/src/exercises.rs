//! Your solutions to the chapter 5 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter05 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

/// Exercise 1. Additive scores from plain weight tensors, for queries and keys of
/// different sizes: `queries: [B, Q, dq]`, `keys: [B, K, dk]`, `w_q: [h, dq]`,
/// `w_k: [h, dk]` (PyTorch's `[out, in]` layout) and `w_v: [h]`. Returns the `[B, Q, K]`
/// scores `w_v · tanh(W_q qᵢ + W_k kⱼ)`.
pub fn additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
) -> Tensor {
    let _ = (queries, keys, w_q, w_k, w_v);
    todo!(
        "exercise 1: project with matmul by the transposed weights, unsqueeze, add, tanh, then w_v"
    )
}

/// Exercise 2. Luong's "general" multiplicative score `qᵢᵀ W kⱼ`: `queries: [B, Q, dq]`,
/// `keys: [B, K, dk]`, `w: [dq, dk]`. Returns `[B, Q, K]`.
pub fn general_scores(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let _ = (queries, keys, w);
    todo!("exercise 2: queries × W is [B, Q, dk]; then bmm with the keys transposed")
}

/// Exercise 3. A distance-based score, `−‖qᵢ − kⱼ‖²`: the nearer the key, the higher the
/// score. `queries: [B, Q, d]`, `keys: [B, K, d]`. Returns `[B, Q, K]`.
pub fn distance_scores(queries: &Tensor, keys: &Tensor) -> Tensor {
    let _ = (queries, keys);
    todo!(
        "exercise 3: pairwise differences and a sum of squares, or ‖q‖² − 2 q·k + ‖k‖²"
    )
}

/// Exercise 4. The scores of exercise 1, computed `chunk` queries at a time, so that the
/// pairs tensor never holds more than `[B, chunk, K, h]` values at once. The last chunk may
/// be shorter. The test measures the peak with `engine::memory`: for `Q = 32`, `K = 16`,
/// `h = 32` in chunks of 2, everything held at once must stay under 32 KiB, half of one
/// whole pairs tensor.
pub fn chunked_additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
    chunk: usize,
) -> Tensor {
    let _ = (queries, keys, w_q, w_k, w_v, chunk);
    todo!(
        "exercise 4: narrow the queries chunk by chunk along dimension 1, score, and concat"
    )
}
