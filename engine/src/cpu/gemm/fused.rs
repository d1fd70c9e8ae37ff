//! `a · b + c` rounded once, exactly as [`f32::mul_add`], in a form that vectorises on a
//! CPU without a fused multiply-add instruction: the portable micro-kernel's step.
//!
//! On the x86-64 baseline (no FMA instruction), `mul_add` is a call to the C library's
//! `fmaf`: one call per element, which spills the tile's sums around it and cannot be
//! vectorised. But `f32`s are small enough to be fused through `f64`:
//! - `a · b` of two `f32`s (24 significant bits each) has at most 48 bits, so the `f64`
//!   product is exact;
//! - adding `c` in `f64` rounds once, to 53 bits, and rounding that to `f32` rounds again.
//!
//! Rounding twice gives the once-rounded result except when the first rounding lands
//! exactly on a point halfway between two `f32`s (it then breaks a tie the exact value did
//! not have). Every such halfway point of the normal `f32` range is an `f64` whose last 29
//! bits are `1000…0`: a result that is not one of them, and is a normal `f32` magnitude, is
//! exact. (Rounding to `f64` is monotonic and every halfway point is an `f64`, so the
//! exact value and its `f64` rounding lie between the same two halfway points, and round to
//! the same `f32`.) A zero is exact too: the exact sum is a multiple of 2⁻²⁹⁸, far above
//! the smallest `f64`, so it rounds to zero only when it is zero, with the sign IEEE gives
//! both, and so is an infinity (from an infinite input). The rest (a halfway point, a
//! result below 2⁻¹²⁶, where the `f32`s are subnormal and their halfway points have other
//! bits, or a NaN) is rare, and goes to `mul_add`.

/// Whether the target's baseline has a fused multiply-add instruction, which `mul_add`
/// then compiles to (aarch64 always; x86-64 built with `-C target-feature=+fma`).
const HARDWARE_FMA: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// The smallest normal `f32`, 2⁻¹²⁶.
const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64;

/// The low 29 bits of an `f64`: the bits an `f32` does not have.
const BELOW_F32: u64 = (1 << 29) - 1;

/// Those bits of a point halfway between two normal `f32`s.
const HALFWAY: u64 = 1 << 28;

/// `a · b + c` rounded to `f64` and then to `f32`, and whether that is `a.mul_add(b, c)`
/// (see the module's docs); when it is not, the value is only close to it.
#[inline(always)]
pub(super) fn through_f64(a: f32, b: f32, c: f32) -> (f32, bool) {
    let sum = f64::from(a) * f64::from(b) + f64::from(c);
    let magnitude = sum.abs();
    // An infinite sum (an infinite input) is exact too; a NaN fails the comparison.
    let exact = sum == 0.0
        || (sum.to_bits() & BELOW_F32 != HALFWAY && magnitude >= MIN_NORMAL);
    (sum as f32, exact)
}

/// `row[j] = a · b[j] + row[j]`, rounded once, for every `j`: the same bits as `mul_add`
/// for each. Without an FMA instruction, the whole row goes through `f64` in one pass that
/// vectorises, and only a row where some element needs it (see [`through_f64`]) is done
/// again with `mul_add`.
#[inline(always)]
pub(super) fn row_mul_add<const N: usize>(a: f32, b: &[f32; N], row: &mut [f32; N]) {
    if HARDWARE_FMA {
        for (sum, &b) in row.iter_mut().zip(b) {
            *sum = a.mul_add(b, *sum);
        }
        return;
    }
    let mut fused = [0.0f32; N];
    let mut exact = true;
    for ((out, &b), &sum) in fused.iter_mut().zip(b).zip(row.iter()) {
        let (value, is_exact) = through_f64(a, b, sum);
        *out = value;
        exact &= is_exact;
    }
    if exact {
        *row = fused;
    } else {
        for (sum, &b) in row.iter_mut().zip(b) {
            *sum = a.mul_add(b, *sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `through_f64`, whenever it says it is exact, and `row_mul_add`, always, give the
    /// bits of `mul_add`.
    fn check(a: f32, b: f32, c: f32) {
        let want = a.mul_add(b, c);
        let (value, exact) = through_f64(a, b, c);
        if exact {
            assert_eq!(
                value.to_bits(),
                want.to_bits(),
                "through f64: {a:e} · {b:e} + {c:e} = {value:e}, mul_add {want:e}"
            );
        }
        let mut row = [c; 3];
        row_mul_add(a, &[b, 1.0, -b], &mut row);
        assert_eq!(row[0].to_bits(), want.to_bits(), "{a:e} · {b:e} + {c:e}");
        assert_eq!(row[1].to_bits(), a.mul_add(1.0, c).to_bits());
        assert_eq!(row[2].to_bits(), a.mul_add(-b, c).to_bits());
    }

    /// A small generator of bit patterns (xorshift), so the test needs nothing else.
    fn bits(state: &mut u64) -> u32 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 32) as u32
    }

    #[test]
    fn a_tie_made_by_the_first_rounding_is_detected() {
        // a · b = 2⁻²⁴ − 2⁻⁶⁰ exactly; c = 1 + 2⁻²³. The exact sum lies just below the
        // point halfway between 1 + 2⁻²³ and 1 + 2⁻²², so it rounds down to 1 + 2⁻²³; in
        // f64 the 2⁻⁶⁰ is lost, the sum is that halfway point, and its tie goes to the even
        // 1 + 2⁻²². Rounding twice gives the wrong f32 here.
        let (a, b) = (
            2f32.powi(-12) * (1.0 + 2f32.powi(-18)),
            2f32.powi(-12) * (1.0 - 2f32.powi(-18)),
        );
        let c = 1.0 + 2f32.powi(-23);
        assert_eq!(a.mul_add(b, c), c);
        assert_eq!(
            (f64::from(a) * f64::from(b) + f64::from(c)) as f32,
            1.0 + 2f32.powi(-22)
        );
        assert!(
            !through_f64(a, b, c).1,
            "the halfway point must go to mul_add"
        );
        check(a, b, c);
        check(-a, b, -c);
    }

    #[test]
    fn a_tie_among_subnormal_results_is_detected() {
        // a · b = 2⁻¹⁵⁰ − 2⁻¹⁹⁶ exactly; c = 2⁻¹²⁷ + 2⁻¹⁴⁹, a subnormal f32 with an odd last
        // bit. The exact sum lies just below the point halfway between c and c + 2⁻¹⁴⁹, so
        // it rounds to c; f64 keeps 53 bits down to 2⁻¹⁷⁹ only, its sum is that halfway
        // point, and the tie goes to the even c + 2⁻¹⁴⁹. The halfway points of subnormal
        // f32s do not have the bits of normal ones: only the range check catches this.
        let (a, b) = (
            2f32.powi(-75) * (1.0 + 2f32.powi(-23)),
            2f32.powi(-75) * (1.0 - 2f32.powi(-23)),
        );
        let tiny = f32::from_bits(1); // 2⁻¹⁴⁹
        let c = 2f32.powi(-127) + tiny;
        assert_eq!(a.mul_add(b, c), c);
        assert_eq!(
            (f64::from(a) * f64::from(b) + f64::from(c)) as f32,
            c + tiny
        );
        assert!(
            !through_f64(a, b, c).1,
            "a subnormal result must go to mul_add"
        );
        check(a, b, c);
    }

    #[test]
    fn special_values_zeros_and_tiny_results() {
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1), // the smallest subnormal
            f32::MIN_POSITIVE / 3.0,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-20,
            3e19,
            16_777_217.0,
            0.5,
        ];
        for &a in &specials {
            for &b in &specials {
                for &c in &specials {
                    let want = a.mul_add(b, c);
                    let mut row = [c];
                    row_mul_add(a, &[b], &mut row);
                    if want.is_nan() {
                        assert!(row[0].is_nan(), "{a:e} · {b:e} + {c:e}");
                    } else {
                        check(a, b, c);
                    }
                }
            }
        }
        // Signed zeros: (−0) + (+0) is +0, (−0) + (−0) is −0, as in one fused rounding.
        check(-0.0, 1.0, 0.0);
        check(-0.0, 1.0, -0.0);
        check(2.0, -3.0, 6.0);
        check(2.0, 3.0, -6.0);
    }

    #[test]
    fn random_values_of_every_magnitude_and_of_the_same_magnitude() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            // Any finite bit pattern: every exponent, subnormals included.
            let any = |s: &mut u64| loop {
                let x = f32::from_bits(bits(s));
                if x.is_finite() {
                    return x;
                }
            };
            check(any(&mut state), any(&mut state), any(&mut state));
            // Values near 1, where a · b and c overlap and the sum cancels or carries.
            let near =
                |s: &mut u64| f32::from_bits(0x3f00_0000 | (bits(s) & 0x80ff_ffff));
            check(near(&mut state), near(&mut state), near(&mut state));
            // Integers, whose sums often land on halfway points.
            let int = |s: &mut u64| (bits(s) % 40_000_000) as f32 - 20_000_000.0;
            check(
                int(&mut state),
                (bits(&mut state) % 5) as f32,
                int(&mut state),
            );
        }
    }
}
