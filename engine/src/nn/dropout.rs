//! [`Dropout`]: the dropout op as a layer that knows whether it is training.

use super::module::Module;
use crate::check;
use crate::tensor::Tensor;

/// Inverted dropout as a layer, like `torch.nn.Dropout(p)`: in training mode each element
/// is zeroed with probability `p` and the survivors are scaled by `1 / (1 − p)`; in
/// evaluation mode the input passes through unchanged. A new layer is in training mode,
/// as in PyTorch.
///
/// ```
/// use engine::nn::{Dropout, DropoutConfig, Module};
/// use engine::Tensor;
///
/// let mut drop = Dropout::new(DropoutConfig { p: 0.5 });
/// drop.eval();
/// let x = Tensor::ones(&[4]);
/// assert_eq!(drop.forward(&x).to_vec(), vec![1.0; 4]);
/// ```
#[derive(Debug)]
pub struct Dropout {
    p: f32,
    training: bool,
}

/// The settings of a [`Dropout`] layer, as in `torch.nn.Dropout(p)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropoutConfig {
    /// The probability of zeroing each element, in `[0, 1]` (default 0.5, as in PyTorch).
    pub p: f32,
}

impl Default for DropoutConfig {
    fn default() -> Self {
        DropoutConfig { p: 0.5 }
    }
}

impl Dropout {
    /// A dropout layer, in training mode.
    #[track_caller]
    pub fn new(config: DropoutConfig) -> Dropout {
        let p = config.p;
        check::ensure((0.0..=1.0).contains(&p), "Dropout::new", || {
            format!("the probability p must be in [0, 1], found {p}")
        });
        Dropout { p, training: true }
    }

    /// Drops and rescales in training mode (drawing from this thread's seeded generator);
    /// returns `x` itself in evaluation mode.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.dropout(self.p, self.training)
    }

    /// The drop probability.
    pub fn p(&self) -> f32 {
        self.p
    }

    /// Whether the layer is in training mode.
    pub fn is_training(&self) -> bool {
        self.training
    }
}

impl Module for Dropout {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}
