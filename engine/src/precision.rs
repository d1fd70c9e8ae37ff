//! Half-precision numbers: IEEE `binary16` (f16) and bfloat16 (bf16), each 16 bits,
//! converted from and to the engine's `f32` with round-to-nearest-even, bit by bit.
//!
//! The engine computes in `f32` only. What half precision does to a computation is what
//! its rounding does to the values, so [`Precision::round`] (and the op
//! [`Tensor::to_precision`](crate::Tensor::to_precision)) gives each value the nearest
//! number the format can hold, as an `f32`. Every f16 and bf16 value is an `f32` too, so
//! nothing is lost on the way back.
//!
//! | format | sign | exponent | fraction | largest finite | smallest normal | smallest subnormal | gap above 1 (ε) |
//! |---|---|---|---|---|---|---|---|
//! | f32 | 1 | 8 | 23 | 3.40e38 | 1.18e-38 | 1.4e-45 | 2⁻²³ ≈ 1.19e-7 |
//! | f16 | 1 | 5 | 10 | 65504 | 6.10e-5 | 5.96e-8 | 2⁻¹⁰ ≈ 9.77e-4 |
//! | bf16 | 1 | 8 | 7 | 3.39e38 | 1.18e-38 | 9.2e-41 | 2⁻⁷ ≈ 7.81e-3 |
//!
//! f16 keeps more digits in a small range: anything above 65504 (after rounding) becomes
//! infinity, so `-1e9`, the mask fill of many tutorials, is `-∞` in f16. bf16 keeps f32's
//! range with fewer digits: `-1e9` stays finite (as `-998244352`).
//!
//! **Rounding.** A value between two neighbours of the format goes to the nearer; a value
//! exactly halfway goes to the one whose last bit is 0 ("ties to even"), so that rounding
//! errors do not drift one way. Too large a value becomes infinity with its sign, too
//! small a one a subnormal or a signed zero. A NaN stays a NaN: its sign and the top bits
//! of its payload are kept, and its quiet bit is set, as conversion instructions do.
//! These are the `half` crate's conversions and those of the F16C and AVX-512 BF16
//! instructions; the tests compare them on every 16-bit pattern and on millions of `f32`s.

/// A floating-point format that values can be rounded to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The engine's own format: rounding to it changes nothing.
    #[default]
    F32,
    /// IEEE 754 `binary16`: 5 exponent bits, 10 fraction bits.
    F16,
    /// bfloat16: 8 exponent bits (f32's range), 7 fraction bits.
    Bf16,
}

impl Precision {
    /// `x` rounded to the nearest value of this format (ties to even), as an `f32`.
    ///
    /// ```
    /// use engine::precision::Precision;
    /// assert_eq!(Precision::F16.round(1.0 + 1e-4), 1.0); // the gap above 1 is 2⁻¹⁰
    /// assert_eq!(Precision::F16.round(-1e9), f32::NEG_INFINITY); // past 65504
    /// assert_eq!(Precision::Bf16.round(-1e9), -998_244_352.0); // bf16 has f32's range
    /// assert_eq!(Precision::F32.round(0.1), 0.1);
    /// ```
    pub fn round(self, x: f32) -> f32 {
        match self {
            Precision::F32 => x,
            Precision::F16 => f16_to_f32(f32_to_f16(x)),
            Precision::Bf16 => bf16_to_f32(f32_to_bf16(x)),
        }
    }

    /// The largest finite value of the format.
    pub fn max(self) -> f32 {
        match self {
            Precision::F32 => f32::MAX,
            Precision::F16 => 65504.0,
            Precision::Bf16 => bf16_to_f32(0x7f7f),
        }
    }

    /// The smallest positive normal value of the format (below it, values are subnormal
    /// and lose digits, then become 0).
    pub fn min_positive(self) -> f32 {
        match self {
            Precision::F32 | Precision::Bf16 => f32::MIN_POSITIVE,
            Precision::F16 => f16_to_f32(0x0400),
        }
    }

    /// The gap between 1 and the next value of the format (machine epsilon).
    pub fn epsilon(self) -> f32 {
        match self {
            Precision::F32 => f32::EPSILON,
            Precision::F16 => f16_to_f32(0x3c01) - 1.0,
            Precision::Bf16 => bf16_to_f32(0x3f81) - 1.0,
        }
    }

    /// The format's name as PyTorch spells its dtype: `float32`, `float16`, `bfloat16`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "float32",
            Precision::F16 => "float16",
            Precision::Bf16 => "bfloat16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Rounds the 32-bit pattern `bits` right by `shift` bits to the nearest (ties to even):
/// the bits shifted out decide, the "round bit" (the highest of them) first.
fn shift_right_rounding(bits: u32, shift: u32) -> u32 {
    let kept = bits >> shift;
    let round_bit = 1u32 << (shift - 1);
    let below = bits & ((round_bit << 1) - 1); // the bits shifted out
    let up = below > round_bit || (below == round_bit && kept & 1 == 1);
    kept + u32::from(up)
}

/// The f16 bit pattern nearest to `x` (ties to even).
///
/// ```
/// use engine::precision::{f16_to_f32, f32_to_f16};
/// assert_eq!(f32_to_f16(1.0), 0x3c00);
/// assert_eq!(f32_to_f16(65504.0), 0x7bff); // the largest finite f16
/// assert_eq!(f32_to_f16(65520.0), 0x7c00); // halfway to 65536: ties to even, infinity
/// assert_eq!(f16_to_f32(f32_to_f16(1e-8)), 0.0); // below half the smallest subnormal
/// ```
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let fraction = bits & 0x007f_ffff;
    if exponent == 0xff {
        // Infinity keeps its sign; a NaN keeps its payload's top 10 bits, made quiet.
        let nan = if fraction == 0 {
            0
        } else {
            0x0200 | (fraction >> 13)
        };
        return sign | 0x7c00 | nan as u16;
    }
    // f16's exponent bias is 15 where f32's is 127.
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00; // too large for any f16: infinity
    }
    if half_exponent <= 0 {
        // A subnormal f16 (or zero): the significand with its leading 1, shifted so that
        // its units are f16's smallest subnormal, 2⁻²⁴.
        let shift = (14 - half_exponent) as u32;
        if shift > 24 {
            return sign; // below half the smallest subnormal: a signed zero
        }
        let significand = fraction | 0x0080_0000;
        return sign | shift_right_rounding(significand, shift) as u16;
    }
    // A normal f16: exponent and fraction side by side, rounded as one number, so that a
    // fraction rounding up past its top carries into the exponent (and the largest
    // exponent into infinity), which is how the format is laid out.
    let pattern = ((half_exponent as u32) << 23) | fraction;
    sign | shift_right_rounding(pattern, 13) as u16
}

/// The `f32` value of the f16 bit pattern `h` (exact: every f16 is an `f32`; a NaN keeps
/// its payload and is made quiet).
///
/// ```
/// use engine::precision::f16_to_f32;
/// assert_eq!(f16_to_f32(0x3c00), 1.0);
/// assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24)); // the smallest subnormal
/// assert!(f16_to_f32(0x7e00).is_nan());
/// ```
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exponent = u32::from((h >> 10) & 0x1f);
    let fraction = u32::from(h & 0x03ff);
    let bits = match exponent {
        // Zero or a subnormal: fraction × 2⁻²⁴, exact in f32.
        0 => {
            let value = fraction as f32 * 2f32.powi(-24);
            return if sign == 0 { value } else { -value };
        }
        // Infinity, or a NaN: its payload moved to f32's top fraction bits, made quiet.
        0x1f if fraction == 0 => sign | 0x7f80_0000,
        0x1f => sign | 0x7fc0_0000 | (fraction << 13),
        _ => sign | ((exponent + 127 - 15) << 23) | (fraction << 13),
    };
    f32::from_bits(bits)
}

/// The bf16 bit pattern nearest to `x` (ties to even): the top 16 bits of `x`, rounded.
///
/// ```
/// use engine::precision::{bf16_to_f32, f32_to_bf16};
/// assert_eq!(f32_to_bf16(1.0), 0x3f80);
/// assert_eq!(bf16_to_f32(f32_to_bf16(1.0 + 1.0 / 256.0)), 1.0); // a tie: to even
/// assert_eq!(bf16_to_f32(f32_to_bf16(f32::MAX)), f32::INFINITY);
/// ```
pub fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x0040) as u16; // payload's top bits, made quiet
    }
    // Sign, exponent and fraction rounded as one number: a carry out of the fraction
    // goes into the exponent, and out of the largest exponent into infinity.
    let magnitude = shift_right_rounding(bits & 0x7fff_ffff, 16);
    ((bits >> 16) & 0x8000) as u16 | magnitude as u16
}

/// The `f32` value of the bf16 bit pattern `b` (exact: its bits followed by 16 zeros; a
/// NaN is made quiet).
pub fn bf16_to_f32(b: u16) -> f32 {
    let quiet = if b & 0x7fff > 0x7f80 { 0x0040 } else { 0 };
    f32::from_bits(u32::from(b | quiet) << 16)
}
