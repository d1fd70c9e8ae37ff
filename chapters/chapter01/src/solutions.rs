// ANCHOR: all
//! Reference solutions to the chapter 1 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use engine::Tensor;

// ANCHOR: pairwise_differences
/// Exercise 1. The difference of every row of `x: [n, d]` with every row of `y: [m,
/// d]`, as a `[n, m, d]` tensor whose entry `[i, j]` is `x[i] - y[j]`. No loop: two
/// unsqueezes and one broadcast subtraction.
pub fn pairwise_differences(x: &Tensor, y: &Tensor) -> Tensor {
    x.unsqueeze(1) - y.unsqueeze(0)
}
// ANCHOR_END: pairwise_differences

// ANCHOR: normalise_rows
/// Exercise 2. Each row of `x: [n, k]` divided by its sum, so every row sums to 1
/// (the last step of a softmax). The row sums must keep their dimension to broadcast
/// back.
pub fn normalise_rows(x: &Tensor) -> Tensor {
    x / x.sum_dim_keepdim(-1)
}
// ANCHOR_END: normalise_rows

// ANCHOR: one_query_scores
/// Exercise 3. One query per example, `query: [B, d]`, against its keys `keys: [B, K,
/// d]`: the dot products `[B, K]`. Adding the query's missing axis turns the shape
/// error of the chapter into a batched matrix product `[B, 1, d] × [B, d, K] → [B, 1,
/// K]`.
pub fn one_query_scores(query: &Tensor, keys: &Tensor) -> Tensor {
    query.unsqueeze(1).bmm(&keys.transpose(1, 2)).squeeze(1)
}
// ANCHOR_END: one_query_scores
// ANCHOR_END: all
