//! Matrix products: the engine's own kernel on CPUs with AVX-512, `matrixmultiply`'s
//! elsewhere.
//!
//! The engine's kernel (`blocked.rs`, `pack.rs`, `kernel.rs`) has the classic structure of
//! fast matrix products (Goto's, as in BLIS), the one chapter 13 builds rung by rung:
//! 1. `b` goes in blocks of `KC` rows and `NC` columns, each packed ([`pack`]) into strips
//!    of `NR` columns in the order the micro-kernel reads them (1 MiB; it stays in the L2
//!    cache while it is used);
//! 2. `a` goes in blocks of `MC` rows and `KC` columns, packed into strips of `MR` rows
//!    (96 KiB);
//! 3. each pair of strips gives one `MR × NR` (12 × 32) tile of the result, which the
//!    micro-kernel ([`kernel`]) keeps in 24 AVX-512 registers for all `KC` steps, asking
//!    for the strip of `b` a few steps ahead of its reads.
//!
//! An operand is never copied before packing: a transposed one is packed straight from its
//! storage. When `b` has a single strip (`n ≤ 32`, as in attention's `A · V` per head),
//! `a` is not packed at all but read in place, since each of its values is used once.
//!
//! Threads (`pool.rs`) take runs of `MC` rows of the result one at a time, and each packs
//! the blocks of `b` it needs itself. No element's sum depends on the split: each is summed
//! over `p` in order, one fused multiply-add per step, block after block in order of `k`,
//! so the result is the same bits on any number of threads.
//!
//! On CPUs without AVX-512, and on other architectures, the product is
//! `matrixmultiply::sgemm`: a well-kept crate with the same structure and kernels for AVX2
//! with FMA, SSE2 and NEON, chosen at run time.

#[cfg(target_arch = "x86_64")]
mod blocked;
#[cfg(target_arch = "x86_64")]
mod kernel;
#[cfg(target_arch = "x86_64")]
mod pack;

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

/// `out = a · b`, `out` row-major `[a.rows, b.cols]`. Every element of `out` is written; its
/// previous contents are never read.
pub(crate) fn sgemm(a: View, b: View, out: &mut [f32]) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(
        b.rows == k && a.data.len() == m * k && b.data.len() == k * n && out.len() == m * n,
        "gemm: slices of {}, {} and {} values for [{m}, {k}] × [{}, {n}]",
        a.data.len(),
        b.data.len(),
        out.len(),
        b.rows
    );
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        return blocked::sgemm(a, b, out, super::pool::product_threads());
    }
    with_matrixmultiply(a, b, out);
}

/// [`sgemm`] by `matrixmultiply`.
fn with_matrixmultiply(a: View, b: View, out: &mut [f32]) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    // Strides in elements: x[i, j] sits at i·row_stride + j·col_stride.
    let strides = |v: View| {
        let (rows, cols) = if v.transposed {
            (1, v.rows)
        } else {
            (v.cols, 1)
        };
        let stride = |s: usize| isize::try_from(s).expect("a row fits in memory");
        (stride(rows), stride(cols))
    };
    let ((rsa, csa), (rsb, csb)) = (strides(a), strides(b));
    // SAFETY: `sgemm` checked that `a` holds m·k values, `b` k·n and `out` m·n, laid out as
    // the strides say, so every index formed from (m, k, n) and the strides is inside its
    // slice; `out` is borrowed mutably, so it aliases neither input. With β = 0 the previous
    // contents of `out` are not read.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr(),
            rsa,
            csa,
            b.data.as_ptr(),
            rsb,
            csb,
            0.0,
            out.as_mut_ptr(),
            isize::try_from(n).expect("a row fits in memory"),
            1,
        );
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
                        out[i * n + j] += f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
                    }
                }
            }
            out
        }

        /// `a · b` summed exactly as the engine's kernel sums it: each element over `k` in
        /// blocks of `KC` steps, each block a chain of fused multiply-adds from zero, the
        /// blocks added to the element in order.
        #[cfg(target_arch = "x86_64")]
        fn kernel_order(&self) -> Vec<f32> {
            let ((m, k, n), [a, _], [b, _]) = (self.dims, &self.a, &self.b);
            let mut out = vec![0.0; m * n];
            for i in 0..m {
                for j in 0..n {
                    let blocks = (0..k).step_by(blocked::KC).map(|p0| {
                        let steps = p0..k.min(p0 + blocked::KC);
                        steps.fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc))
                    });
                    out[i * n + j] = blocks.reduce(|c, block| c + block).unwrap_or(0.0);
                }
            }
            out
        }
    }

    /// Runs `product` on every layout of both operands (`out` prefilled with NaN, so a
    /// skipped element shows) and checks each against the definition.
    fn check_every_layout(dims: (usize, usize, usize), product: impl Fn(View, View, &mut [f32])) {
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

    /// Sizes around every block edge: tails of tiles in both directions, one panel across
    /// (a read in place) with and without a short last panel, k past one block of 256, n
    /// past one block of 1024, m past one block of 96, k past one stretch of 2048, and
    /// empty products.
    const SIZES: [(usize, usize, usize); 13] = [
        (1, 1, 1),
        (12, 7, 32),
        (13, 300, 33),
        (25, 40, 32),
        (24, 256, 64),
        (97, 513, 20),
        (9, 3, 1030),
        (13, 2100, 40),
        (200, 40, 32), // a read in place in three runs of rows
        (100, 50, 100),
        (5, 0, 7),
        (0, 4, 3),
        (13, 4, 0),
    ];

    #[test]
    fn the_product_agrees_with_the_definition_in_every_layout() {
        for dims in SIZES {
            check_every_layout(dims, sgemm);
        }
    }

    #[test]
    fn matrixmultiply_agrees_with_the_definition_in_every_layout() {
        // The path of CPUs without AVX-512, tested on any CPU.
        for dims in SIZES {
            check_every_layout(dims, with_matrixmultiply);
        }
    }

    /// Whether the engine's kernel can run here; where it cannot, `sgemm` uses
    /// matrixmultiply and the tests of the kernel have nothing to test.
    #[cfg(target_arch = "x86_64")]
    fn kernel_runs_here() -> bool {
        std::is_x86_feature_detected!("avx512f")
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_engine_kernel_sums_each_element_in_blocks_of_fused_multiply_adds() {
        if !kernel_runs_here() {
            return;
        }
        // The same bits as `kernel_order`, in every layout, packed and in place, across
        // block edges in every direction, on one thread and on three.
        for dims in [(13, 600, 40), (200, 520, 32), (30, 300, 70), (100, 7, 1030)] {
            let operands = Operands::seeded(dims, 5);
            let want = operands.kernel_order();
            for (a, b, label) in operands.layouts() {
                for threads in [1, 3] {
                    let mut out = vec![f32::NAN; dims.0 * dims.2];
                    blocked::sgemm(a, b, &mut out, threads);
                    let first_difference = out
                        .iter()
                        .zip(&want)
                        .position(|(x, y)| x.to_bits() != y.to_bits());
                    assert_eq!(first_difference, None, "{label}, {threads} threads");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_engine_kernel_gives_the_same_bits_on_any_number_of_threads() {
        if !kernel_runs_here() {
            return;
        }
        // 7 · 2²¹ multiply-adds or more: up to 7 threads, each several tiles, the last short.
        let dims = (301, 300, 170);
        check_every_layout(dims, |a, b, out| blocked::sgemm(a, b, out, 3));
        let operands = Operands::seeded(dims, 3);
        for (a, b, label) in operands.layouts() {
            let mut one = vec![f32::NAN; dims.0 * dims.2];
            blocked::sgemm(a, b, &mut one, 1);
            for threads in [2, 3, 7] {
                let mut many = vec![f32::NAN; dims.0 * dims.2];
                blocked::sgemm(a, b, &mut many, threads);
                assert!(
                    one.iter()
                        .zip(&many)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{label}: {threads} threads give other bits than one"
                );
            }
        }
    }
}
