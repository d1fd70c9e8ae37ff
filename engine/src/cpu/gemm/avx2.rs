//! The AVX2 micro-kernel: one 6 × 16 tile of the result, held in 12 AVX registers while
//! `kc` steps along `k` add one outer product each.
//!
//! The same loop as the AVX-512 kernel (`avx512.rs`), for CPUs whose registers hold 8
//! values and number 16: each step loads one row of the packed `b` panel (two registers)
//! and, for each of the 6 rows, broadcasts one value of `a` and multiplies-and-adds it into
//! that row's two accumulators: 12 fused multiply-adds for 8 loads. 12 accumulators, the
//! two rows of `b` and a broadcast value take 15 of the 16 registers. This is the tile
//! shape of BLIS's and OpenBLAS's kernels for the same CPUs.
//!
//! Every entry of the tile is `Σₚ a[r, p] · b[p, c]` summed in order of `p` with one
//! rounding per step (a fused multiply-add): the same operations, in the same order, as the
//! AVX-512 and portable kernels, so the same bits.

use std::arch::x86_64::{
    __m256, _MM_HINT_T0, _mm_prefetch, _mm256_add_ps, _mm256_fmadd_ps,
    _mm256_loadu_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
};

use super::{MicroKernel, check_tile};

/// Rows of a tile.
const MR: usize = 6;
/// Columns of a tile: two registers.
const NR: usize = 16;
/// Lanes of an AVX register of `f32`.
const LANES: usize = 8;

/// How many steps ahead the kernel asks for the rows of `b` it will read (512 bytes ahead,
/// as the AVX-512 kernel).
const PREFETCH_STEPS: usize = 8;

/// The kernel of [`KernelPath::Avx2`](crate::kernels::KernelPath::Avx2).
pub(super) struct Avx2;

impl MicroKernel<MR, NR> for Avx2 {
    unsafe fn tile<const STEP_MAJOR: bool>(
        kc: usize,
        a: (&[f32], usize),
        b: &[f32],
        c: (&mut [f32], usize),
        accumulate: bool,
    ) {
        // SAFETY: the caller checked that the CPU has AVX2 and FMA (the trait's contract).
        unsafe { tile::<STEP_MAJOR>(kc, a, b, c, accumulate) }
    }
}

/// [`MicroKernel::tile`] for a 6 × 16 tile.
///
/// Panics when a slice is too short for what the tile reads or writes.
#[target_feature(enable = "avx2,fma")]
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
    let mut acc: [[__m256; 2]; MR] = [[_mm256_setzero_ps(); 2]; MR];
    let (a, b) = (a.as_ptr(), b.as_ptr());
    for p in 0..kc {
        // SAFETY: `check_tile`'s assertions: step p reads a at p·p_step + r·row_step ≤
        // (kc - 1)·p_step + (MR - 1)·row_step < a.len(), and b at p·NR + 0..NR < kc·NR ≤
        // b.len(). Unaligned loads accept any address.
        unsafe {
            // A prefetch is only a hint: it never faults, even past the end of `b`.
            _mm_prefetch::<_MM_HINT_T0>(
                b.wrapping_add((p + PREFETCH_STEPS) * NR).cast(),
            );
            let b_row = b.add(p * NR);
            let b0 = _mm256_loadu_ps(b_row);
            let b1 = _mm256_loadu_ps(b_row.add(LANES));
            let a_step = a.add(p * p_step);
            for (r, row) in acc.iter_mut().enumerate() {
                let a_rp = _mm256_set1_ps(*a_step.add(r * row_step));
                row[0] = _mm256_fmadd_ps(a_rp, b0, row[0]);
                row[1] = _mm256_fmadd_ps(a_rp, b1, row[1]);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let out = &mut c[r * ldc..r * ldc + NR];
        for (half, &sum) in out.chunks_exact_mut(LANES).zip(row) {
            let at = half.as_mut_ptr();
            // SAFETY: `half` is 8 values of `c`, as many as one register holds.
            unsafe {
                let value = if accumulate {
                    _mm256_add_ps(_mm256_loadu_ps(at), sum)
                } else {
                    sum
                };
                _mm256_storeu_ps(at, value);
            }
        }
    }
}
