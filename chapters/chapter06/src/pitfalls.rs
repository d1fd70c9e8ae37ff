//! Two mistakes that are easy to make when writing attention by hand, and how a test
//! catches each: the softmax over the wrong dimension, and the missing transpose of
//! the keys. (The other two, no scale and `1/d`, are measured in
//! [`crate::why_sqrt_d`].)

use attention::prelude::*;

// ANCHOR: wrong_dim
/// A mistake that runs: the softmax taken over dimension 1 of the `[B, Q, K]` scores,
/// the *queries*, instead of the keys. Softmax keeps the shape, so every shape check
/// passes.
pub fn weights_over_the_wrong_dim(queries: &Tensor, keys: &Tensor) -> Tensor {
    let d = queries.size(-1);
    let scores = queries.matmul(&keys.transpose(1, 2)) * (1.0 / (d as f32).sqrt());
    scores.softmax(1) // wrong: normalises each key's column over the queries
}
// ANCHOR_END: wrong_dim

// ANCHOR: rows_sum_to_one
/// The property that catches it: every query's weights over the keys (the last
/// dimension) sum to 1, within `f32` rounding.
pub fn rows_sum_to_one(weights: &Tensor) -> bool {
    weights
        .sum_dim(-1)
        .to_vec()
        .iter()
        .all(|s| (s - 1.0).abs() < 1e-5)
}
// ANCHOR_END: rows_sum_to_one

// ANCHOR: no_transpose
/// A mistake that a shape check usually catches: `Q K` instead of `Q Kᵀ`. It
/// multiplies `[B, Q, d]` by `[B, K, d]`, which only has a shape when `K = d`.
pub fn scores_without_transpose(queries: &Tensor, keys: &Tensor) -> Tensor {
    queries.matmul(keys) // wrong: keys.transpose(1, 2) is missing
}
// ANCHOR_END: no_transpose

/// The largest absolute difference between two tensors of the same shape.
pub fn largest_difference(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).to_vec().iter().fold(0.0f32, |m, v| m.max(v.abs()))
}

/// Runs a closure that is expected to panic and returns its message (shared by the
/// chapters, in the `lesson` crate).
pub use lesson::panic_message;
