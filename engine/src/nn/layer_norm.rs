//! [`LayerNorm`]: normalising each vector over its last dimension.

use super::module::{Module, parameter};
use crate::check;
use crate::tensor::Tensor;

/// Layer normalisation over the last dimension, like `torch.nn.LayerNorm(dim)`:
///
/// `y = (x − mean) / √(var + eps) ⊙ weight + bias`
///
/// where `mean` and `var` are taken over the last dimension and `var` is the biased
/// variance (divided by `dim`, not `dim − 1`), as PyTorch computes it. The layer is written
/// with ordinary engine ops, so its gradient comes from autograd.
///
/// ```
/// use engine::nn::LayerNorm;
/// use engine::Tensor;
///
/// let norm = LayerNorm::new(4);
/// let y = norm.forward(&Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[1, 4]));
/// let mean: f32 = y.to_vec().iter().sum::<f32>() / 4.0;
/// assert!(mean.abs() < 1e-6);
/// ```
#[derive(Debug)]
pub struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    /// PyTorch's default: weight ones, bias zeros, `eps = 1e-5`.
    #[track_caller]
    pub fn new(dim: usize) -> LayerNorm {
        LayerNorm::with_eps(dim, 1e-5)
    }

    /// Like [`LayerNorm::new`] with another `eps`.
    #[track_caller]
    pub fn with_eps(dim: usize, eps: f32) -> LayerNorm {
        check::ensure(dim > 0, "LayerNorm::new", || {
            "dim must be at least 1, found 0".into()
        });
        LayerNorm::from_weights(&Tensor::ones(&[dim]), &Tensor::zeros(&[dim]), eps)
    }

    /// A layer with the given weight and bias (both `[dim]`), made parameters (see
    /// [`parameter`](super::parameter)).
    #[track_caller]
    pub fn from_weights(weight: &Tensor, bias: &Tensor, eps: f32) -> LayerNorm {
        check::rank(
            "LayerNorm::from_weights",
            "the weight ([dim])",
            weight.shape(),
            1,
        );
        check::ensure(
            bias.shape() == weight.shape(),
            "LayerNorm::from_weights",
            || {
                format!(
                    "the bias must have the weight's shape {:?}, found {:?}",
                    weight.shape(),
                    bias.shape()
                )
            },
        );
        check::ensure(
            eps >= 0.0 && eps.is_finite(),
            "LayerNorm::from_weights",
            || format!("eps must be finite and ≥ 0, found {eps}"),
        );
        LayerNorm {
            weight: parameter(weight),
            bias: parameter(bias),
            eps,
        }
    }

    /// Normalises `x` of shape `[..., dim]` over its last dimension.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let dim = self.dim();
        check::ensure(
            x.rank() >= 1 && x.shape()[x.rank() - 1] == dim,
            "LayerNorm::forward",
            || {
                format!(
                    "the input's last dimension must be {dim} (the normalised size), found input shape {:?}",
                    x.shape()
                )
            },
        );
        let centred = x - x.mean_dim(-1, true);
        let var = centred.square().mean_dim(-1, true);
        let normalised = &centred / (var + self.eps).sqrt();
        normalised * &self.weight + &self.bias
    }

    /// The scale, `[dim]`.
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The shift, `[dim]`.
    pub fn bias(&self) -> &Tensor {
        &self.bias
    }

    /// The constant added to the variance before the square root.
    pub fn eps(&self) -> f32 {
        self.eps
    }

    /// The size of the normalised (last) dimension.
    pub fn dim(&self) -> usize {
        self.weight.shape()[0]
    }
}

impl Module for LayerNorm {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![
            ("weight".to_string(), self.weight.clone()),
            ("bias".to_string(), self.bias.clone()),
        ]
    }
}
