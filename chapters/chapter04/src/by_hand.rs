//! Masked softmax written from scratch with engine ops: d2l's `sequence_mask` and
//! `masked_softmax`, then a softmax that leaves hidden keys out without a sentinel
//! value.

use engine::Tensor;

// ANCHOR: sequence_keep
/// Which positions of each row are real: `keep[i, k] = 1` when `k < valid_len[i]`,
/// else 0.
///
/// | argument | shape |
/// |---|---|
/// | `valid_len` | `[N]`, whole numbers ≥ 0 |
/// | result | `[N, maxlen]` |
///
/// One comparison, broadcast: the positions as a row against the lengths as a column.
pub fn sequence_keep(valid_len: &Tensor, maxlen: usize) -> Tensor {
    // [1, K]: the positions 0, 1, …, K − 1
    let positions = Tensor::arange(maxlen).reshape([1, maxlen]);
    let lens = valid_len.reshape([-1, 1]); // [N, 1]
    positions.lt(&lens) //                    [N, K]
}
// ANCHOR_END: sequence_keep

// ANCHOR: sequence_mask
/// d2l's `sequence_mask`: the entries of `x: [N, K]` at positions `k ≥ valid_len[i]`
/// replaced by `value`; `valid_len: [N]`. Returns a new tensor (d2l writes into `x`).
pub fn sequence_mask(x: &Tensor, valid_len: &Tensor, value: f32) -> Tensor {
    let keep = sequence_keep(valid_len, x.size(1)); // [N, K]
    let hidden = keep.eq_mask(&Tensor::scalar(0.0)); // d2l's `~mask`
    x.masked_fill(&hidden, value)
}
// ANCHOR_END: sequence_mask

// ANCHOR: lens_per_row
/// One valid length per row of the scores flattened to `[B·Q, K]`: lengths `[B]` (one
/// per example) are repeated for each of the `queries` rows of their example; lengths
/// `[B, Q]` (one per query) are already one per row and are only flattened.
///
/// # Panics
/// When `valid_lens` is neither 1-D nor 2-D.
#[track_caller]
pub fn lens_per_row(valid_lens: &Tensor, queries: usize) -> Tensor {
    match valid_lens.rank() {
        // [B] → [B·Q]: [2, 3] → [2, 2, 3, 3]
        1 => valid_lens.repeat_interleave(queries, 0),
        // [B, Q] → [B·Q]
        2 => valid_lens.reshape([-1]),
        _ => panic!(
            "masked_softmax_by_hand: valid lengths must be [B] or [B, Q], found {:?}",
            valid_lens.shape()
        ),
    }
}
// ANCHOR_END: lens_per_row

// ANCHOR: masked_softmax_by_hand
/// d2l's `masked_softmax`, with the fill value as an argument: softmax over the last
/// dimension of `x: [B, Q, K]`, where the keys at or beyond each row's valid length
/// are first overwritten with `fill`. d2l uses `fill = -1e6`; `None` means no mask.
///
/// # Panics
/// When `x` is not 3-D, or `valid_lens` is neither `[B]` nor `[B, Q]`.
#[track_caller]
pub fn masked_softmax_by_hand(
    x: &Tensor,
    valid_lens: Option<&Tensor>,
    fill: f32,
) -> Tensor {
    let Some(valid_lens) = valid_lens else {
        return x.softmax(-1);
    };
    assert_eq!(x.rank(), 3, "masked_softmax_by_hand: x must be [B, Q, K]");
    let (queries, keys) = (x.size(1), x.size(2));
    let lens = lens_per_row(valid_lens, queries); //        [B·Q]
    let rows = x.reshape((-1, keys)); //                     [B·Q, K]
    let filled = sequence_mask(&rows, &lens, fill); //      [B·Q, K]
    filled.reshape(x.shape()).softmax(-1) //                [B, Q, K]
}
// ANCHOR_END: masked_softmax_by_hand

// ANCHOR: softmax_over_visible
/// Softmax over the visible keys only, with no sentinel value: `keep` (0/1,
/// broadcasting to `scores: [..., Q, K]`) says which keys take part. Hidden keys are
/// left out of the maximum, the exponentials and the sum, so their weight is exactly
/// 0 whatever the real scores are, and a row with no visible key gets weights 0 (not
/// 0/0) and gradients 0.
pub fn softmax_over_visible(scores: &Tensor, keep: &Tensor) -> Tensor {
    let neg_inf = Tensor::scalar(f32::NEG_INFINITY);
    let zero = Tensor::scalar(0.0);
    let keep = keep.broadcast_to(scores.shape());
    // 1. The largest *visible* score of each row. Shifting a row does not change its
    //    softmax, so the shift is a constant (detached). A row with nothing visible
    //    has maximum -inf; it is shifted by 0 instead, to stay finite.
    let row_max = keep
        .where_cond(scores, &neg_inf)
        .detach()
        .max_dim_keepdim(-1);
    let shift = row_max.gt(&neg_inf).where_cond(&row_max, &zero);
    // 2. Hidden keys become -inf *before* exp, so they contribute exactly 0, and no
    //    gradient reaches them.
    let exps = keep.where_cond(&(scores - &shift), &neg_inf).exp();
    // 3. Divide by the row sums, or by 1 in a row with nothing visible (0/1 = 0, not
    //    0/0).
    let sums = exps.sum_dim_keepdim(-1);
    &exps / &sums.gt(&zero).where_cond(&sums, &Tensor::scalar(1.0))
}
// ANCHOR_END: softmax_over_visible
