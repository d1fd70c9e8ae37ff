//! `softmax` and `log_softmax`, each one op with its own derivative (not a chain of `exp`,
//! `sum` and `div`), so it is both numerically stable and cheap to differentiate.

use crate::cpu::reduce;
use crate::op::Op;
use crate::shape::{Dim, split_at_dim};
use crate::tensor::Tensor;

impl Tensor {
    /// `exp(xᵢ) / Σⱼ exp(xⱼ)` along `dim`, computed as `exp(xᵢ - max)` so large scores do
    /// not overflow.
    ///
    /// ```
    /// use engine::Tensor;
    /// let p = Tensor::from_vec(vec![1000.0, 1000.0], &[2]).softmax(-1);
    /// assert_eq!(p.to_vec(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn softmax(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("softmax", self.rank());
        let data = reduce::softmax_dim(
            self.buffer().as_slice(),
            split_at_dim(self.shape(), d),
            false,
        );
        Tensor::from_op(data, self.shape().to_vec(), Op::Softmax(self.clone(), d))
    }

    /// `log(softmax(x))` along `dim`, computed directly as `x - max - log Σ exp(x - max)`.
    #[track_caller]
    pub fn log_softmax(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("log_softmax", self.rank());
        let data = reduce::softmax_dim(
            self.buffer().as_slice(),
            split_at_dim(self.shape(), d),
            true,
        );
        Tensor::from_op(data, self.shape().to_vec(), Op::LogSoftmax(self.clone(), d))
    }
}
