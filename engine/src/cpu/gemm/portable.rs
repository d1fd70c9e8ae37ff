//! The portable micro-kernel: one 4 × 16 tile of the result in plain Rust, for any CPU.
//!
//! It is the definition the SIMD kernels are held to, written out: every entry of the tile
//! is `Σₚ a[r, p] · b[p, c]` summed in order of `p`, one [`f32::mul_add`] (a fused
//! multiply-add, rounded once) per step. Compiled without FMA instructions, `mul_add` is a
//! call to the C library's `fmaf`, one per element, so each step of a row goes through
//! `f64` instead, 16 elements in one pass that vectorises, with the same bits
//! ([`row_mul_add`]; `fused.rs` says why they are the same).

use super::fused::row_mul_add;
use super::{MicroKernel, check_tile};

/// Rows of a tile.
const MR: usize = 4;
/// Columns of a tile.
const NR: usize = 16;

/// The kernel of [`KernelPath::Portable`](crate::kernels::KernelPath::Portable).
pub(super) struct Portable;

impl MicroKernel<MR, NR> for Portable {
    unsafe fn tile<const STEP_MAJOR: bool>(
        kc: usize,
        a: (&[f32], usize),
        b: &[f32],
        c: (&mut [f32], usize),
        accumulate: bool,
    ) {
        tile::<STEP_MAJOR>(kc, a, b, c, accumulate)
    }
}

/// [`MicroKernel::tile`] for a 4 × 16 tile.
///
/// Panics when a slice is too short for what the tile reads or writes.
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
    let mut acc = [[0.0f32; NR]; MR];
    for (p, b_row) in b.chunks_exact(NR).take(kc).enumerate() {
        let b_row: &[f32; NR] = b_row.try_into().expect("chunks of NR values");
        for (r, row) in acc.iter_mut().enumerate() {
            row_mul_add(a[p * p_step + r * row_step], b_row, row);
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let out = &mut c[r * ldc..r * ldc + NR];
        for (o, &sum) in out.iter_mut().zip(row) {
            *o = if accumulate { *o + sum } else { sum };
        }
    }
}
