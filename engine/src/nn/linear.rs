//! [`Linear`]: `y = x Wᵀ + b`.

use super::init::{self, FanMode};
use super::module::{Module, parameter};
use crate::check;
use crate::tensor::Tensor;

/// A fully connected layer, `y = x Wᵀ + b`, like `torch.nn.Linear`.
///
/// The weight is stored `[out_features, in_features]`, as in PyTorch, so a row of `W` is
/// the weights of one output unit and PyTorch weights can be copied in unchanged.
/// Parameters: `weight`, and `bias` when [`LinearConfig::bias`] is true.
///
/// ```
/// use engine::nn::Linear;
/// use engine::Tensor;
///
/// // Given weights (here to show the arithmetic; Linear::new draws them at random).
/// let w = Tensor::from_vec(vec![1.0, 0.0, 0.0, 2.0, 1.0, 1.0], &[3, 2]);
/// let layer = Linear::from_weights(&w, Some(&Tensor::from_vec(vec![0.0, 0.0, 10.0], &[3])));
/// let y = layer.forward(&Tensor::from_vec(vec![1.0, 2.0], &[1, 2]));
/// assert_eq!(y.to_vec(), vec![1.0, 4.0, 13.0]);
/// ```
#[derive(Debug)]
pub struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
}

/// The settings of a [`Linear`] layer, named as in `torch.nn.Linear`.
///
/// ```
/// use engine::nn::{Linear, LinearConfig};
/// let layer = Linear::new(LinearConfig { in_features: 4, out_features: 2, bias: false });
/// assert!(layer.bias().is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearConfig {
    /// The size of each input's last dimension (no default: must be set).
    pub in_features: usize,
    /// The size of each output's last dimension (no default: must be set).
    pub out_features: usize,
    /// Whether to add a learned bias (default `true`, as in PyTorch).
    pub bias: bool,
}

impl Default for LinearConfig {
    fn default() -> Self {
        LinearConfig {
            in_features: 0,
            out_features: 0,
            bias: true,
        }
    }
}

impl Linear {
    /// A layer initialised as PyTorch does: the weight with `kaiming_uniform(a = √5)`, which
    /// is `U(-1/√in, 1/√in)`, and the bias (when `config.bias` is true) from the same range.
    #[track_caller]
    pub fn new(config: LinearConfig) -> Linear {
        let LinearConfig {
            in_features,
            out_features,
            bias,
        } = config;
        check::positive("Linear::new", "in_features", in_features);
        check::positive("Linear::new", "out_features", out_features);
        let weight = init::kaiming_uniform(
            [out_features, in_features],
            5f32.sqrt(),
            FanMode::FanIn,
        );
        let bound = 1.0 / (in_features as f32).sqrt();
        let bias = bias.then(|| init::uniform([out_features], -bound, bound));
        Linear::from_weights(&weight, bias.as_ref())
    }

    /// A layer that uses the given weight `[out, in]` and optional bias `[out]` as its
    /// parameters (see [`parameter`](super::parameter)): a tensor that already requires a
    /// gradient is *shared*, not copied, so the caller's handle sees gradients and updates.
    /// This is how two layers tie one weight; to copy values in, use
    /// [`load_state_dict`](Module::load_state_dict).
    #[track_caller]
    pub fn from_weights(weight: &Tensor, bias: Option<&Tensor>) -> Linear {
        check::rank(
            "Linear::from_weights",
            "the weight ([out_features, in_features])",
            weight.shape(),
            2,
        );
        if let Some(b) = bias {
            check::ensure(
                b.shape() == [weight.shape()[0]],
                "Linear::from_weights",
                || {
                    format!(
                        "the bias must have shape [{}] (out_features) to match the weight {:?}, found {:?}",
                        weight.shape()[0],
                        weight.shape(),
                        b.shape()
                    )
                },
            );
        }
        Linear {
            weight: parameter(weight),
            bias: bias.map(parameter),
        }
    }

    /// Applies the layer to `x` of shape `[..., in_features]`, giving `[..., out_features]`.
    /// Leading dimensions are batch dimensions (a 1-D `x` is a single example).
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        affine("Linear::forward", x, &self.weight, self.bias.as_ref())
    }

    /// The weight, `[out_features, in_features]`.
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The bias, `[out_features]`, if the layer has one.
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }

    /// The size of each input's last dimension.
    pub fn in_features(&self) -> usize {
        self.weight.shape()[1]
    }

    /// The size of each output's last dimension.
    pub fn out_features(&self) -> usize {
        self.weight.shape()[0]
    }
}

impl Module for Linear {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut named = vec![("weight".to_string(), self.weight.clone())];
        if let Some(b) = &self.bias {
            named.push(("bias".to_string(), b.clone()));
        }
        named
    }
}

/// `x Wᵀ + b` for `x: [..., in]`, `weight: [out, in]`: the forward pass of [`Linear`] and
/// of the layers that compute their weight (`WeightNorm`), with `op` naming the caller
/// in a shape error.
#[track_caller]
pub(crate) fn affine(
    op: &str,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> Tensor {
    check::ensure(
        x.rank() >= 1 && x.shape()[x.rank() - 1] == weight.shape()[1],
        op,
        || {
            format!(
                "the input's last dimension must be in_features = {}, found input shape {:?} (weight shape {:?})",
                weight.shape()[1],
                x.shape(),
                weight.shape()
            )
        },
    );
    // x Wᵀ with W read in place: no transposed copy of the weight per call.
    let y = if x.rank() == 1 {
        x.unsqueeze(0).matmul_t(weight).squeeze(0)
    } else {
        x.matmul_t(weight)
    };
    match bias {
        Some(b) => &y + b,
        None => y,
    }
}
