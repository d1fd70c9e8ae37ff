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
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data = crate::gpu::kernels::softmax(
                &x,
                split_at_dim(self.shape(), d),
                false,
            );
            let op = Op::Softmax(self.clone(), d);
            return Tensor::from_gpu(
                "softmax",
                data,
                self.shape().to_vec(),
                Some(op),
            );
        }
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
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data =
                crate::gpu::kernels::softmax(&x, split_at_dim(self.shape(), d), true);
            let op = Op::LogSoftmax(self.clone(), d);
            return Tensor::from_gpu(
                "log_softmax",
                data,
                self.shape().to_vec(),
                Some(op),
            );
        }
        let data = reduce::softmax_dim(
            self.buffer().as_slice(),
            split_at_dim(self.shape(), d),
            true,
        );
        Tensor::from_op(data, self.shape().to_vec(), Op::LogSoftmax(self.clone(), d))
    }

    /// The gradient of `softmax(dim)` with respect to its input, from its output `self`
    /// and the gradient `g` of the loss with respect to it: `self ⊙ (g − Σ g ⊙ self)`.
    /// Over the last dimension one fused kernel computes it row by row (the same bits as
    /// the composed formula, used for other dimensions). Records nothing.
    pub(crate) fn softmax_backward(&self, g: &Tensor, dim: usize) -> Tensor {
        if dim + 1 == self.rank()
            && g.shape() == self.shape()
            && self.device().is_cpu()
        {
            let n = self.shape()[dim];
            let data = reduce::softmax_backward_rows(
                self.buffer().as_slice(),
                g.buffer().as_slice(),
                n,
            );
            return Tensor::from_parts("softmax", data, self.shape().to_vec());
        }
        self * (g - (g * self).sum_dim_keepdim(dim))
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;
    use crate::random::rng_from_seed;

    #[test]
    fn the_fused_gradient_has_the_bits_of_the_formula() {
        let x = Tensor::normal_with([3, 4, 7], 0.0, 2.0, &mut rng_from_seed(1));
        let g = Tensor::normal_with([3, 4, 7], 0.0, 1.0, &mut rng_from_seed(2));
        for dim in 0..3 {
            let s = x.softmax(dim);
            let formula = &s * &(&g - &(&g * &s).sum_dim_keepdim(dim));
            assert_eq!(
                s.softmax_backward(&g, dim).to_vec(),
                formula.to_vec(),
                "dim {dim}"
            );
        }
        // An empty last dimension has an empty gradient.
        let empty = Tensor::zeros([2, 0]);
        assert_eq!(empty.softmax_backward(&empty, 1).shape(), &[2, 0]);
    }
}
