//! Products with one column (`n = 1`, a matrix times a vector), such as additive
//! attention's scores `tanh(q + k) · w`: the blocked driver would pad the one column to a
//! tile of 16 or 32 and compute them all, so these loops compute the one column instead,
//! reading `a` in place: 16 rows side by side when it is row-major, runs of 1024 rows one
//! step after another when it is stored transposed.
//!
//! Each element is summed as every product in the engine defines it (`gemm/mod.rs`): in
//! blocks of `KC` steps, one fused multiply-add per step from zero, the blocks added in
//! order. `f32::mul_add` is that fused multiply-add; compiled for AVX2 or AVX-512 it is one
//! instruction over 8 or 16 rows, on aarch64 (the NEON and the portable paths alike) one
//! over 4 rows, and on the x86-64 baseline a call to the exact `fmaf`.

use super::View;
use super::blocked::KC;
use crate::kernels::KernelPath;

/// Rows computed side by side: as many independent chains of multiply-adds, which the
/// CPU overlaps.
const ROWS: usize = 16;

/// `out = a · b` for `b` of one column (`b.data` holds its `k` values either way it is
/// stored). The CPU must support `path`.
pub(super) fn product(path: KernelPath, a: View, b: View, out: &mut [f32]) {
    debug_assert!(b.cols == 1 && path.is_supported());
    match path {
        // SAFETY: the caller checked that the CPU supports the path.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe { product_avx512(a, b.data, out) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe { product_avx2(a, b.data, out) },
        _ => product_portable(a, b.data, out),
    }
}

/// [`product_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn product_avx512(a: View, b: &[f32], out: &mut [f32]) {
    product_portable(a, b, out)
}

/// [`product_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn product_avx2(a: View, b: &[f32], out: &mut [f32]) {
    product_portable(a, b, out)
}

#[inline(always)]
fn product_portable(a: View, b: &[f32], out: &mut [f32]) {
    let (m, k) = (a.rows, a.cols);
    if a.transposed {
        return steps(a.data, (m, k), b, out);
    }
    // `a` is row-major: row i is a[i·k..(i + 1)·k].
    for (i0, out) in (0..m).step_by(ROWS).zip(out.chunks_mut(ROWS)) {
        let rows = out.len();
        let a_rows = &a.data[i0 * k..(i0 + rows) * k];
        let mut total = [0.0f32; ROWS];
        for (block, p0) in (0..k).step_by(KC).enumerate() {
            let end = k.min(p0 + KC);
            // `ROWS` independent chains, one per row, each in order of p.
            let mut sums = [0.0f32; ROWS];
            let mut p = p0;
            if rows == ROWS {
                // A whole run of rows: `ROWS` steps of every row at a time, turned into
                // steps of `ROWS` values (a transpose in registers), so each step is one
                // vector multiply-add instead of `ROWS` scalar ones.
                while p + ROWS <= end {
                    let mut steps = [[0.0f32; ROWS]; ROWS];
                    for (r, row) in a_rows.chunks_exact(k).enumerate() {
                        for (step, &v) in steps.iter_mut().zip(&row[p..p + ROWS]) {
                            step[r] = v;
                        }
                    }
                    for (step, &b_p) in steps.iter().zip(&b[p..p + ROWS]) {
                        for (sum, &a_rp) in sums.iter_mut().zip(step) {
                            *sum = a_rp.mul_add(b_p, *sum);
                        }
                    }
                    p += ROWS;
                }
            }
            for (p, &b_p) in (p..end).zip(&b[p..end]) {
                for (sum, row) in sums.iter_mut().zip(a_rows.chunks_exact(k)) {
                    *sum = row[p].mul_add(b_p, *sum);
                }
            }
            if block == 0 {
                total = sums;
            } else {
                total.iter_mut().zip(sums).for_each(|(t, s)| *t += s);
            }
        }
        out.copy_from_slice(&total[..rows]);
    }
}

/// Rows of `a` computed together when `a` is stored transposed (`[k, m]`, the `m` values of
/// each step side by side, as in the gradient `Aᵀ · g`).
const STEP_ROWS: usize = 1024;

/// [`product_portable`] for `a` stored transposed: for each run of [`STEP_ROWS`] rows, the
/// steps one after another, each adding `a(i, p) · b[p]` into the run's sums, so `a` is read
/// in runs of contiguous values (reading 16 rows across all `k` steps instead would touch
/// `k` places `m` values apart for every 16 rows). Each row's sum is still one chain of
/// fused multiply-adds in order of `p` within a block of `KC`, the blocks added in order.
#[inline(always)]
fn steps(a: &[f32], (m, k): (usize, usize), b: &[f32], out: &mut [f32]) {
    if k == 0 {
        return out.fill(0.0); // every entry is an empty sum
    }
    let mut sums = [0.0f32; STEP_ROWS];
    for (i0, out) in (0..m).step_by(STEP_ROWS).zip(out.chunks_mut(STEP_ROWS)) {
        let rows = out.len();
        for (block, p0) in (0..k).step_by(KC).enumerate() {
            let sums = &mut sums[..rows];
            sums.fill(0.0);
            for (p, &b_p) in b.iter().enumerate().skip(p0).take(KC) {
                let step = &a[p * m + i0..p * m + i0 + rows];
                for (sum, &a_ip) in sums.iter_mut().zip(step) {
                    *sum = a_ip.mul_add(b_p, *sum);
                }
            }
            if block == 0 {
                out.copy_from_slice(sums);
            } else {
                for (o, &sum) in out.iter_mut().zip(sums.iter()) {
                    *o += sum;
                }
            }
        }
    }
}
