//! [`Activation`]: the function additive attention applies to `q + k` before the
//! product with `w`.

use crate::tensor::Tensor;

/// The activation of additive attention's energies, `s = Σₕ w[h] · f(q[h] + k[h])`.
///
/// Bahdanau et al. use `tanh`, and so does every library's default. `Relu` is the
/// alternative a debugging guide suggests when the energies saturate: `tanh` flattens
/// beyond |x| ≈ 3, where its slope `1 − tanh²` all but vanishes, while ReLU's slope is 1
/// wherever it is positive (and 0 elsewhere, where no gradient flows at all).
///
/// ```
/// use engine::{Activation, Tensor};
/// let x = Tensor::from_vec(vec![-2.0, 0.5], [2]);
/// assert_eq!(Activation::Relu.apply(&x).to_vec(), vec![0.0, 0.5]);
/// assert_eq!(Activation::Tanh.apply(&x).to_vec(), x.tanh().to_vec());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `tanh(x)`, slope `1 − tanh²(x)`: bounded, and flat where |x| is large.
    #[default]
    Tanh,
    /// `max(x, 0)`, slope 1 where `x > 0` and 0 elsewhere: unbounded above.
    Relu,
}

impl Activation {
    /// The function applied element-wise, as the engine's own op
    /// ([`Tensor::tanh`] or [`Tensor::relu`]), so gradients flow through it.
    pub fn apply(self, x: &Tensor) -> Tensor {
        match self {
            Activation::Tanh => x.tanh(),
            Activation::Relu => x.relu(),
        }
    }

    /// Its name, as PyTorch spells the function: `"tanh"` or `"relu"`.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Tanh => "tanh",
            Activation::Relu => "relu",
        }
    }
}

impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
