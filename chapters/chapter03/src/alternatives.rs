//! A second solution to each chapter 3 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

/// A softmax over the last dimension written out: subtract each row's maximum,
/// exponentiate, divide by the row's sum.
fn softmax_by_hand(scores: &Tensor) -> Tensor {
    let shifted = scores - scores.max_dim_keepdim(-1);
    let e = shifted.exp();
    &e / &e.sum_dim_keepdim(-1)
}

/// Exercise 1, with the engine's `abs` for `|q − k|` and the softmax written out.
pub fn laplacian_weights(queries: &Tensor, keys: &Tensor, width: f32) -> Tensor {
    let distance = (queries.unsqueeze(1) - keys.unsqueeze(0)).abs(); // [Q, K]
    softmax_by_hand(&(distance * (-1.0 / width)))
}

/// Exercise 2, with the keep tensor built from the two strict triangles of a matrix of
/// ones (everything but the diagonal), and the scores as `−(w²/2)·d²`.
pub fn leave_one_out_weights(x: &Tensor, w: f32) -> Tensor {
    let n = x.size(0);
    let d = x.unsqueeze(1) - x.unsqueeze(0); // [n, n]
    let scores = d.square() * (-w * w / 2.0);
    let ones = Tensor::ones([n, n]);
    let others = ones.tril(-1) + ones.triu(1);
    masked_softmax(&scores, &Mask::keep(&others), Fill::Safe)
}

/// Exercise 3, with the square expanded, `‖q‖² − 2 q·k + ‖k‖²`, so that no `[Q, K, d]`
/// tensor is built.
pub fn gaussian_weights_nd(queries: &Tensor, keys: &Tensor, sigma: f32) -> Tensor {
    let q2 = queries.square().sum_dim_keepdim(-1); // [Q, 1]
    let k2 = keys.square().sum_dim(-1).unsqueeze(0); // [1, K]
    let dots = queries.matmul(&keys.transpose(0, 1)); // [Q, K]
    let squared_distance = q2 + k2 - dots * 2.0;
    softmax_by_hand(&(squared_distance * (-1.0 / (2.0 * sigma * sigma))))
}

/// Exercise 4, as `−(q − kᵢ)² · wᵢ² / 2`: the widths squared on their own, then
/// broadcast along the queries.
pub fn per_key_width_weights(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let k = keys.size(0);
    let squared = (queries.unsqueeze(1) - keys.unsqueeze(0)).square(); // [Q, K]
    let scores = squared * w.square().reshape([1, k]) * -0.5;
    softmax_by_hand(&scores)
}
