//! Products with one step along `k` (`[m, 1] · [1, n]`, an outer product), such as the
//! gradient `g · wᵀ` of a product with a vector: the blocked driver would pack both
//! operands and run its micro-kernel for a single step, so this loop computes each element
//! directly, a row at a time.
//!
//! By the definition every product in the engine computes (`gemm/mod.rs`), an element with
//! one step is one fused multiply-add from zero, `a[i].mul_add(b[j], 0.0)`: the product
//! rounded once, and `+0.0` where the product is `-0.0`, as the other kernels give it.

use super::super::pool::{self, Task};
use super::View;
use crate::kernels::KernelPath;

/// `out = a · b` for `a` of one column and `b` of one row (each holds its values in order
/// either way it is stored), on up to `threads` threads, each a run of whole rows. The CPU
/// must support `path`.
pub(super) fn product(
    path: KernelPath,
    a: View,
    b: View,
    out: &mut [f32],
    threads: usize,
) {
    debug_assert!(a.cols == 1 && b.rows == 1 && path.is_supported());
    let (m, n) = (a.rows, b.cols);
    let threads = threads
        .min(m)
        .min(out.len() / MIN_OUTPUTS_PER_THREAD)
        .max(1);
    if threads == 1 {
        return rows_on(path, a.data, b.data, out);
    }
    let per_thread = m.div_ceil(threads);
    pool::run_all(
        a.data
            .chunks(per_thread)
            .zip(out.chunks_mut(per_thread * n))
            .map(|(a, out)| Box::new(move || rows_on(path, a, b.data, out)) as Task)
            .collect(),
    );
}

/// A product split between threads gives each at least this many outputs: one output is
/// a load and a multiply, and handing work to a thread costs microseconds.
const MIN_OUTPUTS_PER_THREAD: usize = 1 << 16;

/// Rows `a[i] · b` into `out`, `out` holding whole rows of `b.len()` values.
fn rows_on(path: KernelPath, a: &[f32], b: &[f32], out: &mut [f32]) {
    match path {
        // SAFETY: the caller checked that the CPU supports the path.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe { rows_avx512(a, b, out) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe { rows_avx2(a, b, out) },
        _ => rows_portable(a, b, out),
    }
}

/// [`rows_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn rows_avx512(a: &[f32], b: &[f32], out: &mut [f32]) {
    rows_portable(a, b, out)
}

/// [`rows_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_avx2(a: &[f32], b: &[f32], out: &mut [f32]) {
    rows_portable(a, b, out)
}

#[inline(always)]
fn rows_portable(a: &[f32], b: &[f32], out: &mut [f32]) {
    for (row, &a_i) in out.chunks_exact_mut(b.len()).zip(a) {
        for (o, &b_j) in row.iter_mut().zip(b) {
            *o = a_i.mul_add(b_j, 0.0);
        }
    }
}
