//! Matrix multiplication, batched over leading dimensions that broadcast.
//!
//! Two kernels compute the same thing:
//! - [`matmul_reference`]: the plain triple loop, in the cache-friendly `i → p → j` order.
//!   It is the definition a reader can check by eye, and the tests hold the fast path to it.
//! - the fast path, used by every op: `gemm::sgemm` (`cpu/gemm/`), which blocks the
//!   matrices for the caches and keeps a tile of the result in SIMD registers (a 12 × 32
//!   tile with AVX-512, 6 × 16 with AVX2, 4 × 16 in portable Rust; threads from a pool that
//!   stays awake between products). Chapter 13 builds each of those steps from scratch, one
//!   at a time. Its result has one definition, the same bits on every CPU (`gemm/mod.rs`
//!   states it).
//!
//! The two differ only in the order in which products are summed (and `sgemm` rounds each
//! step once, with a fused multiply-add), so results agree to float rounding (the tests
//! compare them at 1e-5 relative).
//!
//! Products with at most [`SMALL_M`] rows (a decoding step multiplies one token, or one
//! token per sequence of a small batch) skip `sgemm`, whose packing of the right operand
//! costs more than such a product: [`matmul_small`] reads both operands in place, as
//! `matmul_reference` does for `a · b`, and as dot products of rows for `a · bᵀ`. Which
//! kernel runs depends only on the shapes, so a computation gives the same bits every time.
//!
//! Threads: `sgemm` runs a large product on up to `MATMUL_NUM_THREADS` threads (read once
//! per process; when it is not set, one per physical core). The threads split the result
//! into runs of rows, and every element is still summed by one thread in the same order, so
//! the numbers do not depend on the thread count (a test runs the same products with 1, 2
//! and 3 threads in separate processes and compares the bits).

use super::StridedOffsets;
use super::gemm::{self, View};
use super::lanes::dot;
use super::strided::broadcast_strides;
use crate::kernels;
use crate::spare;

/// `out[m, n] += a[m, k] · b[k, n]` for one pair of row-major matrices, by the definition.
///
/// The loop order is `i → p → j`: the innermost loop walks a row of `b` and a row of `out`,
/// both contiguous, instead of a column of `b` (a stride of `n` floats per step). This is the
/// plain, cache-friendly version; it is not blocked, vectorised by hand or multi-threaded.
// Also the kernel of `a · b` for a few rows (`matmul_small`), where it reads `b` in place.
#[inline(always)]
pub(crate) fn matmul_reference(
    a: &[f32],
    b: &[f32],
    out: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    for i in 0..m {
        let out_row = &mut out[i * n..(i + 1) * n];
        for p in 0..k {
            let a_ip = a[i * k + p];
            let b_row = &b[p * n..(p + 1) * n];
            for (o, &bv) in out_row.iter_mut().zip(b_row) {
                *o += a_ip * bv;
            }
        }
    }
}

/// Products with at most this many rows use [`matmul_small`].
pub(crate) const SMALL_M: usize = 8;

/// Whether a product of `m` rows takes [`matmul_small`] rather than `sgemm`.
fn takes_small_kernel(m: usize, lhs: Lhs) -> bool {
    m <= SMALL_M && lhs == Lhs::AsIs
}

/// `out[m, n] = a[m, k] · b` for a few rows `m`, reading `b` in place: for `a · b` the
/// definition's `i → p → j` loop (each row of the result is a sum of rows of `b`), for
/// `a · bᵀ` one dot product per pair of rows, summed in 8 partial sums. Both loops
/// vectorise; on the AVX2 and AVX-512 paths they are compiled again for those wider
/// registers, with the same operations in the same order (a multiply, then an add: Rust
/// never fuses them on its own), so the same bits.
fn matmul_small(
    a: &[f32],
    b: &[f32],
    rhs: Rhs,
    out: &mut [f32],
    dims: (usize, usize, usize),
) {
    match kernels::active() {
        // SAFETY: `active` names only paths the CPU supports.
        #[cfg(target_arch = "x86_64")]
        kernels::KernelPath::Avx512 => unsafe {
            matmul_small_avx512(a, b, rhs, out, dims)
        },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        kernels::KernelPath::Avx2 => unsafe {
            matmul_small_avx2(a, b, rhs, out, dims)
        },
        _ => matmul_small_portable(a, b, rhs, out, dims),
    }
}

/// [`matmul_small_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn matmul_small_avx512(
    a: &[f32],
    b: &[f32],
    rhs: Rhs,
    out: &mut [f32],
    dims: (usize, usize, usize),
) {
    matmul_small_portable(a, b, rhs, out, dims)
}

/// [`matmul_small_portable`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn matmul_small_avx2(
    a: &[f32],
    b: &[f32],
    rhs: Rhs,
    out: &mut [f32],
    dims: (usize, usize, usize),
) {
    matmul_small_portable(a, b, rhs, out, dims)
}

#[inline(always)]
fn matmul_small_portable(
    a: &[f32],
    b: &[f32],
    rhs: Rhs,
    out: &mut [f32],
    (m, k, n): (usize, usize, usize),
) {
    match rhs {
        Rhs::AsIs => matmul_reference(a, b, out, m, k, n),
        Rhs::Transposed => {
            if k == 0 {
                return; // every entry is an empty sum; `out` is zeros
            }
            for (b_row, j) in b.chunks_exact(k).zip(0..n) {
                for (a_row, i) in a.chunks_exact(k).zip(0..m) {
                    out[i * n + j] = dot(a_row, b_row);
                }
            }
        }
    }
}

/// How the left operand of a product is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lhs {
    /// `a` is `[m, k]`, row-major.
    AsIs,
    /// `a` is `[k, m]`, row-major: the product is `aᵀ · b`, read in place (the gradient of
    /// a product's right operand, `Aᵀ · dC`, needs no transposed copy of `A`).
    Transposed,
}

/// How the right operand of a product is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rhs {
    /// `b` is `[k, n]`, row-major: the product is `a · b`.
    AsIs,
    /// `b` is `[n, k]`, row-major: the product is `a · bᵀ`, read in place (a `Linear` layer's
    /// weight is stored this way, so no transposed copy is made per call).
    Transposed,
}

/// `out[m, n] = a · b` with the fast kernel, `a` (`m × k`) and `b` (`k × n`) stored as
/// `lhs` and `rhs` say (`out` starts as zeros).
fn matmul_fast(
    a: &[f32],
    b: &[f32],
    (lhs, rhs): (Lhs, Rhs),
    out: &mut [f32],
    (m, k, n): (usize, usize, usize),
) {
    assert!(
        a.len() == m * k && b.len() == k * n && out.len() == m * n,
        "matmul kernel: slices of {}, {} and {} values for [{m}, {k}] × [{k}, {n}]",
        a.len(),
        b.len(),
        out.len()
    );
    if takes_small_kernel(m, lhs) {
        return matmul_small(a, b, rhs, out, (m, k, n));
    }
    let a = View {
        data: a,
        rows: m,
        cols: k,
        transposed: lhs == Lhs::Transposed,
    };
    let b = View {
        data: b,
        rows: k,
        cols: n,
        transposed: rhs == Rhs::Transposed,
    };
    gemm::sgemm(a, b, out);
}

/// Batched matmul: `a: [..batch_a, m, k]` times `b: [..batch_b, k, n]` (with
/// [`Lhs::Transposed`], `a: [..batch_a, k, m]` read as its transpose; with
/// [`Rhs::Transposed`], `b: [..batch_b, n, k]`), batches broadcast to `batch` (already
/// computed by the caller). Returns `[..batch, m, n]` values.
pub(crate) fn matmul(
    (a, a_shape): (&[f32], &[usize]),
    (b, b_shape): (&[f32], &[usize]),
    (lhs, rhs): (Lhs, Rhs),
    batch: &[usize],
) -> Vec<f32> {
    let (ra, rb) = (a_shape.len(), b_shape.len());
    let (m, k) = match lhs {
        Lhs::AsIs => (a_shape[ra - 2], a_shape[ra - 1]),
        Lhs::Transposed => (a_shape[ra - 1], a_shape[ra - 2]),
    };
    let n = match rhs {
        Rhs::AsIs => b_shape[rb - 1],
        Rhs::Transposed => b_shape[rb - 2],
    };
    let count: usize = batch.iter().product();
    // `sgemm` writes every element of its result (with β = 0 it never reads it); the
    // few-row kernel adds into zeros.
    let mut out = if takes_small_kernel(m, lhs) {
        spare::zeros(count * m * n)
    } else {
        spare::for_overwrite(count * m * n)
    };
    // Offsets count whole matrices; broadcast batch dims get stride 0.
    let a_mats =
        StridedOffsets::new(batch, broadcast_strides(&a_shape[..ra - 2], batch));
    let b_mats =
        StridedOffsets::new(batch, broadcast_strides(&b_shape[..rb - 2], batch));
    for (idx, (ia, ib)) in a_mats.zip(b_mats).enumerate() {
        matmul_fast(
            &a[ia * m * k..(ia + 1) * m * k],
            &b[ib * k * n..(ib + 1) * k * n],
            (lhs, rhs),
            &mut out[idx * m * n..(idx + 1) * m * n],
            (m, k, n),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::seeded_values as values;
    use super::*;

    #[test]
    fn the_fast_kernel_agrees_with_the_definition_on_awkward_sizes() {
        // Sizes that are not multiples of any tile, and degenerate ones.
        for &(m, k, n) in &[
            (1, 1, 1),
            (3, 5, 7),
            (17, 33, 9),
            (64, 1, 65),
            (1, 256, 300), // a few rows: the small kernel, with and without a tail of k
            (8, 37, 5),
            (9, 37, 5), // just above it: sgemm
            (2, 0, 3),
            (3, 2, 0),
            (0, 4, 2),
        ] {
            let (a, b) = (values(m * k, 1), values(k * n, 2));
            let mut slow = vec![0.0; m * n];
            matmul_reference(&a, &b, &mut slow, m, k, n);
            let mut fast = vec![0.0; m * n];
            matmul_fast(&a, &b, (Lhs::AsIs, Rhs::AsIs), &mut fast, (m, k, n));
            // The same b stored transposed, [n, k], read in place.
            let b_t: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
            let mut fast_t = vec![0.0; m * n];
            matmul_fast(
                &a,
                &b_t,
                (Lhs::AsIs, Rhs::Transposed),
                &mut fast_t,
                (m, k, n),
            );
            // The same a stored transposed, [k, m], read in place.
            let a_t: Vec<f32> = (0..k * m).map(|i| a[(i % m) * k + i / m]).collect();
            let mut fast_at = vec![0.0; m * n];
            matmul_fast(
                &a_t,
                &b,
                (Lhs::Transposed, Rhs::AsIs),
                &mut fast_at,
                (m, k, n),
            );
            for (i, (((x, y), z), w)) in slow
                .iter()
                .zip(&fast)
                .zip(&fast_t)
                .zip(&fast_at)
                .enumerate()
            {
                assert!(
                    (x - y).abs() <= 1e-5 * (1.0 + x.abs())
                        && (x - z).abs() <= 1e-5 * (1.0 + x.abs())
                        && (x - w).abs() <= 1e-5 * (1.0 + x.abs()),
                    "[{m}, {k}] × [{k}, {n}], element {i}: {x} against {y}, {z} (bᵀ) and {w} (aᵀ)"
                );
            }
        }
    }

    #[test]
    fn products_of_a_few_rows_take_the_small_kernel_and_more_rows_sgemm() {
        // The choice shows in the bits: up to SMALL_M rows, a · b is summed exactly as the
        // definition sums it; with k = 300 sgemm's blocked order differs somewhere.
        let k = 300;
        let (a, b) = (values((SMALL_M + 1) * k, 5), values(k * 9, 6));
        let bits = |m: usize| {
            let mut definition = vec![0.0; m * 9];
            matmul_reference(&a[..m * k], &b, &mut definition, m, k, 9);
            let mut fast = vec![0.0; m * 9];
            matmul_fast(
                &a[..m * k],
                &b,
                (Lhs::AsIs, Rhs::AsIs),
                &mut fast,
                (m, k, 9),
            );
            fast == definition
        };
        assert!(
            bits(1) && bits(SMALL_M),
            "a few rows: the definition's sums"
        );
        assert!(!bits(SMALL_M + 1), "more rows: sgemm's sums");
    }

    #[test]
    fn a_few_rows_are_summed_as_the_definition_says() {
        // matmul_small adds, for a · b, the rows of b in the definition's order: the same
        // bits; for a · bᵀ, 8 partial sums: a hand-checkable case with k = 9.
        let (a, b) = (values(3 * 40, 3), values(40 * 7, 4));
        let mut definition = vec![0.0; 3 * 7];
        matmul_reference(&a, &b, &mut definition, 3, 40, 7);
        let mut small = vec![0.0; 3 * 7];
        matmul_small(&a, &b, Rhs::AsIs, &mut small, (3, 40, 7));
        assert_eq!(small, definition);
        let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
        let y = vec![1.0; 9];
        let mut out = vec![0.0; 1];
        matmul_small(&x, &y, Rhs::Transposed, &mut out, (1, 9, 1));
        assert_eq!(out, vec![45.0]);
        // Two rows of a against three rows of b: every pair, in the right place.
        let a = [1.0, 0.0, 0.0, 1.0]; // [2, 2]
        let b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // [3, 2], read as [2, 3]
        let mut out = vec![0.0; 6];
        matmul_small(&a, &b, Rhs::Transposed, &mut out, (2, 2, 3));
        assert_eq!(out, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn the_definition_gives_a_hand_computed_product() {
        // [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
        let mut out = vec![0.0; 4];
        matmul_reference(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0],
            &mut out,
            2,
            2,
            2,
        );
        assert_eq!(out, vec![19.0, 22.0, 43.0, 50.0]);
    }
}
