//! The AVX-512 micro-kernel: one 12 × 32 tile of the result, held in 24 AVX-512 registers
//! while `kc` steps along `k` add one outer product each.
//!
//! Each step loads one row of the packed `b` panel (two registers of 16 values) and, for
//! each of the 12 rows, broadcasts one value of `a` and multiplies-and-adds it into that
//! row's two accumulators: 24 fused multiply-adds for 14 loads. Keeping that ratio high is
//! the point of the tile's shape: a CPU can issue two fused multiply-adds per cycle but only
//! a few loads, and with 16 × 16 tiles (17 loads for 16 multiply-adds) the loads, not the
//! arithmetic, set the pace. 24 accumulators plus the two rows of `b` and a broadcast value
//! fit in AVX-512's 32 registers.
//!
//! Every entry of the tile is `Σₚ a[r, p] · b[p, c]` summed in order of `p` with one
//! rounding per step (a fused multiply-add), whatever the tile's position or the thread
//! that computes it.

use std::arch::x86_64::{
    __m512, _MM_HINT_T0, _mm_prefetch, _mm512_add_ps, _mm512_fmadd_ps,
    _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
};

use super::{MicroKernel, check_tile};

/// Rows of a tile.
const MR: usize = 12;
/// Columns of a tile: two registers.
const NR: usize = 32;
/// Lanes of an AVX-512 register of `f32`.
const LANES: usize = 16;

/// The kernel of [`KernelPath::Avx512`](crate::kernels::KernelPath::Avx512).
pub(super) struct Avx512;

impl MicroKernel<MR, NR> for Avx512 {
    unsafe fn tile<const STEP_MAJOR: bool>(
        kc: usize,
        a: (&[f32], usize),
        b: &[f32],
        c: (&mut [f32], usize),
        accumulate: bool,
    ) {
        // SAFETY: the caller checked that the CPU has AVX-512F (the trait's contract).
        unsafe { tile::<STEP_MAJOR>(kc, a, b, c, accumulate) }
    }
}

/// How many steps ahead the kernel asks for the rows of `b` it will read (1 KiB ahead). The
/// strip of `b` streams in from the L2 cache, and the CPU's own prefetching does not always
/// keep up: on a shared machine, asking ahead took the median of a 512 × 512 product from
/// 3.2 to 2.9 ms in its slow phases, and its fastest run from 2.14 to 1.92 ms.
const PREFETCH_STEPS: usize = 8;

/// [`MicroKernel::tile`] for a 12 × 32 tile.
///
/// Panics when a slice is too short for what the tile reads or writes.
#[target_feature(enable = "avx512f")]
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
    let mut acc: [[__m512; 2]; MR] = [[_mm512_setzero_ps(); 2]; MR];
    let (a, b) = (a.as_ptr(), b.as_ptr());
    for p in 0..kc {
        // SAFETY: `check_tile`'s assertions: step p reads a at p·p_step + r·row_step ≤
        // (kc - 1)·p_step + (MR - 1)·row_step < a.len(), and b at p·NR + 0..NR < kc·NR ≤
        // b.len(). Unaligned loads accept any address.
        unsafe {
            // A prefetch is only a hint: it never faults, even past the end of `b`.
            let ahead = b.wrapping_add((p + PREFETCH_STEPS) * NR);
            _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
            _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(LANES).cast());
            let b_row = b.add(p * NR);
            let b0 = _mm512_loadu_ps(b_row);
            let b1 = _mm512_loadu_ps(b_row.add(LANES));
            let a_step = a.add(p * p_step);
            for (r, row) in acc.iter_mut().enumerate() {
                let a_rp = _mm512_set1_ps(*a_step.add(r * row_step));
                row[0] = _mm512_fmadd_ps(a_rp, b0, row[0]);
                row[1] = _mm512_fmadd_ps(a_rp, b1, row[1]);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let out = &mut c[r * ldc..r * ldc + NR];
        for (half, &sum) in out.chunks_exact_mut(LANES).zip(row) {
            let at = half.as_mut_ptr();
            // SAFETY: `half` is 16 values of `c`, as many as one register holds.
            unsafe {
                let value = if accumulate {
                    _mm512_add_ps(_mm512_loadu_ps(at), sum)
                } else {
                    sum
                };
                _mm512_storeu_ps(at, value);
            }
        }
    }
}
