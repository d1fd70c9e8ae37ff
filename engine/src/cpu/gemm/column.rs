//! Products with one column (`n = 1`, a matrix times a vector), such as additive
//! attention's scores `tanh(q + k) · w`: the blocked driver would pad the one column to a
//! tile of 16 or 32 and compute them all, so this loop computes the one column instead,
//! reading `a` in place, 16 rows side by side.
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
    // Where a(i, p) is: rows of k values, or (transposed) steps of m values.
    let (row_step, p_step) = if a.transposed { (1, m) } else { (k, 1) };
    for (i0, out) in (0..m).step_by(ROWS).zip(out.chunks_mut(ROWS)) {
        let rows = out.len();
        let mut total = [0.0f32; ROWS];
        for (block, p0) in (0..k).step_by(KC).enumerate() {
            let kc = KC.min(k - p0);
            // `ROWS` independent chains, one per row, each in order of p.
            let mut sums = [0.0f32; ROWS];
            for (p, &b_p) in (p0..p0 + kc).zip(&b[p0..p0 + kc]) {
                let step = &a.data[i0 * row_step + p * p_step..];
                for (r, sum) in sums.iter_mut().enumerate().take(rows) {
                    *sum = step[r * row_step].mul_add(b_p, *sum);
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
