//! Matrix products: the engine's own blocked kernel, with one definition of every result
//! and four micro-kernels that compute it (AVX-512, AVX2 with FMA, NEON on aarch64, and
//! portable Rust).
//!
//! The driver (`blocked.rs`, `pack.rs`) has the classic structure of fast matrix products
//! (Goto's, as in BLIS), the one chapter 13 builds rung by rung:
//! 1. `b` goes in blocks of `KC` rows and `NC` columns, each packed ([`pack`]) into strips
//!    of `NR` columns in the order the micro-kernel reads them (1 MiB; it stays in the L2
//!    cache while it is used);
//! 2. `a` goes in blocks of `MC` rows and `KC` columns, packed into strips of `MR` rows
//!    (96 KiB);
//! 3. each pair of strips gives one `MR × NR` tile of the result, which the micro-kernel
//!    keeps in registers for all `KC` steps: 12 × 32 in 24 AVX-512 registers
//!    (`avx512`), 6 × 16 in 12 AVX registers (`avx2`), 12 × 8 in 24 NEON registers
//!    (`neon`), 4 × 16 in plain Rust (`portable`), whichever
//!    [`kernels::active`](crate::kernels::active) names.
//!
//! An operand is never copied before packing: a transposed one is packed straight from its
//! storage. When `b` has a single strip (`n ≤ NR`, as in attention's `A · V` per head),
//! `a` is not packed at all but read in place, since each of its values is used once.
//!
//! **The definition.** Each element of the result is summed over `p` in blocks of `KC` =
//! 256 steps; within a block, in order of `p`, one fused multiply-add per step starting
//! from zero; the blocks' sums are added to the element in order of `k`. The tile's shape,
//! the other block sizes, the thread that computes a tile and the registers' width change
//! none of that, so every path and every thread count gives the same bits (the tests
//! compare them with the definition written as a plain loop).
//!
//! Threads (`pool.rs`) take runs of `MC` rows of the result one at a time, and each packs
//! the blocks of `b` it needs itself.
//!
//! A product with one column (a matrix times a vector) takes a loop of its own
//! (`column`), which computes that column alone instead of a tile of 16 or 32, and a
//! product with one step along `k` (an outer product) another (`outer`), which packs
//! nothing: the same definition, without the padding and the packing.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod blocked;
mod column;
mod fused;
#[cfg(target_arch = "aarch64")]
mod neon;
mod outer;
mod pack;
mod portable;

use crate::kernels::{self, KernelPath};

/// A matrix operand, read in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    /// The values: row-major `[rows, cols]`, or `[cols, rows]` when `transposed`.
    pub(crate) data: &'a [f32],
    /// Rows of the matrix as the product reads it.
    pub(crate) rows: usize,
    /// Columns of the matrix as the product reads it.
    pub(crate) cols: usize,
    /// Whether `data` holds the transpose, row-major.
    pub(crate) transposed: bool,
}

/// A micro-kernel: one `MR × NR` tile of the result.
trait MicroKernel<const MR: usize, const NR: usize> {
    /// `c[r·ldc + j] (=|+=) Σₚ a(r, p) · b[p·NR + j]` for `r < MR`, `j < NR`, `p < kc`,
    /// summed in order of `p` with one fused multiply-add per step: stores the tile when
    /// `accumulate` is false, adds it to what `c` holds when it is true.
    ///
    /// `a(r, p)` is `a[p·stride + r]` when `STEP_MAJOR` (the `MR` values of a step side by
    /// side: a packed panel, whose `stride` is `MR`, or a transposed matrix read in place)
    /// and `a[r·stride + p]` when not (a row-major matrix read in place, rows of `stride`
    /// values). `b` is a packed panel of `kc` rows of `NR` values. Panics when a slice is
    /// too short for what the tile reads or writes.
    ///
    /// # Safety
    /// The CPU must have the instructions of the kernel's path.
    unsafe fn tile<const STEP_MAJOR: bool>(
        kc: usize,
        a: (&[f32], usize),
        b: &[f32],
        c: (&mut [f32], usize),
        accumulate: bool,
    );
}

/// Checks that a tile's slices hold what it reads and writes (see [`MicroKernel::tile`];
/// `c` is given as its length and `ldc`), and returns the distances in `a` between two
/// rows and between two steps.
#[track_caller]
fn check_tile<const MR: usize, const NR: usize>(
    kc: usize,
    (a, stride): (&[f32], usize),
    step_major: bool,
    b: &[f32],
    (c_len, ldc): (usize, usize),
) -> (usize, usize) {
    let (row_step, p_step) = if step_major { (1, stride) } else { (stride, 1) };
    assert!(
        kc == 0 || a.len() > (MR - 1) * row_step + (kc - 1) * p_step,
        "gemm tile: {} values of a for {MR} rows of {kc} steps",
        a.len()
    );
    assert!(
        b.len() >= kc * NR,
        "gemm tile: {} values of b for {kc} rows of {NR}",
        b.len()
    );
    assert!(
        c_len >= (MR - 1) * ldc + NR,
        "gemm tile: {c_len} values of c for {MR} rows of {NR} at a stride of {ldc}"
    );
    (row_step, p_step)
}

/// `out = a · b`, `out` row-major `[a.rows, b.cols]`, on the calling thread's kernel path.
/// Every element of `out` is written; its previous contents are never read.
pub(crate) fn sgemm(a: View, b: View, out: &mut [f32]) {
    sgemm_on(kernels::active(), a, b, out, super::pool::product_threads());
}

/// [`sgemm`] on `path` with up to `threads` threads.
pub(crate) fn sgemm_on(
    path: KernelPath,
    a: View,
    b: View,
    out: &mut [f32],
    threads: usize,
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(
        b.rows == k
            && a.data.len() == m * k
            && b.data.len() == k * n
            && out.len() == m * n,
        "gemm: slices of {}, {} and {} values for [{m}, {k}] × [{}, {n}]",
        a.data.len(),
        b.data.len(),
        out.len(),
        b.rows
    );
    assert!(
        path.is_supported(),
        "gemm: the CPU cannot run the {path} kernels"
    );
    if n == 1 && m > 0 {
        return column::product(path, a, b, out);
    }
    if k == 1 && n > 0 {
        return outer::product(path, a, b, out, threads);
    }
    // SAFETY (the kernels' contract): the CPU supports `path`, checked above.
    unsafe {
        match path {
            #[cfg(target_arch = "x86_64")]
            KernelPath::Avx512 => {
                blocked::sgemm::<avx512::Avx512, 12, 32>(a, b, out, threads)
            }
            #[cfg(target_arch = "x86_64")]
            KernelPath::Avx2 => {
                blocked::sgemm::<avx2::Avx2, 6, 16>(a, b, out, threads)
            }
            #[cfg(not(target_arch = "x86_64"))]
            KernelPath::Avx512 | KernelPath::Avx2 => unreachable!("x86-64 paths"),
            #[cfg(target_arch = "aarch64")]
            KernelPath::Neon => {
                blocked::sgemm::<neon::Neon, 12, 8>(a, b, out, threads)
            }
            #[cfg(not(target_arch = "aarch64"))]
            KernelPath::Neon => unreachable!("an aarch64 path"),
            KernelPath::Portable => {
                blocked::sgemm::<portable::Portable, 4, 16>(a, b, out, threads)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::seeded_values as values;
    use super::*;

    /// The transpose of row-major `[rows, cols]`, row-major `[cols, rows]`.
    fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        (0..rows * cols)
            .map(|i| x[(i % rows) * cols + i / rows])
            .collect()
    }

    /// Seeded operands of `[m, k] · [k, n]`, each stored both as it is read and transposed.
    struct Operands {
        dims: (usize, usize, usize),
        a: [Vec<f32>; 2],
        b: [Vec<f32>; 2],
    }

    impl Operands {
        fn seeded((m, k, n): (usize, usize, usize), seed: u64) -> Operands {
            let (a, b) = (values(m * k, seed), values(k * n, seed + 1));
            let (a_t, b_t) = (transpose(&a, m, k), transpose(&b, k, n));
            Operands {
                dims: (m, k, n),
                a: [a, a_t],
                b: [b, b_t],
            }
        }

        /// The four layouts: `a` and `b` each as it is read or transposed, with a label.
        fn layouts(&self) -> impl Iterator<Item = (View<'_>, View<'_>, String)> {
            let (m, k, n) = self.dims;
            [(false, false), (false, true), (true, false), (true, true)]
                .map(|(a_t, b_t)| {
                    let a = View {
                        data: &self.a[usize::from(a_t)],
                        rows: m,
                        cols: k,
                        transposed: a_t,
                    };
                    let b = View {
                        data: &self.b[usize::from(b_t)],
                        rows: k,
                        cols: n,
                        transposed: b_t,
                    };
                    (
                        a,
                        b,
                        format!("[{m}, {k}] × [{k}, {n}] (aᵀ {a_t}, bᵀ {b_t})"),
                    )
                })
                .into_iter()
        }

        /// `a · b` in f64 by the definition.
        fn definition(&self) -> Vec<f64> {
            let ((m, k, n), [a, _], [b, _]) = (self.dims, &self.a, &self.b);
            let mut out = vec![0.0; m * n];
            for i in 0..m {
                for p in 0..k {
                    for j in 0..n {
                        out[i * n + j] +=
                            f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
                    }
                }
            }
            out
        }

        /// `a · b` by the definition every path computes: each element over `k` in blocks
        /// of `KC` steps, each block a chain of fused multiply-adds from zero, the blocks
        /// added to the element in order.
        fn definition_in_blocks(&self) -> Vec<f32> {
            let ((m, k, n), [a, _], [b, _]) = (self.dims, &self.a, &self.b);
            let mut out = vec![0.0; m * n];
            for i in 0..m {
                for j in 0..n {
                    let blocks = (0..k).step_by(blocked::KC).map(|p0| {
                        let steps = p0..k.min(p0 + blocked::KC);
                        steps.fold(0.0f32, |acc, p| {
                            a[i * k + p].mul_add(b[p * n + j], acc)
                        })
                    });
                    out[i * n + j] =
                        blocks.reduce(|c, block| c + block).unwrap_or(0.0);
                }
            }
            out
        }
    }

    /// Runs `product` on every layout of both operands (`out` prefilled with NaN, so a
    /// skipped element shows) and checks each against the definition in f64.
    fn check_every_layout(
        dims: (usize, usize, usize),
        product: impl Fn(View, View, &mut [f32]),
    ) {
        let operands = Operands::seeded(dims, 1);
        let want = operands.definition();
        // Each step rounds once; k steps of values below 1 stay within k·2⁻²⁴.
        let tolerance = 1e-6 * (dims.1 as f64 + 1.0);
        for (a, b, label) in operands.layouts() {
            let mut out = vec![f32::NAN; dims.0 * dims.2];
            product(a, b, &mut out);
            for (i, (&got, &want)) in out.iter().zip(&want).enumerate() {
                assert!(
                    (f64::from(got) - want).abs() <= tolerance,
                    "{label}, element {i}: {got}, expected {want}"
                );
            }
        }
    }

    /// Sizes around every block edge of every kernel: tails of tiles in both directions,
    /// one panel across (a read in place) with and without a short last panel, k past one
    /// block of 256, n past one block of 1024, m past one block of 96, k past one stretch
    /// of 2048, and empty products.
    const SIZES: [(usize, usize, usize); 22] = [
        (1, 1, 1),
        (12, 7, 32),
        (6, 9, 16),
        (13, 300, 33),
        (25, 40, 32),
        (7, 40, 17),
        (24, 256, 64),
        (97, 513, 20),
        (9, 3, 1030),
        (13, 2100, 40),
        (200, 40, 32), // a read in place in three runs of rows
        (100, 50, 100),
        (5, 0, 7),
        (0, 4, 3),
        (13, 4, 0),
        (97, 513, 1),
        (0, 3, 1),
        (37, 1, 45), // one step along k: an outer product
        (1, 1, 1030),
        (300, 1, 0),
        (7, 0, 1),      // one column of empty sums
        (2100, 300, 1), // one column, `a` past one run of 1024 rows
    ];

    #[test]
    fn every_path_agrees_with_the_definition_in_every_layout() {
        for path in KernelPath::supported() {
            for dims in SIZES {
                check_every_layout(dims, |a, b, out| sgemm_on(path, a, b, out, 1));
            }
        }
        // And `sgemm` itself, on the thread's path.
        for dims in SIZES {
            check_every_layout(dims, sgemm);
        }
    }

    #[test]
    fn a_product_of_one_step_is_one_fused_multiply_add_from_zero() {
        // A zero times a negative value is -0.0, and -0.0 + 0.0 is +0.0: the definition
        // (one fused multiply-add from zero) gives +0.0 where a plain product gives -0.0.
        let (a, b) = ([0.0, -0.0, 2.0], [-1.0, 1.0, 3.0, f32::MIN_POSITIVE]);
        let a_view = View {
            data: &a,
            rows: 3,
            cols: 1,
            transposed: false,
        };
        let b_view = View {
            data: &b,
            rows: 1,
            cols: 4,
            transposed: false,
        };
        for path in KernelPath::supported() {
            let mut out = [f32::NAN; 12];
            sgemm_on(path, a_view, b_view, &mut out, 1);
            let want: Vec<u32> = a
                .iter()
                .flat_map(|&x| b.iter().map(move |&y| x.mul_add(y, 0.0).to_bits()))
                .collect();
            let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "{path}");
            assert_eq!(out[0].to_bits(), 0.0f32.to_bits(), "{path}: +0.0, not -0.0");
        }
    }

    #[test]
    fn every_path_gives_the_bits_of_the_definition_on_any_number_of_threads() {
        // The same bits as `definition_in_blocks`, in every layout, packed and in place,
        // across block edges in every direction, on one thread and on three.
        for dims in [
            (13, 600, 40),
            (200, 520, 32),
            (30, 300, 70),
            (100, 7, 1030),
            (97, 260, 17),
            (301, 300, 170), // enough work for 3 threads, each several tiles, the last short
            (70, 600, 1),    // one column: 32 rows side by side, the last 6 alone
            (3, 5, 1),
            (301, 1, 170), // one step: an outer product
            (700, 1, 300), // an outer product of 210,000 outputs: split between 3 threads
            (5, 1, 3),
        ] {
            let operands = Operands::seeded(dims, 5);
            let want = operands.definition_in_blocks();
            for (a, b, label) in operands.layouts() {
                for path in KernelPath::supported() {
                    for threads in [1, 3] {
                        let mut out = vec![f32::NAN; dims.0 * dims.2];
                        sgemm_on(path, a, b, &mut out, threads);
                        let first_difference = out
                            .iter()
                            .zip(&want)
                            .position(|(x, y)| x.to_bits() != y.to_bits());
                        assert_eq!(
                            first_difference, None,
                            "{label}, {path}, {threads} threads"
                        );
                    }
                }
            }
        }
    }
}
