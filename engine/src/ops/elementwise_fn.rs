//! The scalar functions behind elementwise ops, named so any backend can implement them.
//!
//! The tensor layer picks a function by name ([`UnaryFn`], [`BinaryFn`]) and the backend
//! applies it to every element; a GPU backend would compile the same formula into a shader.
//! `apply` is the definition of each result: the transcendental functions (`exp`, `log`,
//! `tanh`, `sigmoid`, `gelu`) are the engine's own, in `cpu/math.rs`, never the platform's
//! C library, so they give the same bits on every CPU. The CPU backend chooses the function
//! once per tensor and runs a loop with `apply` of that one function inlined in it
//! (`ops/unary.rs`, `ops/arithmetic.rs`), which the compiler vectorises.

use crate::cpu::math;

/// A function of one element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum UnaryFn {
    Neg,
    Exp,
    Log,
    Tanh,
    Sigmoid,
    Relu,
    GeluErf,
    GeluTanh,
    Sqrt,
    Powf(f32),
    /// 0 where x ≤ 0, else 1 (1 at NaN, as PyTorch): the derivative of `relu`.
    Step,
    /// d/dx of `GeluErf`.
    GeluErfGrad,
    /// d/dx of `GeluTanh`.
    GeluTanhGrad,
    Abs,
    /// −1, 0 or 1 (NaN stays NaN): the derivative of `abs`, 0 at 0 as in PyTorch.
    Sign,
    /// `x` held within `[min, max]` (either may be infinite); NaN stays NaN.
    Clamp(f32, f32),
    /// 1 where `min ≤ x ≤ max`, else 0: the derivative of `clamp`, as PyTorch takes it.
    ClampGrad(f32, f32),
}

impl UnaryFn {
    /// The public op this function computes (or whose derivative it is), for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            UnaryFn::Neg => "neg",
            UnaryFn::Exp => "exp",
            UnaryFn::Log => "log",
            UnaryFn::Tanh => "tanh",
            UnaryFn::Sigmoid => "sigmoid",
            UnaryFn::Relu | UnaryFn::Step => "relu",
            UnaryFn::GeluErf
            | UnaryFn::GeluTanh
            | UnaryFn::GeluErfGrad
            | UnaryFn::GeluTanhGrad => "gelu",
            UnaryFn::Sqrt => "sqrt",
            UnaryFn::Powf(_) => "powf",
            UnaryFn::Abs | UnaryFn::Sign => "abs",
            UnaryFn::Clamp(..) | UnaryFn::ClampGrad(..) => "clamp",
        }
    }

    /// The function at `x`. Inlined into each caller, so that with `self` known the `match`
    /// disappears and only one arm's formula is left in the loop.
    #[inline(always)]
    pub(crate) fn apply(self, x: f32) -> f32 {
        match self {
            UnaryFn::Neg => -x,
            UnaryFn::Exp => math::exp(x),
            UnaryFn::Log => math::log(x),
            UnaryFn::Tanh => math::tanh(x),
            UnaryFn::Sigmoid => math::sigmoid(x),
            UnaryFn::Relu => math::relu(x),
            UnaryFn::GeluErf => math::gelu_erf(x),
            UnaryFn::GeluTanh => math::gelu_tanh(x),
            // The square root is one IEEE instruction, correctly rounded on every CPU.
            UnaryFn::Sqrt => x.sqrt(),
            // `x²` (for `square`, and the derivatives of `tanh` and `mse_loss`) is one
            // multiplication, correctly rounded, where the general `powf` is a library call.
            UnaryFn::Powf(2.0) => x * x,
            UnaryFn::Powf(p) => math::powf(x, p),
            UnaryFn::Step => math::relu_grad(x),
            UnaryFn::GeluErfGrad => math::gelu_erf_grad(x),
            UnaryFn::GeluTanhGrad => math::gelu_tanh_grad(x),
            UnaryFn::Abs => x.abs(),
            UnaryFn::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x // ±0 at ±0, NaN at NaN
                }
            }
            // Comparisons rather than `f32::max`/`min`, which would turn a NaN into a bound.
            UnaryFn::Clamp(min, max) => {
                if x < min {
                    min
                } else if x > max {
                    max
                } else {
                    x
                }
            }
            UnaryFn::ClampGrad(min, max) => {
                if min <= x && x <= max {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

/// A function of two elements (after broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryFn {
    Add,
    Sub,
    Mul,
    Div,
    /// Comparisons give 1.0 for true and 0.0 for false.
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    /// The larger of the two (NaN if either is NaN, as `torch.maximum`).
    Maximum,
    /// The smaller of the two (NaN if either is NaN, as `torch.minimum`).
    Minimum,
}

impl BinaryFn {
    /// The function at `(a, b)`, inlined like [`UnaryFn::apply`].
    #[inline(always)]
    pub(crate) fn apply(self, a: f32, b: f32) -> f32 {
        let truth = |c: bool| if c { 1.0 } else { 0.0 };
        match self {
            BinaryFn::Add => a + b,
            BinaryFn::Sub => a - b,
            BinaryFn::Mul => a * b,
            BinaryFn::Div => a / b,
            BinaryFn::Gt => truth(a > b),
            BinaryFn::Ge => truth(a >= b),
            BinaryFn::Lt => truth(a < b),
            BinaryFn::Le => truth(a <= b),
            BinaryFn::Eq => truth(a == b),
            BinaryFn::Maximum => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.max(b)
                }
            }
            BinaryFn::Minimum => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.min(b)
                }
            }
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            BinaryFn::Add => "add",
            BinaryFn::Sub => "sub",
            BinaryFn::Mul => "mul",
            BinaryFn::Div => "div",
            BinaryFn::Gt => "gt",
            BinaryFn::Ge => "ge",
            BinaryFn::Lt => "lt",
            BinaryFn::Le => "le",
            BinaryFn::Eq => "eq",
            BinaryFn::Maximum => "maximum",
            BinaryFn::Minimum => "minimum",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_erf_matches_known_values() {
        // x Φ(x) at x = 1: Φ(1) = 0.8413447
        assert!((UnaryFn::GeluErf.apply(1.0) - 0.841_344_7).abs() < 1e-6);
        assert!((UnaryFn::GeluErf.apply(-1.0) + 0.158_655_3).abs() < 1e-6);
    }

    #[test]
    fn sigmoid_is_stable_at_extremes() {
        assert_eq!(UnaryFn::Sigmoid.apply(-200.0), 0.0);
        assert_eq!(UnaryFn::Sigmoid.apply(200.0), 1.0);
    }
}
