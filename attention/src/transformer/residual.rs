//! A residual connection around a sublayer, with its LayerNorm after the sum
//! (post-norm) or before the sublayer (pre-norm).

use engine::Tensor;
use engine::nn::{
    Dropout, DropoutConfig, LayerNorm, LayerNormConfig, LoadError, Module, StateDict,
    StateReader,
};

use super::TransformerLayerConfig;

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
    /// A fresh wrapping for a layer of config `c`: the norm's weight ones and bias
    /// zeros, as in PyTorch.
    pub(crate) fn new(c: &TransformerLayerConfig) -> Self {
        let norm = LayerNorm::new(LayerNormConfig {
            dim: c.num_hiddens,
            eps: c.layer_norm_eps,
        });
        Self::from_norm(norm, c)
    }

    /// A wrapping whose norm is read from `{name}.weight` and `{name}.bias`.
    pub(crate) fn read(
        reader: &mut StateReader<'_>,
        name: &str,
        c: &TransformerLayerConfig,
    ) -> Self {
        let weight = reader.tensor(&format!("{name}.weight"), &[c.num_hiddens]);
        let bias = reader.tensor(&format!("{name}.bias"), &[c.num_hiddens]);
        Self::from_norm(LayerNorm::from_weights(&weight, &bias, c.layer_norm_eps), c)
    }

    fn from_norm(norm: LayerNorm, c: &TransformerLayerConfig) -> Self {
        Residual {
            norm,
            dropout: Dropout::new(DropoutConfig { p: c.dropout }),
            norm_first: c.norm_first,
        }
    }

    /// Dropout on or off.
    pub(crate) fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}

/// A layer read from `state` by `read`, after its config is checked: every problem
/// (missing, unexpected, of another shape) reported at once. What each layer's
/// `from_state_dict` does.
#[track_caller]
pub(crate) fn from_state<L>(
    module: &str,
    config: TransformerLayerConfig,
    state: &StateDict,
    read: impl FnOnce(&mut StateReader<'_>, TransformerLayerConfig) -> L,
) -> Result<L, LoadError> {
    config.check(module);
    let mut reader = StateReader::new(state);
    let layer = read(&mut reader, config);
    reader.finish()?;
    Ok(layer)
}
