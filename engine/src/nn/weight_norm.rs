//! [`WeightNorm`]: a [`Linear`] layer whose weight is a length and a direction,
//! `w = g · v / ‖v‖`.

use super::linear::{Linear, affine};
use super::module::{Module, load_named, parameter};
use super::state_dict::{LoadError, StateDict};
use crate::check;
use crate::grad_mode::no_grad;
use crate::tensor::Tensor;

/// PyTorch's name of the length `g`.
const G: &str = "parametrizations.weight.original0";
/// PyTorch's name of the direction `v`.
const V: &str = "parametrizations.weight.original1";

/// A [`Linear`] layer with weight normalisation (Salimans and Kingma, 2016), like
/// `torch.nn.utils.parametrizations.weight_norm(nn.Linear(…), dim=dim)`: the weight is
/// not a parameter but computed on every call as `w = g · v / ‖v‖`, from a direction `v`
/// (`[out, in]`) and a length `g`, so that a gradient step can change the length of each
/// row of `w` without changing its direction, and the other way round.
///
/// `dim` says which norms: `Some(0)` (PyTorch's default) one per output row, `g` of shape
/// `[out, 1]`; `Some(1)` one per input column, `g` of shape `[1, in]`; `None` one for the
/// whole matrix, `g` a 0-dim scalar (PyTorch's `dim=None`).
///
/// Parameters, with PyTorch's names: `parametrizations.weight.original0` (`g`),
/// `parametrizations.weight.original1` (`v`), and `bias` if the layer has one.
/// [`load_state_dict`](Module::load_state_dict) also takes the names of PyTorch's older
/// `torch.nn.utils.weight_norm`, `weight_g` and `weight_v`.
///
/// ```
/// use engine::nn::{Linear, WeightNorm};
/// use engine::Tensor;
///
/// let w = Tensor::from_vec(vec![3.0, 4.0, 0.0, 2.0], [2, 2]);
/// let layer = WeightNorm::new(Linear::from_weights(&w, None), Some(0));
/// // At first g = ‖v‖ row by row, so the weight is the Linear's.
/// assert_eq!(layer.g().to_vec(), vec![5.0, 2.0]);
/// assert_eq!(layer.weight().to_vec(), w.to_vec());
/// ```
#[derive(Debug)]
pub struct WeightNorm {
    g: Tensor,
    v: Tensor,
    bias: Option<Tensor>,
    dim: Option<usize>,
}

impl WeightNorm {
    /// Weight normalisation of `linear`, as PyTorch registers it: `v` is the layer's
    /// weight and `g` starts at its norms, so the layer computes what `linear` did. The
    /// bias is kept. `dim` is `Some(0)`, `Some(1)` or `None` (see [`WeightNorm`]).
    #[track_caller]
    pub fn new(linear: Linear, dim: Option<usize>) -> WeightNorm {
        check::ensure(dim.is_none_or(|d| d < 2), "WeightNorm::new", || {
            format!(
                "dim must be Some(0) (a norm per output row), Some(1) (per input \
                     column) or None (one norm), found {dim:?} for a weight of shape {:?}",
                linear.weight().shape()
            )
        });
        let v = parameter(linear.weight());
        let g = no_grad(|| norms(&v, dim));
        WeightNorm::from_parts(&g, &v, linear.bias(), dim)
    }

    /// A layer that uses the given length `g`, direction `v: [out, in]` and optional bias
    /// `[out]` as its parameters, shared as [`Linear::from_weights`] shares its weight.
    /// `g` must have the shape `dim` gives it: `[out, 1]`, `[1, in]` or `[]`.
    #[track_caller]
    pub fn from_parts(
        g: &Tensor,
        v: &Tensor,
        bias: Option<&Tensor>,
        dim: Option<usize>,
    ) -> WeightNorm {
        let op = "WeightNorm::from_parts";
        check::rank(
            op,
            "the direction v ([out_features, in_features])",
            v.shape(),
            2,
        );
        let (out, inp) = (v.shape()[0], v.shape()[1]);
        let expected: Vec<usize> = match dim {
            Some(0) => vec![out, 1],
            Some(1) => vec![1, inp],
            Some(_) => vec![],
            None => vec![],
        };
        check::ensure(dim.is_none_or(|d| d < 2), op, || {
            format!("dim must be Some(0), Some(1) or None, found {dim:?}")
        });
        check::ensure(g.shape() == expected.as_slice(), op, || {
            format!(
                "the length g must have shape {expected:?} for v {:?} and dim {dim:?}, found {:?}",
                v.shape(),
                g.shape()
            )
        });
        // The bias is checked as Linear checks it.
        let linear = Linear::from_weights(v, bias);
        WeightNorm {
            g: parameter(g),
            v: parameter(linear.weight()),
            bias: linear.bias().map(parameter),
            dim,
        }
    }

    /// The weight the layer applies, `g · v / ‖v‖`, `[out_features, in_features]`:
    /// computed from the parameters on every call, so gradients reach `g` and `v`.
    pub fn weight(&self) -> Tensor {
        &self.g * &(&self.v / &norms(&self.v, self.dim))
    }

    /// Applies the layer to `x` of shape `[..., in_features]`, as [`Linear::forward`]
    /// does with [`weight`](WeightNorm::weight).
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        affine("WeightNorm::forward", x, &self.weight(), self.bias.as_ref())
    }

    /// The length `g`: `[out, 1]`, `[1, in]` or a 0-dim scalar, after `dim`.
    pub fn g(&self) -> &Tensor {
        &self.g
    }

    /// The direction `v`, `[out_features, in_features]`.
    pub fn v(&self) -> &Tensor {
        &self.v
    }

    /// The bias, `[out_features]`, if the layer has one.
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }

    /// Which norms `g` scales: `Some(0)`, `Some(1)` or `None` (see [`WeightNorm`]).
    pub fn dim(&self) -> Option<usize> {
        self.dim
    }
}

/// The Euclidean norms of `v` over every dimension but `dim` (kept, of size 1), or of
/// all of `v` for `None`: PyTorch's `norm_except_dim`.
fn norms(v: &Tensor, dim: Option<usize>) -> Tensor {
    let squares = v.square();
    match dim {
        Some(0) => squares.sum_dim_keepdim(1).sqrt(),
        Some(_) => squares.sum_dim_keepdim(0).sqrt(),
        None => squares.sum().sqrt(),
    }
}

impl Module for WeightNorm {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut named = vec![
            (G.to_string(), self.g.clone()),
            (V.to_string(), self.v.clone()),
        ];
        if let Some(b) = &self.bias {
            named.push(("bias".to_string(), b.clone()));
        }
        named
    }

    /// As every module's, and `weight_g` and `weight_v` (the older
    /// `torch.nn.utils.weight_norm`'s names) are read as `original0` and `original1`.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        let mut state = state.clone();
        state.rename("weight_g", G);
        state.rename("weight_v", V);
        load_named(self.list_parameters(), &state)
    }
}
