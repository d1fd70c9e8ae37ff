//! The NEON micro-kernel (aarch64, as in Apple Silicon and Arm servers): one 12 × 8 tile of
//! the result, held in 24 NEON registers while `kc` steps along `k` add one outer product
//! each.
//!
//! A NEON register holds 4 values and there are 32 of them. Each step loads one row of the
//! packed `b` panel (two registers of 4) and the 12 values of `a` for that step (three
//! registers, when `a` is a packed panel), then multiplies-and-adds each `a` value, taken
//! by lane (`fmla v.4s, v.4s, v.s[lane]`, no broadcast needed), into its row's two
//! accumulators: 24 fused multiply-adds for 5 loads. 24 accumulators, 2 registers of `b`
//! and 3 of `a` take 29 of the 32 registers. When `a` is read in place (row-major, so the
//! 12 values of a step are not side by side), each value is loaded into all four lanes
//! (`ld1r`) instead: 14 loads a step.
//!
//! Every entry of the tile is `Σₚ a[r, p] · b[p, c]` summed in order of `p` with one
//! rounding per step (a fused multiply-add, `b · a + acc` here, the same exact product as
//! `a · b + acc`): the same operations, in the same order, as the AVX-512, AVX2 and
//! portable kernels, so the same bits.
//!
//! On paper, for an M-class performance core at about 3.2 GHz with four 128-bit FMA units:
//! 4 lanes × 4 units × 2 flops × 3.2 GHz ≈ 102 GFLOP/s per core at most; the loads (5 per
//! 24 multiply-adds) leave the FMA units the bottleneck. `cargo bench -p benchmarks --bench
//! matmul` measures it on a Mac.

use std::arch::aarch64::{
    float32x4_t, vaddq_f32, vdupq_n_f32, vfmaq_f32, vfmaq_laneq_f32, vld1q_dup_f32,
    vld1q_f32, vst1q_f32,
};

use super::{MicroKernel, check_tile};

/// Rows of a tile: three registers of `a` values.
const MR: usize = 12;
/// Columns of a tile: two registers.
const NR: usize = 8;
/// Lanes of a NEON register of `f32`.
const LANES: usize = 4;

/// The kernel of [`KernelPath::Neon`](crate::kernels::KernelPath::Neon).
pub(super) struct Neon;

impl MicroKernel<MR, NR> for Neon {
    unsafe fn tile<const STEP_MAJOR: bool>(
        kc: usize,
        a: (&[f32], usize),
        b: &[f32],
        c: (&mut [f32], usize),
        accumulate: bool,
    ) {
        // SAFETY: the caller checked that the CPU has NEON (the trait's contract).
        unsafe { tile::<STEP_MAJOR>(kc, a, b, c, accumulate) }
    }
}

/// Adds `a_lanes[lane] · b` into `row` for the four rows whose `a` values one register
/// holds, lane by lane (the lane must be a constant, hence the macro).
macro_rules! four_rows {
    ($acc:ident, $first:expr, $a:expr, $b0:expr, $b1:expr) => {
        four_rows!(@row $acc, $first, 0, $a, $b0, $b1);
        four_rows!(@row $acc, $first + 1, 1, $a, $b0, $b1);
        four_rows!(@row $acc, $first + 2, 2, $a, $b0, $b1);
        four_rows!(@row $acc, $first + 3, 3, $a, $b0, $b1);
    };
    (@row $acc:ident, $r:expr, $lane:literal, $a:expr, $b0:expr, $b1:expr) => {
        $acc[$r][0] = vfmaq_laneq_f32::<$lane>($acc[$r][0], $b0, $a);
        $acc[$r][1] = vfmaq_laneq_f32::<$lane>($acc[$r][1], $b1, $a);
    };
}

/// [`MicroKernel::tile`] for a 12 × 8 tile.
///
/// Panics when a slice is too short for what the tile reads or writes.
#[target_feature(enable = "neon")]
fn tile<const STEP_MAJOR: bool>(
    kc: usize,
    a: (&[f32], usize),
    b: &[f32],
    c: (&mut [f32], usize),
    accumulate: bool,
) {
    let (row_step, p_step) =
        check_tile::<MR, NR>(kc, a, STEP_MAJOR, b, (c.0.len(), c.1));
    let (a, (c, ldc)) = (a.0, c);
    let mut acc: [[float32x4_t; 2]; MR] = [[vdupq_n_f32(0.0); 2]; MR];
    let (a, b) = (a.as_ptr(), b.as_ptr());
    for p in 0..kc {
        // SAFETY: `check_tile`'s assertions: step p reads a at p·p_step + r·row_step ≤
        // (kc - 1)·p_step + (MR - 1)·row_step < a.len() (when STEP_MAJOR, row_step is 1,
        // so the three registers read p·p_step + 0..12), and b at p·NR + 0..NR < kc·NR ≤
        // b.len(). NEON loads accept any address.
        unsafe {
            let b_row = b.add(p * NR);
            let b0 = vld1q_f32(b_row);
            let b1 = vld1q_f32(b_row.add(LANES));
            let a_step = a.add(p * p_step);
            if STEP_MAJOR {
                let a0 = vld1q_f32(a_step);
                let a1 = vld1q_f32(a_step.add(LANES));
                let a2 = vld1q_f32(a_step.add(2 * LANES));
                four_rows!(acc, 0, a0, b0, b1);
                four_rows!(acc, 4, a1, b0, b1);
                four_rows!(acc, 8, a2, b0, b1);
            } else {
                for (r, row) in acc.iter_mut().enumerate() {
                    let a_rp = vld1q_dup_f32(a_step.add(r * row_step));
                    row[0] = vfmaq_f32(row[0], b0, a_rp);
                    row[1] = vfmaq_f32(row[1], b1, a_rp);
                }
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let out = &mut c[r * ldc..r * ldc + NR];
        for (half, &sum) in out.chunks_exact_mut(LANES).zip(row) {
            let at = half.as_mut_ptr();
            // SAFETY: `half` is 4 values of `c`, as many as one register holds.
            unsafe {
                let value = if accumulate {
                    vaddq_f32(vld1q_f32(at), sum)
                } else {
                    sum
                };
                vst1q_f32(at, value);
            }
        }
    }
}
