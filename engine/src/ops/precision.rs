//! `to_precision`: values rounded to a half-precision format, as storing them in it would.

use crate::check;
use crate::op::Op;
use crate::precision::Precision;
use crate::tensor::Tensor;

impl Tensor {
    /// Every value rounded to the nearest value of `precision` (ties to even), still an
    /// `f32` tensor: what storing the tensor in f16 or bf16 and reading it back gives
    /// (`x.half().float()` in PyTorch). Values past the format's range become infinite,
    /// tiny ones subnormal or zero (see [`crate::precision`]).
    ///
    /// The gradient is rounded the same way: a tensor stored in half precision receives its
    /// gradient in half precision, so the backward pass sees what PyTorch's
    /// `x.half().float()` gives it (small gradients underflow to zero in f16, which is what
    /// loss scaling is for). With [`Precision::F32`] this is the identity, forward and back.
    ///
    /// There is no GPU kernel yet: on a GPU tensor it stops with a message.
    ///
    /// ```
    /// use engine::Tensor;
    /// use engine::precision::Precision;
    /// let x = Tensor::from_vec(vec![1.0001, -1e9, 1e-8, 70000.0], [4]);
    /// let h = x.to_precision(Precision::F16).to_vec();
    /// assert_eq!(h, vec![1.0, f32::NEG_INFINITY, 0.0, f32::INFINITY]);
    /// ```
    #[track_caller]
    pub fn to_precision(&self, precision: Precision) -> Tensor {
        check::no_gpu_kernel("to_precision", self);
        let data = self
            .to_vec()
            .into_iter()
            .map(|x| precision.round(x))
            .collect();
        Tensor::from_op(
            data,
            self.shape().to_vec(),
            Op::ToPrecision(self.clone(), precision),
        )
    }
}
