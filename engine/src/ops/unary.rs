//! Elementwise functions of one tensor: `neg`, `exp`, `log`, `tanh`, `sigmoid`, `relu`,
//! `gelu`, `sqrt`, `powf`, `abs`, `clamp`.

use super::elementwise_fn::UnaryFn;
use crate::check;
use crate::cpu::elementwise;
use crate::op::{GeluApprox, Op};
use crate::tensor::Tensor;

impl Tensor {
    /// Applies `f` to every element; `op` is what autograd records (`None` inside backward
    /// rules, which run without a graph).
    #[track_caller]
    pub(crate) fn unary(&self, f: UnaryFn, op: Option<Op>) -> Tensor {
        let data = elementwise::map(self.buffer().as_slice(), |x| f.apply(x));
        match op {
            Some(op) => Tensor::from_op(data, self.shape().to_vec(), op),
            None => Tensor::from_parts(f.name(), data, self.shape().to_vec()),
        }
    }

    /// `-x`. Same as the unary `-` operator.
    #[track_caller]
    pub fn neg(&self) -> Tensor {
        self.unary(UnaryFn::Neg, Some(Op::Neg(self.clone())))
    }

    /// `eˣ`.
    #[track_caller]
    pub fn exp(&self) -> Tensor {
        self.unary(UnaryFn::Exp, Some(Op::Exp(self.clone())))
    }

    /// The natural logarithm (`-inf` at 0, NaN below).
    #[track_caller]
    pub fn log(&self) -> Tensor {
        self.unary(UnaryFn::Log, Some(Op::Log(self.clone())))
    }

    /// The hyperbolic tangent.
    #[track_caller]
    pub fn tanh(&self) -> Tensor {
        self.unary(UnaryFn::Tanh, Some(Op::Tanh(self.clone())))
    }

    /// The logistic function `1 / (1 + e⁻ˣ)`, computed without overflow.
    #[track_caller]
    pub fn sigmoid(&self) -> Tensor {
        self.unary(UnaryFn::Sigmoid, Some(Op::Sigmoid(self.clone())))
    }

    /// `max(x, 0)`. Its derivative at exactly 0 is taken as 0, as in PyTorch.
    #[track_caller]
    pub fn relu(&self) -> Tensor {
        self.unary(UnaryFn::Relu, Some(Op::Relu(self.clone())))
    }

    /// The Gaussian error linear unit, in the exact (`erf`) or the `tanh` form; these match
    /// PyTorch's `gelu(x)` and `gelu(x, approximate="tanh")`.
    #[track_caller]
    pub fn gelu(&self, approx: GeluApprox) -> Tensor {
        let f = match approx {
            GeluApprox::Erf => UnaryFn::GeluErf,
            GeluApprox::Tanh => UnaryFn::GeluTanh,
        };
        self.unary(f, Some(Op::Gelu(self.clone(), approx)))
    }

    /// The square root (NaN below 0).
    #[track_caller]
    pub fn sqrt(&self) -> Tensor {
        self.unary(UnaryFn::Sqrt, Some(Op::Sqrt(self.clone())))
    }

    /// `xᵖ` for a constant exponent `p`.
    #[track_caller]
    pub fn powf(&self, p: f32) -> Tensor {
        self.unary(UnaryFn::Powf(p), Some(Op::Powf(self.clone(), p)))
    }

    /// `x²`, the same as `powf(2.0)`.
    #[track_caller]
    pub fn square(&self) -> Tensor {
        self.powf(2.0)
    }

    /// The absolute value. Its derivative is the sign of `x`, taken as 0 at exactly 0, as
    /// in PyTorch.
    #[track_caller]
    pub fn abs(&self) -> Tensor {
        self.unary(UnaryFn::Abs, Some(Op::Abs(self.clone())))
    }

    /// Every element held within `[min, max]`, like `torch.clamp(x, min, max)`. The
    /// gradient passes where `min ≤ x ≤ max` (bounds included, as in PyTorch) and is 0
    /// where a bound took over. A NaN stays NaN. `min` must not exceed `max` (PyTorch would
    /// silently return `max` everywhere).
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![-3.0, 0.5, 2.0], [3]);
    /// assert_eq!(x.clamp(-1.0, 1.0).to_vec(), vec![-1.0, 0.5, 1.0]);
    /// ```
    #[track_caller]
    pub fn clamp(&self, min: f32, max: f32) -> Tensor {
        check::ensure(
            !min.is_nan() && !max.is_nan() && min <= max,
            "clamp",
            || {
                format!(
                    "needs min ≤ max (neither NaN), found min = {min}, max = {max}; hint: for one bound only, use clamp_min or clamp_max"
                )
            },
        );
        self.clamp_resolved(min, max)
    }

    /// Every element at least `min`, like `torch.clamp(x, min=min)` (`clamp_min`).
    #[track_caller]
    pub fn clamp_min(&self, min: f32) -> Tensor {
        check::ensure(!min.is_nan(), "clamp_min", || "the bound is NaN".into());
        self.clamp_resolved(min, f32::INFINITY)
    }

    /// Every element at most `max`, like `torch.clamp(x, max=max)` (`clamp_max`).
    #[track_caller]
    pub fn clamp_max(&self, max: f32) -> Tensor {
        check::ensure(!max.is_nan(), "clamp_max", || "the bound is NaN".into());
        self.clamp_resolved(f32::NEG_INFINITY, max)
    }

    #[track_caller]
    fn clamp_resolved(&self, min: f32, max: f32) -> Tensor {
        let op = Op::Clamp {
            x: self.clone(),
            min,
            max,
        };
        self.unary(UnaryFn::Clamp(min, max), Some(op))
    }
}
