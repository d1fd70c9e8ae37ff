//! A convolution over the sequence, built from the engine's ops, so that the cost
//! table's third layer can be timed beside self-attention and a GRU (the engine has no
//! convolution op of its own).

use engine::Tensor;
use engine::nn::init;

/// A 1-D convolution of odd width `k` along the sequence, `d` channels in and out,
/// padded so that the output has as many positions as the input: what PyTorch's
/// `nn.Conv1d(d, d, k, padding=k // 2)` computes on `x.transpose(1, 2)`.
///
/// Output position `t` is `b + Σⱼ x[t + j − k/2] · W[j]` over the `k` positions around
/// `t` (zero outside the sequence): `k` products of `[B, n, d]` by `[d, d]`, so `k·n·d²`
/// multiply-adds per example, the table's count.
#[derive(Debug)]
pub struct SequenceConvolution {
    /// `[k, d_in, d_out]`: one `[d, d]` matrix per offset.
    weight: Tensor,
    /// `[d_out]`.
    bias: Tensor,
}

impl SequenceConvolution {
    /// A layer of width `k` (odd) over `d` channels, initialised as `nn.Conv1d` is: weight
    /// and bias uniform in `±1/√(k·d)`.
    #[track_caller]
    pub fn new(k: usize, d: usize) -> SequenceConvolution {
        assert!(
            k % 2 == 1,
            "SequenceConvolution::new: the width k must be odd, found {k}"
        );
        let bound = 1.0 / ((k * d) as f32).sqrt();
        SequenceConvolution {
            weight: init::uniform([k, d, d], -bound, bound),
            bias: init::uniform([d], -bound, bound),
        }
    }

    /// The weight `[k, d_in, d_out]` and the bias `[d_out]`.
    pub fn parameters(&self) -> (&Tensor, &Tensor) {
        (&self.weight, &self.bias)
    }

    /// The convolution of `x: [B, n, d]`, giving `[B, n, d]`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let (k, d) = (self.weight.shape()[0], self.weight.shape()[1]);
        assert!(
            x.rank() == 3 && x.shape()[2] == d,
            "SequenceConvolution::forward: x must be [B, n, {d}], found {:?}",
            x.shape()
        );
        let (batch, n) = (x.shape()[0], x.shape()[1]);
        let pad = Tensor::zeros([batch, k / 2, d]);
        let padded = Tensor::concat(&[&pad, x, &pad], 1);
        // Offset j reads positions t + j − k/2: the padded sequence from j, n long.
        let term = |j| {
            padded
                .narrow(1, j, n)
                .matmul(&self.weight.narrow(0, j, 1).squeeze(0))
        };
        let mut out = &term(0) + &self.bias;
        for j in 1..k {
            out = &out + &term(j);
        }
        out
    }
}
