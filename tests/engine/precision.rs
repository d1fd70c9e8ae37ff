//! The engine's f16 and bf16 conversions (`engine::precision`) against the `half` crate
//! and against known bit patterns: every 16-bit pattern round-trips through `f32`; every
//! `f32` near each rounding boundary, and millions of others, rounds as `half` rounds it;
//! ties go to even; overflow, subnormals, signed zeros and NaN payloads; and the
//! `to_precision` op, forward and backward.

use engine::Tensor;
use engine::precision::{
    Precision, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16,
};
use half::{bf16, f16};

/// Bits of two NaNs compare by bits, so that a NaN's payload is checked too.
fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

#[test]
fn every_f16_and_bf16_pattern_reads_as_half_reads_it_and_round_trips_exactly() {
    for h in 0..=u16::MAX {
        let x = f16_to_f32(h);
        assert!(same_f32(x, f16::from_bits(h).to_f32()), "f16 {h:#06x}");
        // Back to the same pattern: every f16 is an f32 (a NaN keeps its payload, quiet).
        let expected = if x.is_nan() { h | 0x0200 } else { h };
        assert_eq!(f32_to_f16(x), expected, "f16 {h:#06x} through {x:e}");
        let y = bf16_to_f32(h);
        assert!(same_f32(y, bf16::from_bits(h).to_f32()), "bf16 {h:#06x}");
        let expected = if y.is_nan() { h | 0x0040 } else { h };
        assert_eq!(f32_to_bf16(y), expected, "bf16 {h:#06x} through {y:e}");
    }
}

/// f32 patterns around every boundary where rounding changes: each f16 and bf16 value,
/// the midpoints between neighbours, and a few units of f32 either side of those.
fn near_boundaries(to_f32: fn(u16) -> f32) -> Vec<f32> {
    let mut xs = Vec::new();
    for h in 0..u16::MAX {
        let (a, b) = (to_f32(h), to_f32(h + 1));
        if !a.is_finite() || !b.is_finite() || (a < 0.0) != (b < 0.0) {
            continue;
        }
        let mid = ((f64::from(a) + f64::from(b)) / 2.0) as f32;
        for centre in [a, mid] {
            for step in -2i32..=2 {
                xs.push(f32::from_bits(centre.to_bits().wrapping_add_signed(step)));
            }
        }
    }
    xs
}

#[test]
fn f32_values_at_every_rounding_boundary_round_as_half_rounds_them() {
    for x in near_boundaries(f16_to_f32) {
        assert_eq!(
            f32_to_f16(x),
            f16::from_f32(x).to_bits(),
            "f16 of {x:e} ({:#010x})",
            x.to_bits()
        );
    }
    for x in near_boundaries(bf16_to_f32) {
        assert_eq!(
            f32_to_bf16(x),
            bf16::from_f32(x).to_bits(),
            "bf16 of {x:e} ({:#010x})",
            x.to_bits()
        );
    }
}

#[test]
fn millions_of_f32_patterns_round_as_half_rounds_them() {
    // Every 997th pattern of the 2³² (4.3 million), NaNs and infinities included.
    for bits in (0..=u32::MAX).step_by(997) {
        let x = f32::from_bits(bits);
        assert_eq!(
            f32_to_f16(x),
            f16::from_f32(x).to_bits(),
            "f16 of {bits:#010x}"
        );
        assert_eq!(
            f32_to_bf16(x),
            bf16::from_f32(x).to_bits(),
            "bf16 of {bits:#010x}"
        );
    }
}

#[test]
fn known_bit_patterns() {
    // Ties to even: 1 + 2⁻¹¹ is halfway between 1 and 1 + 2⁻¹⁰, and goes to 1 (even);
    // 1 + 3·2⁻¹¹ is halfway between 1 + 2⁻¹⁰ and 1 + 2⁻⁹, and goes to the even 1 + 2⁻⁹.
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
    assert_eq!(f32_to_bf16(1.0 + 2f32.powi(-8)), 0x3f80);
    assert_eq!(f32_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
    // The largest finite f16, and where rounding reaches infinity: 65520 is halfway to
    // 65536, which f16 cannot hold, and ties to the even pattern, infinity.
    assert_eq!(f32_to_f16(65504.0), 0x7bff);
    assert_eq!(f32_to_f16(65519.996), 0x7bff);
    assert_eq!(f32_to_f16(65520.0), 0x7c00);
    assert_eq!(f32_to_f16(-1e9), 0xfc00);
    assert_eq!(f32_to_f16(-1e6), 0xfc00);
    assert_eq!(f32_to_f16(-1e4), 0xf0e2); // -10000 is an f16
    // Subnormals: the smallest, 2⁻²⁴, and half of it (a tie, to the even 0); the largest
    // subnormal and the smallest normal.
    assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
    assert_eq!(f32_to_f16(2f32.powi(-25)), 0x0000);
    assert_eq!(f32_to_f16(1.5 * 2f32.powi(-25)), 0x0001);
    assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x0400), 2f32.powi(-14));
    // Signed zeros and infinities keep their sign.
    assert_eq!(f32_to_f16(-0.0), 0x8000);
    assert_eq!(f32_to_bf16(-0.0), 0x8000);
    assert_eq!(f32_to_f16(f32::NEG_INFINITY), 0xfc00);
    assert_eq!(f32_to_bf16(f32::INFINITY), 0x7f80);
    // NaN: sign and payload's top bits kept, quiet bit set.
    let signalling = f32::from_bits(0xff80_2001); // sign set, payload 0x2001
    assert_eq!(f32_to_f16(signalling), 0xfe01);
    assert_eq!(f32_to_bf16(signalling), 0xffc0);
    // bf16 keeps f32's range: f32::MAX rounds up past the largest bf16 to infinity, and
    // -1e9 stays finite.
    assert_eq!(f32_to_bf16(f32::MAX), 0x7f80);
    assert_eq!(bf16_to_f32(f32_to_bf16(-1e9)), -998_244_352.0);
}

#[test]
fn the_formats_facts() {
    assert_eq!(Precision::F16.max(), 65504.0);
    assert_eq!(Precision::F16.epsilon(), 2f32.powi(-10));
    assert_eq!(Precision::F16.min_positive(), 2f32.powi(-14));
    assert_eq!(Precision::Bf16.epsilon(), 2f32.powi(-7));
    assert_eq!(Precision::Bf16.max(), bf16::MAX.to_f32());
    assert_eq!(Precision::Bf16.min_positive(), bf16::MIN_POSITIVE.to_f32());
    assert_eq!(Precision::F32.round(0.1), 0.1);
    assert_eq!(format!("{}", Precision::Bf16), "bfloat16");
}

#[test]
fn to_precision_rounds_values_and_their_gradient() {
    let x = Tensor::from_vec(vec![1.0 + 1e-4, 3.0, -2e-8, 7e4], [4]).requires_grad_();
    let y = x.to_precision(Precision::F16);
    assert_eq!(y.to_vec(), vec![1.0, 3.0, -0.0, f32::INFINITY]);
    // The upstream gradient is rounded too: 1e-8 underflows in f16, 1e-4 loses digits.
    let g = Tensor::from_vec(vec![1e-8, 1e-4, 0.1, 1.0], [4]);
    y.backward_with(&g);
    let expected: Vec<f32> = [1e-8f32, 1e-4, 0.1, 1.0]
        .iter()
        .map(|&v| f16::from_f32(v).to_f32())
        .collect();
    assert_eq!(x.grad().unwrap().to_vec(), expected);
    assert_eq!(expected[0], 0.0);
    // F32 is the identity, forward and back.
    let z = Tensor::from_vec(vec![0.1, -3.3], [2]).requires_grad_();
    let w = z.to_precision(Precision::F32);
    assert_eq!(w.to_vec(), z.to_vec());
    w.backward_with(&Tensor::from_vec(vec![1e-30, 2.0], [2]));
    assert_eq!(z.grad().unwrap().to_vec(), vec![1e-30, 2.0]);
}
