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
/// use engine::nn::{LayerNorm, LayerNormConfig};
/// use engine::Tensor;
///
/// let norm = LayerNorm::new(LayerNormConfig { dim: 4, ..Default::default() });
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

/// The settings of a [`LayerNorm`], as in `torch.nn.LayerNorm(dim, eps)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerNormConfig {
    /// The size of the normalised (last) dimension (no default: must be set).
    pub dim: usize,
    /// Added to the variance before the square root (default `1e-5`, as in PyTorch).
    pub eps: f32,
}

impl Default for LayerNormConfig {
    fn default() -> Self {
        LayerNormConfig { dim: 0, eps: 1e-5 }
    }
}

impl LayerNorm {
    /// PyTorch's initialisation: weight ones, bias zeros.
    #[track_caller]
    pub fn new(config: LayerNormConfig) -> LayerNorm {
        check::positive("LayerNorm::new", "dim", config.dim);
        LayerNorm::from_weights(
            &Tensor::ones([config.dim]),
            &Tensor::zeros([config.dim]),
            config.eps,
        )
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
        let centred = x - x.mean_dim_keepdim(-1);
        let var = centred.square().mean_dim_keepdim(-1);
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
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![
            ("weight".to_string(), self.weight.clone()),
            ("bias".to_string(), self.bias.clone()),
        ]
    }
}
