//! The engine's own definitions of `exp`, `log`, `tanh`, `sigmoid`, `erf` and the two forms
//! of `gelu` with their derivatives: one definition of each, which gives the same bits on
//! every CPU and that a loop of turns into SIMD instructions.
//!
//! Why not call `f32::exp` or `f32::tanh`? Those go to the platform's C math library, one
//! call per element: a different library (glibc on Linux, Apple's on macOS, …) may round a
//! last bit differently, so a training run would print different numbers on different
//! machines, and a call per element cannot be vectorised (element-wise `tanh` through the
//! library took about 60 times as long as an `add`). Each function here is instead a short
//! formula of `+`, `−`, `×`, `÷`, comparisons and bit operations, written so that it has no
//! branch the compiler cannot turn into a select (an `if` whose both sides are cheap values
//! becomes "compute both, keep one per lane"). Rust never fuses a multiply and an add on its
//! own, so the same formula compiled for AVX-512, for AVX2 or for any other CPU does the
//! same operations in the same order, and IEEE arithmetic makes each of them round the same
//! way: the same bits everywhere. (`f32::mul_add` is avoided for the same reason from the
//! other side: without an FMA instruction it is a slow library call.)
//!
//! The methods are the classic ones of Cephes (the C library behind NumPy's and many SIMD
//! libraries' single-precision functions) and of Eigen (the C++ library inside TensorFlow
//! and XLA), with the constants they publish:
//!
//! | function | method | largest error measured over the whole range (tests) |
//! |---|---|---|
//! | [`exp`] | `x = n·ln 2 + r`, `eʳ` by a polynomial, times `2ⁿ` built from its bits (Cephes `expf`) | 1 ulp; 0 below −87.34 |
//! | [`log`] | `x = m·2ᵉ` from the bits, `ln m` by a polynomial (Cephes `logf`) | 1 ulp |
//! | [`tanh`] | `x·P(x²)/Q(x²)` clamped at ±7.9 (Eigen's `generic_fast_tanh_float`) | 7 ulp, 2e-7 absolute |
//! | [`sigmoid`] | `1/(1 + e⁻ˣ)` or `eˣ/(1 + eˣ)` from one `exp(−\|x\|)` | 2.5 ulp; 0 below −87.34 |
//! | [`erf`] | `x·P(x²)/Q(x²)`, ±1 from ±3.92 (Eigen's `generic_fast_erf_float`) | 8 ulp, 2.5e-7 absolute |
//! | [`gelu_erf`], [`gelu_tanh`] | PyTorch's formulas, from the functions above | 3e-7 · max(1, \|x\|) absolute |
//! | [`gelu_erf_grad`], [`gelu_tanh_grad`] | their derivatives (checked against finite differences) | 1e-6 · max(1, \|x\|) absolute |
//!
//! An ulp (unit in the last place) is the gap between the exact value's `f32` neighbours:
//! within 1 ulp, a result is one of the two `f32`s around the exact value. The `gelu`s are
//! held to an absolute bound because PyTorch's formula `x · ½(1 + erf(x/√2))` loses the
//! relative precision of small results for large negative `x` (`1 + erf` cancels); these
//! keep PyTorch's formulas so that they agree with it.
//!
//! Each function keeps the special values: NaN stays NaN, and ±∞ and ±0 go where the
//! mathematical function goes (`log 0 = −∞`, `log` of a negative is NaN, `tanh ±∞ = ±1`,
//! …), with one simplification: [`exp`] and [`sigmoid`] return 0 where the exact result
//! is a subnormal `f32` (below about 1.2e-38), which no softmax or gate can tell from 0.
//!
//! `powf` has no formula here: [`powf`] is the `libm` crate's, plain Rust compiled into the
//! engine (so the same on every platform), one call per element.

/// `max(x, 0)` as PyTorch's `relu` computes it: `x < 0 ? 0 : x`, so NaN stays NaN and
/// `-0.0` stays `-0.0` (`f32::max` would turn a NaN into 0, a wrong number where PyTorch
/// propagates the NaN).
#[inline(always)]
pub(crate) fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// The slope of [`relu`] as PyTorch's backward takes it (`threshold_backward`:
/// `x ≤ 0 ? 0 : 1`): 0 at and below 0, 1 above, and 1 at NaN, so the upstream gradient
/// of a NaN element passes on unchanged, as in PyTorch.
#[inline(always)]
pub(crate) fn relu_grad(x: f32) -> f32 {
    if x <= 0.0 { 0.0 } else { 1.0 }
}

/// `ln 2` split in two: `LN2_HI` has few significant bits, so `n · LN2_HI` is exact for
/// every whole `n` used here, and `n·LN2_HI + n·LN2_LO` keeps the precision of `n · ln 2`.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;

/// The largest `f32` whose exponential is finite: above it `eˣ` rounds to `+∞`.
pub(crate) const EXP_OVERFLOW: f32 = 88.722_83;
/// The smallest `f32` whose exponential is a normal `f32`: below it `eˣ` is a subnormal
/// or 0, and [`exp`] returns 0.
pub(crate) const EXP_UNDERFLOW: f32 = -87.336_54;

/// `1.5 · 2²³`: adding and subtracting it rounds an `f32` of magnitude below 2²² to the
/// nearest whole number, with two additions that vectorise on every target.
const ROUND: f32 = 12_582_912.0;

/// `√(2/π)`, the scale inside `gelu`'s `tanh` form.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;
/// The cubic coefficient of `gelu`'s `tanh` form.
const GELU_CUBIC: f32 = 0.044_715;

/// `c[0]·xⁿ⁻¹ + … + c[n−1]` by Horner's rule, one multiply and one add per coefficient
/// after the first, from the highest power down. (Starting from 0 instead of `c[0]` would
/// give the same bits for any `x` that is not infinite, `0·x + c[0]` being exactly `c[0]`,
/// for one more multiply and add; every argument given here is bounded.)
#[inline(always)]
fn horner<const N: usize>(c: &[f32; N], x: f32) -> f32 {
    c[1..].iter().fold(c[0], |acc, &k| acc * x + k)
}

/// `eˣ`, within 1 ulp: `x = n·ln 2 + r` with `n` a whole number and `|r| ≤ ln 2 / 2`,
/// `eʳ ≈ 1 + r + r²·P(r)`, times `2ⁿ`. `exp(−∞) = 0` and `exp(0) = 1` exactly (softmax
/// gives a masked position a weight of exactly 0), `exp(+∞) = +∞`, NaN stays NaN, and
/// below [`EXP_UNDERFLOW`] the result is 0.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    // `r`'s polynomial: eʳ ≈ 1 + r + r²·P(r).
    const P: [f32; 6] = [
        1.987_569_2e-4,
        1.398_2e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ];
    let clamped = x.clamp(EXP_UNDERFLOW, EXP_OVERFLOW);
    // Rounded to the nearest whole number by adding ROUND: the last bits of `shifted` then
    // hold n itself, read as an integer below without a float-to-integer conversion (whose
    // saturating rules do not vectorise).
    let shifted = clamped * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (clamped - n * LN2_HI) - n * LN2_LO;
    let p = horner(&P, r);
    let e_r = (p * (r * r) + r) + 1.0;
    // 2ⁿ from the bits of two powers of two (exponent field k + 127, mantissa 0): n is in
    // [-126, 128] and 2¹²⁸ is not an `f32`, but both halves of n are small. Multiplying by
    // a power of two is exact, so the result is eʳ·2ⁿ rounded once. (For a NaN `x` the
    // integer is meaningless, hence the wrapping arithmetic, and the result is NaN anyway.)
    let n = (shifted.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let power_of_two = |k: i32| f32::from_bits((k.wrapping_add(127) as u32) << 23);
    let e = (e_r * power_of_two(n >> 1)) * power_of_two(n.wrapping_sub(n >> 1));
    if x < EXP_UNDERFLOW {
        0.0
    } else if x > EXP_OVERFLOW {
        f32::INFINITY
    } else {
        e // NaN stays NaN: the clamp, and every step after it, keep it
    }
}

/// The natural logarithm, within 1 ulp: `x = m · 2ᵉ` with `m` in `[√½, √2)` read from
/// `x`'s bits, then `ln x = ln m + e · ln 2` with `ln m ≈ f − f²/2 + f³·P(f)` for
/// `f = m − 1` (Cephes' `logf`). `log(±0) = −∞`, `log(+∞) = +∞`, NaN below 0 and for NaN;
/// subnormal `x` are scaled into the normal range first.
#[inline(always)]
pub(crate) fn log(x: f32) -> f32 {
    const P: [f32; 9] = [
        7.037_683_6e-2,
        -1.151_461e-1,
        1.167_699_9e-1,
        -1.242_014_1e-1,
        1.424_932_3e-1,
        -1.666_805_8e-1,
        2.000_071_4e-1,
        -2.499_999_4e-1,
        3.333_333e-1,
    ];
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    /// 2²³: a subnormal times it is a normal number (exactly).
    const SCALE: f32 = 8_388_608.0;
    let subnormal = x < f32::MIN_POSITIVE;
    let scaled = if subnormal { x * SCALE } else { x };
    let bits = scaled.to_bits();
    // The exponent field less 126 makes `m` below land in [0.5, 1): x = m · 2^exponent.
    let exponent =
        ((bits >> 23) & 0xff) as i32 - if subnormal { 126 + 23 } else { 126 };
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    // Into [√½, √2): doubling below √½ (exact), so that f = m − 1 is small either way.
    let low = m < SQRT_HALF;
    let e = (exponent - low as i32) as f32;
    let f = if low { m + m } else { m } - 1.0;
    let z = f * f;
    let p = P.iter().fold(0.0, |acc, &c| acc * f + c);
    let y = p * f * z + LN2_LO * e - 0.5 * z;
    let result = (f + y) + LN2_HI * e;
    // The bits of 0, ∞, negatives and NaN above mean nothing: choose their results.
    let result = if x == f32::INFINITY { x } else { result };
    let result = if x == 0.0 { f32::NEG_INFINITY } else { result };
    if x >= 0.0 { result } else { f32::NAN } // false for negatives and NaN
}

/// The hyperbolic tangent, within 7 ulp and 2e-7: `x · P(x²) / Q(x²)`, Eigen's
/// `generic_fast_tanh_float`, clamped at ±7.905311 where the approximation reaches ±1
/// (the exact value rounds to ±1 from 9.01 on), and `x` itself where `|x| < 0.0004` (there `tanh x` rounds to `x`, and `x²` would
/// lose a subnormal `x`'s precision). `tanh(±∞) = ±1`, `tanh(±0) = ±0`, NaN stays NaN.
#[inline(always)]
pub(crate) fn tanh(x: f32) -> f32 {
    const CLAMP: f32 = 7.905_311;
    const TINY: f32 = 4e-4;
    const P: [f32; 7] = [
        -2.760_768_5e-16,
        2.000_188e-13,
        -8.604_672e-11,
        5.122_297e-8,
        1.485_722_4e-5,
        6.372_619_3e-4,
        4.893_524_6e-3,
    ];
    const Q: [f32; 4] =
        [1.198_258_4e-6, 1.185_347_1e-4, 2.268_434_6e-3, 4.893_525e-3];
    let c = x.clamp(-CLAMP, CLAMP);
    let c2 = c * c;
    let (p, q) = (horner(&P, c2), horner(&Q, c2));
    let t = c * p / q;
    if x.abs() < TINY { x } else { t }
}

/// The logistic function `1 / (1 + e⁻ˣ)`, within 2.5 ulp, from one `e = exp(−|x|)` (never
/// an overflowing exponential): `1 / (1 + e)` for `x ≥ 0` and `e / (1 + e)` below.
/// `sigmoid(+∞) = 1`, `sigmoid(−∞) = 0`, NaN stays NaN; below −87.34 it is 0.
#[inline(always)]
pub(crate) fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let numerator = if x >= 0.0 { 1.0 } else { e };
    numerator / (1.0 + e)
}

/// The error function `erf x = (2/√π) ∫₀ˣ e^(−t²) dt`, within 8 ulp and 2.5e-7: `x · P(x²) / Q(x²)`,
/// Eigen's `generic_fast_erf_float`, and exactly ±1 from ±3.9192059 on (where the exact
/// value rounds to ±1 in `f32`). `erf(±∞) = ±1`, `erf(±0) = ±0`, NaN stays NaN.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    /// The smallest `f32` whose exact `erf` rounds to 1 (the approximation is 1 ulp short
    /// of 1 from there to its clamp).
    const ONE_FROM: f32 = 3.919_206;
    let c = x.clamp(-4.0, 4.0);
    let c2 = c * c;
    let (p, q) = (horner(&ALPHA, c2), horner(&BETA, c2));
    // `c · (p / q)` rather than Eigen's `(c · p) / q`: for a tiny `c`, `c · p` would be a
    // subnormal and lose precision, where `p / q ≈ 2/√π` never does.
    if x.abs() >= ONE_FROM {
        1.0f32.copysign(x)
    } else {
        c * (p / q)
    }
}

/// `Φ(x)`, the standard normal distribution function: `½(1 + erf(x/√2))`.
#[inline(always)]
fn normal_cdf(x: f32) -> f32 {
    0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `φ(x)`, the standard normal density: `e^(−x²/2) / √(2π)`.
#[inline(always)]
fn normal_pdf(x: f32) -> f32 {
    exp(-0.5 * x * x)
        * (0.5 * std::f32::consts::FRAC_2_SQRT_PI * std::f32::consts::FRAC_1_SQRT_2)
}

/// `gelu(x) = x · Φ(x)`, PyTorch's `gelu(x)` (the exact, `erf` form).
#[inline(always)]
pub(crate) fn gelu_erf(x: f32) -> f32 {
    x * normal_cdf(x)
}

/// `d/dx [x · Φ(x)] = Φ(x) + x · φ(x)`.
#[inline(always)]
pub(crate) fn gelu_erf_grad(x: f32) -> f32 {
    normal_cdf(x) + x * normal_pdf(x)
}

/// PyTorch's `gelu(x, approximate="tanh")`: `½x(1 + tanh u)` with `u = √(2/π)(x + 0.044715 x³)`.
#[inline(always)]
pub(crate) fn gelu_tanh(x: f32) -> f32 {
    0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)))
}

/// `d/dx` of [`gelu_tanh`]: with `t = tanh u`,
/// `½(1 + t) + ½x(1 − t²) · √(2/π)(1 + 3 · 0.044715 x²)`.
#[inline(always)]
pub(crate) fn gelu_tanh_grad(x: f32) -> f32 {
    let t = tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x));
    0.5 * (1.0 + t)
        + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_CUBIC * x * x)
}

/// `xᵖ`: the `libm` crate's `powf` (a port of musl's, correctly rounded in nearly every
/// case), the same on every platform; one call per element, not vectorised.
#[inline(always)]
pub(crate) fn powf(x: f32, p: f32) -> f32 {
    libm::powf(x, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gap between consecutive `f32`s at `exact` (the spacing below a power of two, so
    /// never more generous than the ulp of the result), at least the smallest subnormal.
    fn ulp(exact: f64) -> f64 {
        let a = exact.abs();
        if a < f32::MIN_POSITIVE as f64 {
            return 2f64.powi(-149);
        }
        2f64.powi(a.log2().floor() as i32 - 23)
    }

    /// Every 509th `f32` bit pattern of one sign, 0 to the largest finite: all binades,
    /// subnormals included, about 16 000 values per binade.
    fn all_finite(negative: bool) -> impl Iterator<Item = f32> {
        let sign = if negative { 0x8000_0000 } else { 0 };
        (0..0x7f80_0000u32)
            .step_by(509)
            .map(move |bits| f32::from_bits(bits | sign))
    }

    /// The largest error of `f` against `exact` over `xs`, in ulps of the exact value, and
    /// where it is.
    fn worst_ulps(
        xs: impl Iterator<Item = f32>,
        f: impl Fn(f32) -> f32,
        exact: impl Fn(f64) -> f64,
    ) -> (f64, f32) {
        xs.map(|x| {
            let want = exact(x as f64);
            ((f(x) as f64 - want).abs() / ulp(want), x)
        })
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    }

    /// The largest of `|f(x) − exact(x)| / max(1, |x|)` over `xs`, and where it is.
    fn worst_scaled_error(
        xs: impl Iterator<Item = f32>,
        f: impl Fn(f32) -> f32,
        exact: impl Fn(f64) -> f64,
    ) -> (f64, f32) {
        xs.map(|x| {
            let err = (f(x) as f64 - exact(x as f64)).abs();
            (err / (x.abs() as f64).max(1.0), x)
        })
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    }

    fn both_signs() -> impl Iterator<Item = f32> {
        all_finite(false).chain(all_finite(true))
    }

    fn exact_sigmoid(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    fn exact_gelu_erf(x: f64) -> f64 {
        x * 0.5 * (1.0 + libm::erf(x / 2f64.sqrt()))
    }

    fn exact_gelu_tanh(x: f64) -> f64 {
        let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044_715 * x * x * x);
        0.5 * x * (1.0 + u.tanh())
    }

    /// The central difference of `f` at `x` in f64: the derivative, to about 1e-9.
    fn derivative(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-5 * x.abs().max(1.0);
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    #[test]
    fn exp_is_within_1_ulp_from_its_underflow_to_its_overflow() {
        let xs =
            both_signs().filter(|&x| (EXP_UNDERFLOW..=EXP_OVERFLOW).contains(&x));
        let (worst, at) = worst_ulps(xs, exp, f64::exp);
        assert!(worst <= 1.0, "{worst} ulp at {at}");
    }

    #[test]
    fn exp_keeps_the_values_softmax_relies_on() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-1e6), 0.0);
        assert_eq!(exp(-88.0), 0.0, "below the smallest normal f32");
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(100.0), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(1.0), std::f32::consts::E);
        // The edges: finite up to EXP_OVERFLOW and +∞ after it; normal from EXP_UNDERFLOW
        // on and 0 below it.
        assert!(exp(EXP_OVERFLOW).is_finite() && exp(EXP_OVERFLOW) > 3.40e38);
        assert_eq!(exp(EXP_OVERFLOW.next_up()), f32::INFINITY);
        assert!(exp(EXP_UNDERFLOW) >= f32::MIN_POSITIVE);
        assert_eq!(exp(EXP_UNDERFLOW.next_down()), 0.0);
        assert!(((EXP_OVERFLOW.next_up() as f64).exp() as f32).is_infinite());
        assert!(((EXP_UNDERFLOW as f64).exp() as f32) >= f32::MIN_POSITIVE);
        assert!(
            ((EXP_UNDERFLOW.next_down() as f64).exp() as f32) < f32::MIN_POSITIVE
        );
    }

    #[test]
    fn log_is_within_1_ulp_over_every_positive_f32_subnormals_included() {
        let (worst, at) = worst_ulps(all_finite(false).skip(1), log, f64::ln);
        assert!(worst <= 1.0, "{worst} ulp at {at}");
        // Around 1, where ln x ≈ x − 1 is small and a relative error would show most.
        let near_one = (-20_000..20_000).map(|i| 1.0 + i as f32 * 1e-6);
        let (worst, at) = worst_ulps(near_one, log, f64::ln);
        assert!(worst <= 1.0, "{worst} ulp at {at} near 1");
    }

    #[test]
    fn log_keeps_the_special_values() {
        assert_eq!(log(1.0), 0.0);
        assert_eq!(log(0.0), f32::NEG_INFINITY);
        assert_eq!(log(-0.0), f32::NEG_INFINITY);
        assert_eq!(log(f32::INFINITY), f32::INFINITY);
        assert!(log(-1.0).is_nan());
        assert!(log(-f32::MIN_POSITIVE).is_nan());
        assert!(log(f32::NEG_INFINITY).is_nan());
        assert!(log(f32::NAN).is_nan());
        assert_eq!(log(std::f32::consts::E), 1.0);
        let smallest = f32::from_bits(1); // 2⁻¹⁴⁹
        assert_eq!(log(smallest), (-149.0 * std::f64::consts::LN_2) as f32);
        assert_eq!(log(f32::MAX), (f32::MAX as f64).ln() as f32);
        // At the edge of the split of the mantissa, m = √½ exactly (x = √2 as an f32), the
        // definition takes m − 1 without doubling m: the correctly rounded value (the
        // other branch rounds to its neighbour).
        let root_two = std::f32::consts::SQRT_2;
        assert_eq!(log(root_two), (root_two as f64).ln() as f32);
    }

    #[test]
    fn tanh_is_x_itself_below_4e_4_and_the_rational_function_from_there() {
        // The definition's edge, pinned bit for bit: every path must take the same side.
        // Just below it, x (within half an ulp of tanh x there); at it, the rational
        // function, 2 ulp below the exact value where x itself would be 1 ulp above.
        let edge: f32 = 4e-4;
        for sign in [1.0f32, -1.0] {
            let below = sign * edge.next_down(); // the next f32 towards 0
            assert_eq!(tanh(below), below);
            let at = sign * edge;
            assert_eq!(
                tanh(at).to_bits(),
                (sign * f32::from_bits(970_045_204)).to_bits()
            );
            assert_ne!(tanh(at), at);
        }
    }

    #[test]
    fn tanh_is_within_7_ulp_and_2e_7_of_the_exact_value() {
        let (worst, at) = worst_ulps(both_signs(), tanh, f64::tanh);
        assert!(worst <= 7.0, "{worst} ulp at {at}");
        let (worst, at) = worst_scaled_error(both_signs(), tanh, f64::tanh);
        assert!(worst < 2e-7, "absolute error {worst:e} at {at}");
    }

    #[test]
    fn tanh_keeps_the_special_values() {
        assert_eq!(tanh(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh(20.0), 1.0);
        assert_eq!(tanh(-20.0), -1.0);
        assert!(tanh(f32::NAN).is_nan());
        let smallest = f32::from_bits(1);
        assert_eq!(tanh(smallest), smallest, "tanh x = x for the tiniest x");
        // The clamp, where the approximation reaches 1 (the exact value does at 9.01).
        assert_eq!(tanh(7.905_311), 1.0);
        assert!(tanh(7.9) < 1.0);
    }

    #[test]
    fn sigmoid_is_within_2_5_ulp_down_to_the_underflow_of_exp() {
        let xs = both_signs().filter(|&x| x >= EXP_UNDERFLOW);
        let (worst, at) = worst_ulps(xs, sigmoid, exact_sigmoid);
        assert!(worst <= 2.5, "{worst} ulp at {at}");
    }

    #[test]
    fn sigmoid_keeps_the_special_values() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert_eq!(sigmoid(-0.0), 0.5);
        assert_eq!(sigmoid(f32::INFINITY), 1.0);
        assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
        assert_eq!(sigmoid(200.0), 1.0);
        assert_eq!(sigmoid(-200.0), 0.0);
        assert_eq!(sigmoid(-88.0), 0.0, "the exact value is subnormal");
        assert!(sigmoid(-87.0) > 0.0);
        assert!(sigmoid(f32::NAN).is_nan());
        // Both sides of 0 from the same e = exp(−|x|): σ(−x) + σ(x) = 1.
        for x in [0.1f32, 1.0, 3.7, 15.0] {
            assert!((sigmoid(x) + sigmoid(-x) - 1.0).abs() <= f32::EPSILON);
        }
    }

    #[test]
    fn erf_is_within_8_ulp_2_5e_7_absolute_and_1e_6_relative() {
        let (worst, at) = worst_ulps(both_signs(), erf, libm::erf);
        assert!(worst <= 8.0, "{worst} ulp at {at}");
        let (worst, at) = worst_scaled_error(both_signs(), erf, libm::erf);
        assert!(worst < 2.5e-7, "absolute error {worst:e} at {at}");
        let relative = both_signs()
            .filter(|x| x.abs() >= f32::MIN_POSITIVE) // below, the result is subnormal
            .map(|x| {
                let want = libm::erf(x as f64);
                ((erf(x) as f64 - want).abs() / want.abs(), x)
            })
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        assert!(
            relative.0 < 1e-6,
            "relative error {:e} at {}",
            relative.0,
            relative.1
        );
    }

    #[test]
    fn erf_keeps_the_special_values() {
        assert_eq!(erf(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(erf(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(erf(f32::INFINITY), 1.0);
        assert_eq!(erf(f32::NEG_INFINITY), -1.0);
        assert_eq!(erf(4.0), 1.0);
        assert_eq!(erf(-4.0), -1.0);
        assert!(erf(f32::NAN).is_nan());
        assert!(erf(3.9) <= 1.0 && erf(3.9) > 0.999_999);
        // ±1 from where the exact value rounds to ±1, and not before.
        let one_from = 3.919_206_f32;
        assert_eq!(libm::erf(one_from as f64) as f32, 1.0);
        assert!((libm::erf(one_from.next_down() as f64) as f32) < 1.0);
        assert_eq!(erf(one_from), 1.0);
        assert_eq!(erf(-one_from), -1.0);
        assert!(erf(one_from.next_down()) < 1.0);
    }

    #[test]
    fn the_gelus_are_within_3e_7_of_the_exact_value_scaled_by_x() {
        for (name, f, exact) in [
            (
                "gelu erf",
                gelu_erf as fn(f32) -> f32,
                exact_gelu_erf as fn(f64) -> f64,
            ),
            ("gelu tanh", gelu_tanh, exact_gelu_tanh),
        ] {
            // Beyond ±1e4 x³ overflows f32 in the tanh form; the limits are checked below.
            let xs = both_signs().filter(|x| x.abs() < 1e4);
            let (worst, at) = worst_scaled_error(xs, f, exact);
            assert!(worst < 3e-7, "{name}: error {worst:e} at {at}");
        }
    }

    #[test]
    fn the_gelu_derivatives_are_the_derivatives_and_within_1e_6() {
        for (name, grad, exact) in [
            (
                "gelu erf",
                gelu_erf_grad as fn(f32) -> f32,
                exact_gelu_erf as fn(f64) -> f64,
            ),
            ("gelu tanh", gelu_tanh_grad, exact_gelu_tanh),
        ] {
            // Against the finite difference of the exact function: the formula is its
            // derivative (a wrong factor or sign would be off by far more than 1e-6).
            let xs = (-80_000..=80_000).map(|i| i as f32 * 1e-4); // −8 ..= 8
            let (worst, at) = worst_scaled_error(xs, grad, |x| derivative(exact, x));
            assert!(worst < 1e-6, "{name}': error {worst:e} at {at}");
        }
    }

    #[test]
    fn the_gelus_keep_the_special_values() {
        for f in [gelu_erf, gelu_tanh] {
            assert_eq!(f(0.0), 0.0);
            assert_eq!(f(f32::INFINITY), f32::INFINITY);
            assert!(f(f32::NAN).is_nan());
            assert_eq!(f(50.0), 50.0);
            assert_eq!(f(-50.0), 0.0);
        }
        for grad in [gelu_erf_grad, gelu_tanh_grad] {
            assert_eq!(grad(0.0), 0.5);
            assert_eq!(grad(50.0), 1.0);
            assert_eq!(grad(-50.0), 0.0);
            assert!(grad(f32::NAN).is_nan());
        }
    }

    #[test]
    fn powf_is_libm_s() {
        assert_eq!(powf(2.0, 10.0), 1024.0);
        assert_eq!(powf(9.0, 0.5), 3.0);
        assert_eq!(powf(0.0, 0.0), 1.0);
        assert!(powf(-8.0, 1.0 / 3.0).is_nan());
        assert_eq!(powf(1.7, 2.3), libm::powf(1.7, 2.3));
    }
}
