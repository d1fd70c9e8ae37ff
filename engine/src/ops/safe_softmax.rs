//! `safe_softmax`: the softmax of each row over the entries a keep mask and causal order
//! leave visible, masked entries getting exactly 0 and a row with nothing visible all
//! zeros, without a sentinel value (PyTorch's `_safe_softmax` gives the same zeros).
//!
//! Its definition is a composed formula, written out in [`Tensor::safe_softmax_composed`]
//! and held to bit for bit by the tests. On the CPU one fused kernel computes it, forward
//! and backward (`cpu/safe_softmax.rs`), reading the causal order from an offset instead of
//! a `[Q, K]` mask and the keep mask through broadcasting: no tensor of the scores' size is
//! made but the weights themselves. On a GPU the composed formula runs.

use crate::check;
use crate::cpu::broadcast_strides;
use crate::cpu::safe_softmax::{self, Saved, Visibility};
use crate::memory;
use crate::op::Op;
use crate::tensor::Tensor;

/// Which entries of each row [`Tensor::safe_softmax`] sees: an entry is visible when the
/// keep mask (if any) holds 1 there and causal order (if asked for) allows it.
///
/// | field | meaning |
/// |---|---|
/// | `keep` | a 0/1 mask that broadcasts to the scores `[..., Q, K]`: `[Q, K]`, `[B, 1, 1, K]`, ... |
/// | `causal_offset` | query `i` (along the second-to-last dimension) sees keys `j ≤ i + offset` |
#[derive(Clone, Debug, Default)]
pub struct SafeSoftmaxMask {
    /// 1 where an entry may be seen, 0 where it is masked; broadcast to the scores.
    pub keep: Option<Tensor>,
    /// Causal order with the first query at key position `offset` (`K − Q` aligns the last
    /// query with the last key).
    pub causal_offset: Option<usize>,
}

/// What the derivative of `safe_softmax` reads: the kernel's per-row values and the masks.
pub(crate) struct SafeSoftmaxSaved {
    kernel: Saved,
    masks: Masks,
}

/// The masks as the kernel reads them.
struct Masks {
    /// The keep mask's values on the CPU, the offset of each row in them, and the step
    /// along a row (1, or 0 for one repeated value).
    keep: Option<(Vec<f32>, Vec<usize>, usize)>,
    /// Queries per leading index and the causal offset.
    causal: Option<(usize, usize)>,
}

impl Masks {
    fn visibility(&self) -> Visibility<'_> {
        Visibility {
            keep: self.keep.as_ref().map(|(values, rows, step)| {
                (values.as_slice(), rows.as_slice(), *step)
            }),
            causal: self.causal,
        }
    }
}

impl Tensor {
    /// The softmax of each row (the last dimension) of `self`, the scores `[..., Q, K]`,
    /// over the entries `mask` leaves visible: a masked entry gets exactly 0 and takes no
    /// part in the maximum or the sum, so the result does not depend on what its score is
    /// (even `f32::MIN`, `-inf` or NaN); a row with nothing visible, or with only `-inf`
    /// visible, gets zeros and zero gradients.
    ///
    /// The result, forward and backward, is bit for bit that of the composed formula
    /// [`Tensor::safe_softmax_composed`] with the causal order written out as a `tril`
    /// mask; on the CPU it is computed without building that mask or any other tensor the
    /// size of the scores.
    ///
    /// | argument | shape |
    /// |---|---|
    /// | `self` | `[..., Q, K]` (`[K]` without causal order) |
    /// | `mask.keep` | broadcasts to `self` |
    /// | result | the shape of `self` |
    ///
    /// ```
    /// use engine::{SafeSoftmaxMask, Tensor};
    /// let scores = Tensor::from_vec(vec![1.0, 5.0, 2.0, 2.0], [2, 2]);
    /// // Causal order: query 0 sees key 0 only, query 1 both keys.
    /// let mask = SafeSoftmaxMask { causal_offset: Some(0), ..Default::default() };
    /// assert_eq!(scores.safe_softmax(&mask).to_vec(), vec![1.0, 0.0, 0.5, 0.5]);
    /// // Nothing visible: zeros, not NaN.
    /// let none = SafeSoftmaxMask { keep: Some(Tensor::zeros([2, 1])), ..Default::default() };
    /// assert_eq!(scores.safe_softmax(&none).to_vec(), vec![0.0; 4]);
    /// ```
    #[track_caller]
    pub fn safe_softmax(&self, mask: &SafeSoftmaxMask) -> Tensor {
        let op = "safe_softmax";
        let rank = self.rank();
        check::ensure(rank >= 1, op, || {
            "the scores must have at least one dimension, the keys; found a scalar"
                .into()
        });
        check::ensure(mask.causal_offset.is_none() || rank >= 2, op, || {
            format!(
                "causal order needs scores [..., Q, K], found {:?}",
                self.shape()
            )
        });
        if let Some(keep) = &mask.keep {
            let both = check::broadcast(
                "safe_softmax (keep mask with scores)",
                keep.shape(),
                self.shape(),
            );
            check::ensure(both == self.shape(), op, || {
                format!(
                    "the keep mask {:?} must broadcast to the scores {:?}, not widen them to {both:?}",
                    keep.shape(),
                    self.shape()
                )
            });
        }
        let n = self.shape()[rank - 1];
        if n == 0 || !self.device().is_cpu() {
            let keep = self.composed_keep(mask);
            let keep = keep.to(&self.device());
            return self.safe_softmax_composed(&keep);
        }
        let keep = mask.keep.as_ref().map(|keep| {
            let values = keep.to(&crate::Device::Cpu).to_vec();
            check::zero_one(op, "the keep mask", &values);
            let strides = broadcast_strides(keep.shape(), self.shape());
            let rows = row_offsets(&self.shape()[..rank - 1], &strides[..rank - 1]);
            (values, rows, strides[rank - 1])
        });
        let causal = mask
            .causal_offset
            .map(|offset| (self.shape()[rank - 2], offset));
        memory::ensure_can_allocate(op, self.shape());
        let masks = Masks { keep, causal };
        let (out, kernel) =
            safe_softmax::forward(self.buffer().as_slice(), n, masks.visibility());
        let saved = SafeSoftmaxSaved { kernel, masks };
        Tensor::from_op(
            out,
            self.shape().to_vec(),
            Op::SafeSoftmax {
                x: self.clone(),
                saved: Box::new(saved),
            },
        )
    }

    /// The definition of [`Tensor::safe_softmax`] under a 0/1 `keep` tensor of the scores'
    /// shape (causal order included, as a `tril` mask), in the engine's own ops:
    ///
    /// ```text
    /// row_max = max over the row of (keep ? x : f32::MIN), as a constant
    /// shift   = row_max where something is visible and row_max > -inf, else 0
    /// exps    = exp(keep ? x − shift : 0) · keep
    /// sums    = Σ exps over the row
    /// weights = exps / (sums == 0 ? 1 : sums)
    /// ```
    ///
    /// A visible NaN makes its row's sum NaN, and so every weight of the row NaN, as
    /// `softmax` does.
    ///
    /// Masked entries become 0 before `exp` and their exponentials are multiplied by 0, so
    /// they contribute exactly 0, forward and backward (selecting only after `exp` would
    /// let an overflowing masked score send `0 · inf = NaN` into the gradient). No step makes
    /// an infinity of its own, so anomaly mode passes through it.
    #[track_caller]
    pub fn safe_softmax_composed(&self, keep: &Tensor) -> Tensor {
        // No key at all (an empty sequence): the weights are empty too, and there is no
        // maximum to take.
        if self.size(-1) == 0 {
            return self.softmax(-1);
        }
        let lowest = Tensor::scalar(f32::MIN);
        let zero = Tensor::scalar(0.0);
        let keep = keep.broadcast_to(self.shape());
        let row_max = keep.where_cond(self, &lowest).detach().max_dim_keepdim(-1);
        let visible = keep.max_dim_keepdim(-1).gt(&zero);
        let shift = visible.where_cond(&row_max, &zero);
        let shift = shift
            .gt(&Tensor::scalar(f32::NEG_INFINITY))
            .where_cond(&shift, &zero);
        let exps = keep.where_cond(&(self - &shift), &zero).exp() * &keep;
        let sums = exps.sum_dim_keepdim(-1);
        let empty = sums.eq_mask(&zero);
        &exps / &empty.where_cond(&Tensor::scalar(1.0), &sums)
    }

    /// `mask` as one 0/1 tensor that broadcasts to `self` (ones when nothing is masked),
    /// on the CPU: the keep mask times the causal `tril`.
    fn composed_keep(&self, mask: &SafeSoftmaxMask) -> Tensor {
        let rank = self.rank();
        let keep = match &mask.keep {
            Some(keep) => keep.to(&crate::Device::Cpu),
            None => Tensor::ones(vec![1; rank]),
        };
        match mask.causal_offset {
            None => keep,
            Some(offset) => {
                let (q, k) = (self.shape()[rank - 2], self.shape()[rank - 1]);
                let causal = Tensor::ones([q, k])
                    .tril(i64::try_from(offset).unwrap_or(i64::MAX));
                &keep * &causal
            }
        }
    }

    /// The gradient of `safe_softmax` with respect to its scores `self`, from its output
    /// `out` and the gradient `g` of the loss with respect to it. Records nothing.
    pub(crate) fn safe_softmax_grad(
        &self,
        out: &Tensor,
        g: &Tensor,
        saved: &SafeSoftmaxSaved,
    ) -> Tensor {
        let n = self.shape()[self.rank() - 1];
        debug_assert_eq!(g.shape(), self.shape());
        let dx = safe_softmax::backward(
            self.buffer().as_slice(),
            out.buffer().as_slice(),
            g.buffer().as_slice(),
            n,
            &saved.kernel,
            saved.masks.visibility(),
        );
        Tensor::from_parts("safe_softmax", dx, self.shape().to_vec())
    }
}

/// The offset in a broadcast operand of the first element of each row of `leading` (the
/// scores' dimensions but the last), given the operand's strides over them.
fn row_offsets(leading: &[usize], strides: &[usize]) -> Vec<usize> {
    let rows: usize = leading.iter().product();
    let mut offsets = Vec::with_capacity(rows);
    let mut index = vec![0; leading.len()];
    let mut offset = 0;
    for _ in 0..rows {
        offsets.push(offset);
        // The next row: the last index moves first, carrying into earlier ones.
        for d in (0..leading.len()).rev() {
            index[d] += 1;
            offset += strides[d];
            if index[d] < leading[d] {
                break;
            }
            offset -= strides[d] * index[d];
            index[d] = 0;
        }
    }
    offsets
}
