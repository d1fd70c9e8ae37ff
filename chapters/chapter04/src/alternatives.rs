//! A second solution to each chapter 4 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::Mask;
use engine::Tensor;

/// Exercise 1, by comparing positions: a column of query positions against a row of key
/// positions, `|i − j| ≤ window` as `abs` and `le`, instead of the triangles of a matrix
/// of ones.
pub fn sliding_window_keep(len: usize, window: usize) -> Tensor {
    let positions = Tensor::arange(len);
    let distance = (positions.unsqueeze(1) - positions.unsqueeze(0)).abs(); // [len, len]
    distance.le(&Tensor::scalar(window as f32))
}

/// Exercise 2, by `where_cond`: 0 where the id is `pad_id`, 1 elsewhere.
pub fn key_padding_from_ids(ids: &Tensor, pad_id: f32) -> Tensor {
    let is_pad = ids.eq_mask(&Tensor::scalar(pad_id));
    is_pad.where_cond(&Tensor::scalar(0.0), &Tensor::scalar(1.0))
}

/// Exercise 3, as one keep tensor `[B, Q, Q]` written element by element: key `j` is
/// seen by query `q` of example `b` when it is in the prefix or not after `q`, and
/// before `lens[b]`.
pub fn prefix_lm_mask(prefix_len: usize, queries: usize, lens: &Tensor) -> Mask {
    let lens = lens.to_vec();
    let mut keep = Vec::with_capacity(lens.len() * queries * queries);
    for &len in &lens {
        for q in 0..queries {
            for j in 0..queries {
                let visible = (j < prefix_len || j <= q) && (j as f32) < len;
                keep.push(if visible { 1.0 } else { 0.0 });
            }
        }
    }
    Mask::keep(&Tensor::from_vec(keep, [lens.len(), queries, queries]))
}
