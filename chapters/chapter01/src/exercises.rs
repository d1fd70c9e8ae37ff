//! Your solutions to the chapter 1 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter01 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

/// Exercise 1. The difference of every row of `x: [n, d]` with every row of `y: [m, d]`,
/// as a `[n, m, d]` tensor whose entry `[i, j]` is `x[i] - y[j]`. No loop.
pub fn pairwise_differences(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = (x, y);
    todo!("exercise 1: unsqueeze x and y so that they broadcast to [n, m, d]")
}

/// Exercise 2. Each row of `x: [n, k]` divided by its sum, so every row sums to 1.
pub fn normalise_rows(x: &Tensor) -> Tensor {
    let _ = x;
    todo!("exercise 2: divide by the row sums, keeping their dimension")
}

/// Exercise 3. One query per example, `query: [B, d]`, against its keys `keys: [B, K, d]`:
/// the dot products `[B, K]`.
pub fn one_query_scores(query: &Tensor, keys: &Tensor) -> Tensor {
    let _ = (query, keys);
    todo!(
        "exercise 3: give the query a dimension of size 1, then bmm with the keys transposed"
    )
}
