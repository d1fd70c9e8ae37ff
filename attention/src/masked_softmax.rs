//! Softmax over the keys, with masked keys taking no part, under an explicit fill policy.

use engine::Tensor;

use crate::mask::Mask;

/// What masked scores become before the softmax. For a row with at least one visible key,
/// all three give the same weights as long as the fill is far below the real scores
/// (`exp(fill − max)` underflows to exactly 0 in `f32`, as `exp(-1e6 − max)` does for any
/// ordinary score). They differ on a query that may attend to no key at all (a fully
/// masked row), and when real scores are themselves near the fill value (then only `Safe`
/// still excludes the masked keys).
///
/// | policy | masked score | a fully masked row gives |
/// |---|---|---|
/// | `Safe` (default) | left out of the max, the exponentials and the sum (no sentinel value) | all-zero weights, zero gradients |
/// | `D2l` | `-1e6` (d2l's `masked_softmax`) | uniform weights over *all* keys |
/// | `Constant(c)` | `c` (the first article uses `-1e9`) | uniform weights over all keys |
///
/// None of them produces NaN; a `Constant` must be finite. (Filling with `-inf`, as some
/// code does, gives `0/0 = NaN` on a fully masked row; PyTorch's `_safe_softmax` exists to
/// avoid exactly that.)
///
/// | used with | shape |
/// |---|---|
/// | scores | `[..., Q, K]` |
/// | weights | `[..., Q, K]` |
///
/// ```
/// use attention::{masked_softmax, Fill, Mask};
/// use engine::Tensor;
///
/// // One query that may see no key at all.
/// let nothing = Mask::valid_lens(&Tensor::from_vec(vec![0.0], [1]));
/// let scores = Tensor::from_vec(vec![1.0, 2.0], &[1, 1, 2]);
/// assert_eq!(masked_softmax(&scores, &nothing, Fill::Safe).to_vec(), vec![0.0, 0.0]);
/// assert_eq!(masked_softmax(&scores, &nothing, Fill::D2l).to_vec(), vec![0.5, 0.5]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Fill {
    /// Masked keys get exactly zero weight; a fully masked row is all zeros.
    #[default]
    Safe,
    /// d2l's convention: masked scores are replaced by `-1e6`.
    D2l,
    /// Masked scores are replaced by the given value.
    Constant(f32),
}

/// The value d2l writes over masked scores.
pub const D2L_FILL: f32 = -1e6;

/// Softmax of `scores` (`[..., Q, K]`) over the last dimension, keys outside `mask` taking
/// no part according to `fill`.
///
/// | argument | shape |
/// |---|---|
/// | `scores` | `[..., Q, K]` |
/// | `mask` | see [`Mask`] |
/// | result | `[..., Q, K]`, each row summing to 1 (or to 0 for a fully masked row under `Safe`) |
///
/// ```
/// use attention::{masked_softmax, Fill, Mask};
/// use engine::Tensor;
///
/// let scores = Tensor::zeros(&[2, 1, 3]);
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 0.0], [2]));
/// let safe = masked_softmax(&scores, &lens, Fill::Safe).to_vec();
/// assert_eq!(safe, vec![0.5, 0.5, 0.0, 0.0, 0.0, 0.0]);
/// let d2l = masked_softmax(&scores, &lens, Fill::D2l).to_vec();
/// assert_eq!(&d2l[3..], &[1.0 / 3.0; 3]); // length 0: uniform, as in d2l
/// ```
#[track_caller]
pub fn masked_softmax(scores: &Tensor, mask: &Mask, fill: Fill) -> Tensor {
    masked_softmax_in("masked_softmax", scores, mask, fill)
}

/// [`masked_softmax`] with errors reported under the name of the calling module.
#[track_caller]
pub(crate) fn masked_softmax_in(
    module: &str,
    scores: &Tensor,
    mask: &Mask,
    fill: Fill,
) -> Tensor {
    crate::check::fill(module, fill);
    let Some(keep) = mask.keep_for(module, scores.shape()) else {
        return scores.softmax(-1);
    };
    let keep = keep.to(&scores.device());
    let masked = keep.eq_mask(&Tensor::scalar(0.0));
    match fill {
        Fill::D2l => scores.masked_fill(&masked, D2L_FILL).softmax(-1),
        Fill::Constant(value) => scores.masked_fill(&masked, value).softmax(-1),
        // The engine's definition of the safe softmax, in its own ops (see there).
        Fill::Safe => scores.safe_softmax_composed(&keep),
    }
}
