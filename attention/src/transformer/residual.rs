//! A residual connection around a sublayer, with its LayerNorm after the sum
//! (post-norm) or before the sublayer (pre-norm).

use engine::Tensor;
use engine::nn::{
    Dropout, DropoutConfig, LayerNorm, LayerNormConfig, Module, StateReader,
};

// ANCHOR: residual
/// One sublayer's wrapping: its LayerNorm, the dropout on its output, and where the
/// norm sits.
#[derive(Debug)]
pub(crate) struct Residual {
    pub(crate) norm: LayerNorm,
    dropout: Dropout,
    norm_first: bool,
}

impl Residual {
    /// Post-norm: `norm(x + dropout(f(x)))`. Pre-norm: `x + dropout(f(norm(x)))`.
    pub(crate) fn apply(
        &self,
        x: &Tensor,
        f: impl FnOnce(&Tensor) -> Tensor,
    ) -> Tensor {
        if self.norm_first {
            x + self.dropout.forward(&f(&self.norm.forward(x)))
        } else {
            self.norm.forward(&(x + self.dropout.forward(&f(x))))
        }
    }
}
// ANCHOR_END: residual

impl Residual {
    /// A fresh wrapping: the norm's weight ones and bias zeros, as in PyTorch.
    pub(crate) fn new(d: usize, eps: f32, dropout: f32, norm_first: bool) -> Self {
        let norm = LayerNorm::new(LayerNormConfig { dim: d, eps });
        Self::from_norm(norm, dropout, norm_first)
    }

    /// A wrapping whose norm is read from `{name}.weight` and `{name}.bias`.
    pub(crate) fn read(
        reader: &mut StateReader<'_>,
        name: &str,
        d: usize,
        eps: f32,
        dropout: f32,
        norm_first: bool,
    ) -> Self {
        let weight = reader.tensor(&format!("{name}.weight"), &[d]);
        let bias = reader.tensor(&format!("{name}.bias"), &[d]);
        let norm = LayerNorm::from_weights(&weight, &bias, eps);
        Self::from_norm(norm, dropout, norm_first)
    }

    fn from_norm(norm: LayerNorm, dropout: f32, norm_first: bool) -> Self {
        Residual {
            norm,
            dropout: Dropout::new(DropoutConfig { p: dropout }),
            norm_first,
        }
    }

    /// Dropout on or off.
    pub(crate) fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}
