//! The ops that autograd knows: one variant per differentiable operation, holding its inputs
//! and whatever the derivative needs.
//!
//! The derivative of every variant is in `backprop.rs`, in one `match` with no catch-all
//! arm: adding a variant here without writing its derivative there does not compile.

use crate::activation::Activation;
use crate::ops::blocked_attention::BlockedAttentionSaved;
use crate::ops::safe_softmax::SafeSoftmaxSaved;
use crate::precision::Precision;
use crate::tensor::Tensor;

/// Which formula [`Tensor::gelu`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeluApprox {
    /// The exact form, `x · Φ(x)` with the normal CDF written with `erf`.
    Erf,
    /// The tanh approximation, `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
    Tanh,
}

/// A recorded operation: the edge from a tensor back to the tensors it was computed from.
pub(crate) enum Op {
    Add(Tensor, Tensor),
    Sub(Tensor, Tensor),
    Mul(Tensor, Tensor),
    Div(Tensor, Tensor),
    Neg(Tensor),
    Exp(Tensor),
    Log(Tensor),
    Tanh(Tensor),
    Sigmoid(Tensor),
    Relu(Tensor),
    Gelu(Tensor, GeluApprox),
    Sqrt(Tensor),
    Powf(Tensor, f32),
    Abs(Tensor),
    /// `x` held within `[min, max]` (an absent bound is an infinity).
    Clamp {
        x: Tensor,
        min: f32,
        max: f32,
    },
    /// The elementwise larger of two tensors, with broadcasting.
    Maximum(Tensor, Tensor),
    /// The elementwise smaller of two tensors, with broadcasting.
    Minimum(Tensor, Tensor),
    /// Sum over `dims` (sorted, distinct); `keepdim` as requested by the caller.
    Sum {
        x: Tensor,
        dims: Vec<usize>,
        keepdim: bool,
    },
    /// Maximum over one dimension, or over everything when `dim` is `None`.
    Max {
        x: Tensor,
        dim: Option<usize>,
        keepdim: bool,
    },
    /// Minimum over one dimension, or over everything when `dim` is `None`.
    Min {
        x: Tensor,
        dim: Option<usize>,
        keepdim: bool,
    },
    /// The running sum along `dim`.
    Cumsum {
        x: Tensor,
        dim: usize,
    },
    Softmax(Tensor, usize),
    LogSoftmax(Tensor, usize),
    /// The softmax of each row over its visible entries (`safe_softmax`), fused; the
    /// derivative recomputes the exponentials from what `saved` keeps.
    SafeSoftmax {
        x: Tensor,
        saved: Box<SafeSoftmaxSaved>,
    },
    Matmul(Tensor, Tensor),
    /// `a · bᵀ` over the last two dimensions, reading `b` in place.
    MatmulT(Tensor, Tensor),
    /// `Σₕ w[h] · tanh(queries[b, q, h] + keys[b, k, h])`, fused.
    AdditiveScores {
        queries: Tensor,
        keys: Tensor,
        w: Tensor,
        activation: Activation,
    },
    /// `softmax(queries keysᵀ · scale) values` in blocks (`blocked_attention`); the
    /// derivative recomputes the weights from what `saved` keeps.
    BlockedAttention {
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        saved: Box<BlockedAttentionSaved>,
    },
    Reshape(Tensor),
    Permute(Tensor, Vec<usize>),
    Expand(Tensor),
    Concat(Vec<Tensor>, usize),
    Narrow {
        x: Tensor,
        dim: usize,
        start: usize,
    },
    IndexSelect {
        x: Tensor,
        dim: usize,
        index: Vec<usize>,
    },
    /// Values of `x` read at computed row-major offsets, one per output element
    /// (`gather`, and the values of `topk` and of `max_dim_with_indices`).
    Gather {
        x: Tensor,
        offsets: Vec<usize>,
    },
    /// The same values copied to another device (`to`).
    To(Tensor),
    /// Values rounded to a half-precision format (`to_precision`).
    ToPrecision(Tensor, Precision),
    /// `cond ? a : b`, elementwise with broadcasting; `cond` is a constant 0/1 tensor.
    Where {
        cond: Tensor,
        a: Tensor,
        b: Tensor,
    },
}

impl Op {
    /// The op's name as the public API spells it, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Op::Add(..) => "add",
            Op::Sub(..) => "sub",
            Op::Mul(..) => "mul",
            Op::Div(..) => "div",
            Op::Neg(_) => "neg",
            Op::Exp(_) => "exp",
            Op::Log(_) => "log",
            Op::Tanh(_) => "tanh",
            Op::Sigmoid(_) => "sigmoid",
            Op::Relu(_) => "relu",
            Op::Gelu(..) => "gelu",
            Op::Sqrt(_) => "sqrt",
            Op::Powf(..) => "powf",
            Op::Abs(_) => "abs",
            Op::Clamp { .. } => "clamp",
            Op::Maximum(..) => "maximum",
            Op::Minimum(..) => "minimum",
            Op::Sum { .. } => "sum",
            Op::Max { .. } => "max",
            Op::Min { .. } => "min",
            Op::Cumsum { .. } => "cumsum",
            Op::Softmax(..) => "softmax",
            Op::LogSoftmax(..) => "log_softmax",
            Op::SafeSoftmax { .. } => "safe_softmax",
            Op::Matmul(..) => "matmul",
            Op::MatmulT(..) => "matmul_t",
            Op::AdditiveScores { .. } => "additive_scores",
            Op::BlockedAttention { .. } => "blocked_attention",
            Op::Reshape(_) => "reshape",
            Op::Permute(..) => "permute",
            Op::Expand(_) => "expand",
            Op::Concat(..) => "concat",
            Op::Narrow { .. } => "narrow",
            Op::IndexSelect { .. } => "index_select",
            Op::Gather { .. } => "gather",
            Op::Where { .. } => "where",
            Op::To(_) => "to",
            Op::ToPrecision(..) => "to_precision",
        }
    }

    /// Consumes the op, giving back its input handles (used to free graphs iteratively).
    pub(crate) fn into_inputs(self) -> Vec<Tensor> {
        match self {
            Op::Concat(xs, _) => xs,
            other => other.inputs().into_iter().cloned().collect(),
        }
    }

    /// The tensors this op read, in argument order.
    pub(crate) fn inputs(&self) -> Vec<&Tensor> {
        match self {
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Matmul(a, b)
            | Op::MatmulT(a, b)
            | Op::Maximum(a, b)
            | Op::Minimum(a, b) => vec![a, b],
            Op::Neg(x)
            | Op::Exp(x)
            | Op::Log(x)
            | Op::Tanh(x)
            | Op::Sigmoid(x)
            | Op::Relu(x)
            | Op::Gelu(x, _)
            | Op::Sqrt(x)
            | Op::Powf(x, _)
            | Op::Abs(x)
            | Op::Clamp { x, .. }
            | Op::Sum { x, .. }
            | Op::Max { x, .. }
            | Op::Min { x, .. }
            | Op::Cumsum { x, .. }
            | Op::Gather { x, .. }
            | Op::Softmax(x, _)
            | Op::LogSoftmax(x, _)
            | Op::SafeSoftmax { x, .. }
            | Op::Reshape(x)
            | Op::Permute(x, _)
            | Op::Expand(x)
            | Op::Narrow { x, .. }
            | Op::IndexSelect { x, .. }
            | Op::To(x)
            | Op::ToPrecision(x, _) => vec![x],
            Op::Concat(xs, _) => xs.iter().collect(),
            Op::Where { cond, a, b } => vec![cond, a, b],
            Op::AdditiveScores {
                queries, keys, w, ..
            } => vec![queries, keys, w],
            Op::BlockedAttention {
                queries,
                keys,
                values,
                ..
            } => vec![queries, keys, values],
        }
    }
}
