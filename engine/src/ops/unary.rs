//! Elementwise functions of one tensor: `neg`, `exp`, `log`, `tanh`, `sigmoid`, `relu`,
//! `gelu`, `sqrt`, `powf`, `abs`, `clamp`.

use super::elementwise_fn::UnaryFn;
use crate::check;
use crate::cpu::elementwise;
use crate::op::{GeluApprox, Op};
use crate::tensor::Tensor;

/// `f` applied to every element of `a`. One loop per function, chosen once: with the
/// function a constant, `apply` inlines to that function's formula alone, and each loop
/// vectorises (a `match` per element would not).
pub(crate) fn map_fn(a: &[f32], f: UnaryFn) -> Vec<f32> {
    macro_rules! map {
        ($f:expr) => {
            elementwise::map(a, move |x| $f.apply(x))
        };
    }
    match f {
        UnaryFn::Neg => map!(UnaryFn::Neg),
        UnaryFn::Exp => map!(UnaryFn::Exp),
        UnaryFn::Log => map!(UnaryFn::Log),
        UnaryFn::Tanh => map!(UnaryFn::Tanh),
        UnaryFn::Sigmoid => map!(UnaryFn::Sigmoid),
        UnaryFn::Relu => map!(UnaryFn::Relu),
        UnaryFn::GeluErf => map!(UnaryFn::GeluErf),
        UnaryFn::GeluTanh => map!(UnaryFn::GeluTanh),
        UnaryFn::Sqrt => map!(UnaryFn::Sqrt),
        UnaryFn::Powf(2.0) => map!(UnaryFn::Powf(2.0)),
        UnaryFn::Powf(p) => map!(UnaryFn::Powf(p)),
        UnaryFn::Step => map!(UnaryFn::Step),
        UnaryFn::GeluErfGrad => map!(UnaryFn::GeluErfGrad),
        UnaryFn::GeluTanhGrad => map!(UnaryFn::GeluTanhGrad),
        UnaryFn::Abs => map!(UnaryFn::Abs),
        UnaryFn::Sign => map!(UnaryFn::Sign),
        UnaryFn::Clamp(min, max) => map!(UnaryFn::Clamp(min, max)),
        UnaryFn::ClampGrad(min, max) => map!(UnaryFn::ClampGrad(min, max)),
    }
}

impl Tensor {
    /// Applies `f` to every element; `op` is what autograd records (`None` inside backward
    /// rules, which run without a graph).
    #[track_caller]
    pub(crate) fn unary(&self, f: UnaryFn, op: Option<Op>) -> Tensor {
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data = crate::gpu::kernels::unary(&x, f);
            return Tensor::from_gpu(f.name(), data, self.shape().to_vec(), op);
        }
        let data = map_fn(self.buffer().as_slice(), f);
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

    /// `max(x, 0)`. Its derivative at exactly 0 is taken as 0, as in PyTorch. A NaN stays
    /// NaN, and the gradient of a NaN element passes on unchanged, as PyTorch's does
    /// (its backward zeroes the gradient where `x ≤ 0`, which a NaN is not).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{self, KernelPath};
    use crate::threads::PARALLEL_MIN;

    /// Every function, with parameters where it takes some.
    const FUNCTIONS: [UnaryFn; 21] = [
        UnaryFn::Neg,
        UnaryFn::Exp,
        UnaryFn::Log,
        UnaryFn::Tanh,
        UnaryFn::Sigmoid,
        UnaryFn::Relu,
        UnaryFn::GeluErf,
        UnaryFn::GeluTanh,
        UnaryFn::Sqrt,
        UnaryFn::Powf(2.0),
        UnaryFn::Powf(-1.5),
        UnaryFn::Powf(3.0),
        UnaryFn::Step,
        UnaryFn::GeluErfGrad,
        UnaryFn::GeluTanhGrad,
        UnaryFn::Abs,
        UnaryFn::Sign,
        UnaryFn::Clamp(-1.0, 2.5),
        UnaryFn::Clamp(f32::NEG_INFINITY, 0.0),
        UnaryFn::ClampGrad(-1.0, 2.5),
        UnaryFn::ClampGrad(0.0, f32::INFINITY),
    ];

    /// Special values, then seeded values: any bit pattern (every binade, subnormals,
    /// infinities, NaNs with payloads), and values spread over [−100, 100] and [−10, 10].
    fn values(n: usize) -> Vec<f32> {
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
            88.72,
            88.73,
            -87.33,
            -87.34,
            -104.0,
            7.905_311,
            4e-4,
            -3.9,
            4.1,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out: Vec<f32> = specials.to_vec();
        while out.len() < n {
            let r = next();
            let x = match r % 3 {
                0 => f32::from_bits((r >> 32) as u32),
                1 => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 200.0,
                _ => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 20.0,
            };
            out.push(x);
        }
        out.truncate(n);
        out
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_definition() {
        // Lengths that leave every tail after 8- and 16-lane vectors, and one long enough
        // to be split between threads.
        let lengths = [
            0,
            1,
            3,
            7,
            8,
            9,
            15,
            16,
            17,
            31,
            33,
            100,
            4099,
            PARALLEL_MIN + 5,
        ];
        let all = values(PARALLEL_MIN + 5);
        for f in FUNCTIONS {
            let definition: Vec<u32> =
                all.iter().map(|&x| f.apply(x).to_bits()).collect();
            for &n in &lengths {
                for path in KernelPath::supported() {
                    let got = kernels::with_path(path, || map_fn(&all[..n], f));
                    assert_eq!(got.len(), n);
                    if let Some(i) =
                        (0..n).find(|&i| got[i].to_bits() != definition[i])
                    {
                        panic!(
                            "{f:?} on {path}, length {n}: at {} got {} where the definition gives {}",
                            all[i],
                            got[i],
                            f32::from_bits(definition[i])
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_transcendental_functions_are_the_engine_s_own() {
        // `apply` is the definition the kernels are held to: it must be `math.rs`'s
        // functions (tested there against exact values), not the platform's library.
        use crate::cpu::math;
        for x in values(10_000) {
            let pairs = [
                (UnaryFn::Exp.apply(x), math::exp(x)),
                (UnaryFn::Log.apply(x), math::log(x)),
                (UnaryFn::Tanh.apply(x), math::tanh(x)),
                (UnaryFn::Sigmoid.apply(x), math::sigmoid(x)),
                (UnaryFn::GeluErf.apply(x), math::gelu_erf(x)),
                (UnaryFn::GeluTanh.apply(x), math::gelu_tanh(x)),
                (UnaryFn::GeluErfGrad.apply(x), math::gelu_erf_grad(x)),
                (UnaryFn::GeluTanhGrad.apply(x), math::gelu_tanh_grad(x)),
            ];
            for (i, (got, want)) in pairs.into_iter().enumerate() {
                assert_eq!(got.to_bits(), want.to_bits(), "function {i} at {x}");
            }
        }
    }
}
