//! Your solutions to the chapter 3 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter03 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

/// Exercise 1. Attention weights from a Laplacian kernel, `softmax(−|q − kᵢ| / width)`:
/// `queries: [Q]`, `keys: [K]`, result `[Q, K]`.
pub fn laplacian_weights(queries: &Tensor, keys: &Tensor, width: f32) -> Tensor {
    let _ = (queries, keys, width);
    todo!(
        "exercise 1: pair every query with every key, take |q - k| (abs, or relu(d) + relu(-d)), then softmax(-1)"
    )
}

/// Exercise 2. Every point of `x: [n]` attends to every *other* point with Gaussian scores
/// `−((xᵢ − xⱼ) · w)² / 2`: `[n, n]` weights with a zero diagonal.
pub fn leave_one_out_weights(x: &Tensor, w: f32) -> Tensor {
    let _ = (x, w);
    todo!(
        "exercise 2: build a 0/1 keep tensor that is 0 on the diagonal, then masked_softmax with Mask::keep"
    )
}

/// Exercise 3. Gaussian attention weights for queries and keys that are vectors:
/// `queries: [Q, d]`, `keys: [K, d]`, scores `−‖q − kᵢ‖² / 2σ²`, result `[Q, K]`.
pub fn gaussian_weights_nd(queries: &Tensor, keys: &Tensor, sigma: f32) -> Tensor {
    let _ = (queries, keys, sigma);
    todo!(
        "exercise 3: broadcast to [Q, K, d], square, sum over the features, then softmax"
    )
}

/// Exercise 4. A width per key: `softmax(−((q − kᵢ) · wᵢ)² / 2)` with `w: [K]`:
/// `queries: [Q]`, `keys: [K]`, result `[Q, K]`.
pub fn per_key_width_weights(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let _ = (queries, keys, w);
    todo!(
        "exercise 4: the [Q, K] differences times w: [K] broadcast along the queries"
    )
}
