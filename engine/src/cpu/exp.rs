//! `exp` as a short polynomial that the compiler turns into SIMD instructions, for softmax.
//!
//! The library `exp` is a function call per element, and softmax over the last dimension
//! spent most of its time in those calls. This version is the classic one of Cephes'
//! `expf` (also in Eigen and SLEEF's simplest variant): write `x = n·ln 2 + r` with `n` a
//! whole number and `|r| ≤ ln 2 / 2`, approximate `eʳ` by a polynomial, and multiply by
//! `2ⁿ`, which is built directly from its bits. It has no branch, so a loop of it
//! vectorises, and it is within 1e-7 of the exact value relative to it, about one unit in
//! the last place (tested over the whole range).
//!
//! It keeps what softmax relies on: `exp(-∞) = 0` exactly (a masked position gets a weight
//! of exactly 0), `exp(0) = 1` exactly, `exp(+∞) = +∞`, and NaN stays NaN. Below
//! `ln` of the smallest normal `f32` it returns 0 instead of a subnormal.

/// `ln 2` split in two: `LN2_HI` has few significant bits, so `n · LN2_HI` is exact for
/// every `n` used here and `x − n·LN2_HI − n·LN2_LO` keeps the precision of `r`.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;

/// The largest `f32` whose exponential is finite: above it `eˣ` rounds to `+∞`.
const OVERFLOW: f32 = 88.722_83;
/// The smallest `f32` whose exponential is a normal `f32`: below it `eˣ` is a subnormal
/// or 0, and this `exp` returns 0.
const UNDERFLOW: f32 = -87.336_54;

/// `1.5 · 2²³`: adding and subtracting it rounds an `f32` of magnitude below 2²² to the
/// nearest whole number, with two additions that vectorise on every target.
const ROUND: f32 = 12_582_912.0;

/// `eˣ` (see the [module](self) documentation for how, and how exactly).
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
    let clamped = x.clamp(UNDERFLOW, OVERFLOW);
    // Rounded to the nearest whole number by adding ROUND: the last bits of `shifted` then
    // hold n itself, read as an integer below without a float-to-integer conversion (whose
    // saturating rules do not vectorise).
    let shifted = clamped * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (clamped - n * LN2_HI) - n * LN2_LO;
    let p = P.iter().fold(0.0, |acc, &c| acc * r + c);
    let e_r = (p * (r * r) + r) + 1.0;
    // 2ⁿ from the bits of two powers of two (exponent field k + 127, mantissa 0): n is in
    // [-126, 128] and 2¹²⁸ is not an `f32`, but both halves of n are small. Multiplying by
    // a power of two is exact, so the result is eʳ·2ⁿ rounded once. (For a NaN `x` the
    // integer is meaningless, hence the wrapping arithmetic, and the result is NaN anyway.)
    let n = (shifted.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let power_of_two = |k: i32| f32::from_bits((k.wrapping_add(127) as u32) << 23);
    let e = (e_r * power_of_two(n >> 1)) * power_of_two(n.wrapping_sub(n >> 1));
    if x < UNDERFLOW {
        0.0
    } else if x > OVERFLOW {
        f32::INFINITY
    } else {
        e // NaN stays NaN: the clamp, and every step after it, keep it
    }
}

#[cfg(test)]
mod tests {
    use super::{OVERFLOW, UNDERFLOW, exp};

    #[test]
    fn exp_is_within_1e_7_of_the_exact_value_relative_to_it() {
        let mut worst = 0.0f64;
        let mut x = -87.3f32;
        while x < 88.7 {
            let exact = (x as f64).exp();
            worst = worst.max(((exp(x) as f64) - exact).abs() / exact);
            x += 0.000_731;
        }
        assert!(worst < 1e-7, "worst relative error {worst:e}");
    }

    #[test]
    fn exp_keeps_the_values_softmax_relies_on() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-1e6), 0.0);
        assert_eq!(exp(-88.0), 0.0, "below the smallest normal f32");
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(100.0), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(1.0), std::f32::consts::E);
        assert!(exp(88.7) > 3.2e38 && exp(88.7).is_finite());
        // The edges: finite up to OVERFLOW and +∞ after it; normal from UNDERFLOW on and 0
        // below it.
        assert!(exp(OVERFLOW).is_finite() && exp(OVERFLOW) > 3.40e38);
        assert_eq!(exp(OVERFLOW.next_up()), f32::INFINITY);
        assert!(exp(UNDERFLOW) >= f32::MIN_POSITIVE);
        assert_eq!(exp(UNDERFLOW.next_down()), 0.0);
        assert!(
            exp(-87.3) > 1.21e-38 && exp(-87.3) < 1.23e-38,
            "e^-87.3 ≈ 1.219e-38"
        );
    }
}
