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
/// use engine::nn::{Dropout, Module};
/// use engine::Tensor;
///
/// let mut drop = Dropout::new(0.5);
/// drop.eval();
/// let x = Tensor::ones(&[4]);
/// assert_eq!(drop.forward(&x).to_vec(), vec![1.0; 4]);
/// ```
#[derive(Debug)]
pub struct Dropout {
    p: f32,
    training: bool,
}

impl Dropout {
    /// A dropout layer with drop probability `p` in `[0, 1]`, in training mode.
    #[track_caller]
    pub fn new(p: f32) -> Dropout {
        check::ensure((0.0..=1.0).contains(&p), "Dropout::new", || {
            format!("the probability p must be in [0, 1], found {p}")
        });
        Dropout { p, training: true }
    }

    /// Drops and rescales in training mode (drawing from this thread's seeded generator);
    /// returns `x` itself in evaluation mode.
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
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
}
