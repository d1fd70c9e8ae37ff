//! Losses: cross-entropy over integer class targets, and the mean squared error.

use crate::check;
use crate::memory;
use crate::tensor::Tensor;

/// How a per-example loss is reduced, as PyTorch's `reduction=` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The mean over examples.
    Mean,
    /// The sum over examples.
    Sum,
    /// No reduction: one loss per example, shaped like the targets.
    None,
}

impl Tensor {
    /// Cross-entropy between logits `[..., C]` (unnormalised scores) and integer class
    /// targets `[...]` (whole numbers in `0..C`), computed from `log_softmax`, so it is
    /// stable for large logits.
    ///
    /// For `[N, C]` logits and `[N]` targets this is `torch.nn.functional.cross_entropy`.
    /// Extra leading dimensions (`[B, T, C]` with `[B, T]`) are allowed directly, where
    /// PyTorch wants the class dimension second.
    ///
    /// ```
    /// use engine::{Reduction, Tensor};
    /// let logits = Tensor::zeros(&[2, 4]);
    /// let targets = Tensor::from_vec(vec![0.0, 3.0], &[2]);
    /// let loss = logits.cross_entropy(&targets, Reduction::Mean);
    /// assert!((loss.item() - 4f32.ln()).abs() < 1e-6); // uniform over 4 classes
    /// ```
    #[track_caller]
    pub fn cross_entropy(&self, targets: &Tensor, reduction: Reduction) -> Tensor {
        let rank = self.rank();
        check::ensure(
            rank >= 1 && targets.shape() == &self.shape()[..rank - 1],
            "cross_entropy",
            || {
                format!(
                    "logits {:?} need targets of shape {:?} (the logits' shape without the class dimension), found {:?}",
                    self.shape(),
                    &self.shape()[..rank.saturating_sub(1)],
                    targets.shape()
                )
            },
        );
        let classes = self.shape()[rank - 1];
        memory::ensure_can_allocate("cross_entropy", self.shape());
        let picked = check::indices(
            "cross_entropy",
            &targets.to_vec(),
            classes,
            "class count",
        );
        // The loss picks −log_softmax at each target. Picking with `where_cond` rather than
        // multiplying by a one-hot keeps a -inf logit elsewhere in the row from turning
        // into -inf · 0 = NaN.
        let mut onehot = vec![0.0; self.numel()];
        for (row, &c) in picked.iter().enumerate() {
            onehot[row * classes + c] = 1.0;
        }
        let onehot =
            Tensor::from_parts("cross_entropy", onehot, self.shape().to_vec())
                .to(&self.device());
        let picked = onehot.where_cond(&self.log_softmax(-1), &Tensor::scalar(0.0));
        let per_example = -picked.sum_dim(-1);
        per_example.reduce_loss(reduction)
    }

    /// The squared error between `self` (predictions) and `target`, elementwise, then
    /// reduced, like `torch.nn.functional.mse_loss(input, target, reduction=…)`
    /// (`Reduction::Mean`, PyTorch's default, is the mean over every element). The two
    /// shapes must be equal: PyTorch broadcasts them with only a warning, a classic way to
    /// train on the wrong loss without noticing.
    ///
    /// ```
    /// use engine::{Reduction, Tensor};
    /// let predicted = Tensor::from_vec(vec![1.0, 2.0, 4.0], [3]);
    /// let target = Tensor::from_vec(vec![1.0, 3.0, 2.0], [3]);
    /// let mean = predicted.mse_loss(&target, Reduction::Mean).item(); // (0 + 1 + 4) / 3
    /// assert!((mean - 5.0 / 3.0).abs() < 1e-6);
    /// assert_eq!(predicted.mse_loss(&target, Reduction::Sum).item(), 5.0);
    /// ```
    #[track_caller]
    pub fn mse_loss(&self, target: &Tensor, reduction: Reduction) -> Tensor {
        check::ensure(self.shape() == target.shape(), "mse_loss", || {
            format!(
                "the prediction has shape {:?} but the target has {:?}; they must be equal. hint: a missing or extra size-1 dimension (e.g. [N, 1] against [N]) is a common cause: reshape or squeeze one of them",
                self.shape(),
                target.shape()
            )
        });
        // Asked here, so that a refusal names the op the caller wrote, not the `sub` inside.
        memory::ensure_can_allocate("mse_loss", self.shape());
        (self - target).square().reduce_loss(reduction)
    }

    /// Reduces a loss per example (or per element) as `reduction` asks.
    #[track_caller]
    fn reduce_loss(self, reduction: Reduction) -> Tensor {
        match reduction {
            Reduction::Mean => self.mean(),
            Reduction::Sum => self.sum(),
            Reduction::None => self,
        }
    }
}
