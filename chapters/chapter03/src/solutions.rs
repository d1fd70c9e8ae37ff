// ANCHOR: all
//! Reference solutions to the chapter 3 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

// ANCHOR: laplacian_weights
/// Exercise 1. Attention weights from a Laplacian kernel, `softmax(−|q − kᵢ| /
/// width)`: `queries: [Q]`, `keys: [K]`, result `[Q, K]`. `|d|` here is `relu(d) +
/// relu(−d)`, from ops the chapters have met (`d.abs()` is the same).
pub fn laplacian_weights(queries: &Tensor, keys: &Tensor, width: f32) -> Tensor {
    let diff = queries.unsqueeze(1) - keys.unsqueeze(0); // [Q, K]
    let distance = diff.relu() + (-&diff).relu(); //        |q − k|
    (-distance / width).softmax(-1)
}
// ANCHOR_END: laplacian_weights

// ANCHOR: leave_one_out_weights
/// Exercise 2. Every point of `x: [n]` attends to every *other* point with Gaussian
/// scores `−((xᵢ − xⱼ) · w)² / 2`: `[n, n]` weights with a zero diagonal, the
/// diagonal hidden by a keep mask rather than cut out of the keys.
pub fn leave_one_out_weights(x: &Tensor, w: f32) -> Tensor {
    let n = x.size(0);
    let diff = x.unsqueeze(1) - x.unsqueeze(0); //    [n, n]
    let scores = -(diff * w).square() / 2.0;
    let index = Tensor::arange(n);
    let eye = index.unsqueeze(1).eq_mask(&index.unsqueeze(0)); // 1 on the diagonal
    let others = 1.0 - eye; //                                     0 on the diagonal
    masked_softmax(&scores, &Mask::keep(&others), Fill::Safe)
}
// ANCHOR_END: leave_one_out_weights

// ANCHOR: gaussian_weights_nd
/// Exercise 3. Gaussian attention weights for queries and keys that are vectors:
/// `queries: [Q, d]`, `keys: [K, d]`, scores `−‖q − kᵢ‖² / 2σ²`, result `[Q, K]`.
pub fn gaussian_weights_nd(queries: &Tensor, keys: &Tensor, sigma: f32) -> Tensor {
    // [Q, 1, d] − [1, K, d] → [Q, K, d]
    let diff = queries.unsqueeze(1) - keys.unsqueeze(0);
    let squared_distance = diff.square().sum_dim(-1); // [Q, K]
    (-squared_distance / (2.0 * sigma * sigma)).softmax(-1)
}
// ANCHOR_END: gaussian_weights_nd

// ANCHOR: per_key_width_weights
/// Exercise 4. A width per key: `softmax(−((q − kᵢ) · wᵢ)² / 2)` with `w: [K]`, one
/// inverse width for each key (a parameter to learn when `w` requires a gradient):
/// `queries: [Q]`, `keys: [K]`, result `[Q, K]`.
pub fn per_key_width_weights(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let diff = queries.unsqueeze(1) - keys.unsqueeze(0); // [Q, K]
    (-(diff * w).square() / 2.0).softmax(-1) //             [Q, K] · [K] → [Q, K]
}
// ANCHOR_END: per_key_width_weights
// ANCHOR_END: all
