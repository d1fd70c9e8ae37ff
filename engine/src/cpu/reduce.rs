//! Reductions along one dimension, and the softmax family.
//!
//! A tensor is viewed as `[outer, n, inner]` around the reduced dimension (see
//! [`crate::shape::split_at_dim`]); each of the `outer × inner` lines of `n` values is
//! reduced independently. Loops run `outer → n → inner` so the innermost loop reads
//! contiguous memory.

use super::lanes::{lane_max, lane_sum};
use super::math::{self, exp};
use super::parallel::for_each_block;
use crate::kernels::{self, KernelPath};
use crate::spare;

/// Sums each line: `[outer, n, inner] → [outer, inner]`.
pub(crate) fn sum_dim(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
) -> Vec<f32> {
    if inner == 1 {
        // The last dimension: each line is a contiguous row, added up in the same order.
        return (0..outer)
            .map(|o| a[o * n..(o + 1) * n].iter().fold(0.0, |acc, &x| acc + x))
            .collect();
    }
    let mut out = spare::zeros(outer * inner);
    for o in 0..outer {
        let row = &mut out[o * inner..(o + 1) * inner];
        for k in 0..n {
            let src = &a[(o * n + k) * inner..(o * n + k + 1) * inner];
            for (acc, &x) in row.iter_mut().zip(src) {
                *acc += x;
            }
        }
    }
    out
}

/// Which end of the order a selection wants: the maximum or the minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extreme {
    Max,
    Min,
}

impl Extreme {
    /// Whether `x` beats the current best `best`. A NaN beats everything, so it
    /// propagates through `max` and `min` as in PyTorch.
    pub(crate) fn beats(self, x: f32, best: f32) -> bool {
        x.is_nan()
            || match self {
                Extreme::Max => x > best,
                Extreme::Min => x < best,
            }
    }
}

/// The maximum (or minimum) of each line: `[outer, n, inner] → [outer, inner]`. NaN
/// propagates, as in PyTorch.
pub(crate) fn extreme_dim(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    which: Extreme,
) -> Vec<f32> {
    let start = match which {
        Extreme::Max => f32::NEG_INFINITY,
        Extreme::Min => f32::INFINITY,
    };
    let mut out = vec![start; outer * inner];
    for o in 0..outer {
        let row = &mut out[o * inner..(o + 1) * inner];
        for k in 0..n {
            let src = &a[(o * n + k) * inner..(o * n + k + 1) * inner];
            for (acc, &x) in row.iter_mut().zip(src) {
                if !acc.is_nan() && which.beats(x, *acc) {
                    *acc = x;
                }
            }
        }
    }
    out
}

/// Softmax of each line, computed stably: `exp(x - max) / Σ exp(x - max)`.
/// With `log = true`, the log-softmax `x - max - log Σ exp(x - max)` instead.
pub(crate) fn softmax_dim(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    log: bool,
) -> Vec<f32> {
    let mut out = spare::for_overwrite(a.len());
    if n == 0 {
        return out;
    }
    if inner == 1 {
        // The last dimension, the usual case: each line is a contiguous row (large tensors
        // share their rows out between threads, which run on the path of this one).
        let path = kernels::active();
        for_each_block(&mut out, n, |start, block| {
            softmax_rows(path, &a[start..start + block.len()], block, n, log);
        });
        return out;
    }
    // Another dimension: gather each strided line, work on it, scatter it back.
    let (mut src, mut dst) = (vec![0.0; n], vec![0.0; n]);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            for (k, v) in src.iter_mut().enumerate() {
                *v = a[at(k)];
            }
            softmax_line(&src, &mut dst, log);
            for (k, &v) in dst.iter().enumerate() {
                out[at(k)] = v;
            }
        }
    }
    out
}

/// The gradient of a softmax over the last dimension, from its output `out` and the
/// gradient `g` of its output: `out ⊙ (g − Σ g ⊙ out)` row by row, in one pass over each
/// row and without the three intermediate tensors of the composed form (whose operations,
/// in the same order, give the same bits).
pub(crate) fn softmax_backward_rows(out: &[f32], g: &[f32], n: usize) -> Vec<f32> {
    let mut dx = spare::for_overwrite(out.len());
    if n == 0 {
        return dx;
    }
    for_each_block(&mut dx, n, |start, block| {
        for ((o, g), d) in out[start..]
            .chunks_exact(n)
            .zip(g[start..].chunks_exact(n))
            .zip(block.chunks_exact_mut(n))
        {
            let dot = o.iter().zip(g).fold(0.0f32, |acc, (&o, &g)| acc + g * o);
            for ((d, &o), &g) in d.iter_mut().zip(o).zip(g) {
                *d = o * (g - dot);
            }
        }
    });
    dx
}

/// The softmax (or log-softmax) of each row of `n` values of `src`, written to `dst`, on
/// `path`: the same code compiled for AVX-512, for AVX2 or plain; all three do the same
/// operations in the same order, so they give the same bits.
fn softmax_rows(path: KernelPath, src: &[f32], dst: &mut [f32], n: usize, log: bool) {
    match path {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe { softmax_rows_avx512(src, dst, n, log) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe { softmax_rows_avx2(src, dst, n, log) },
        _ => softmax_rows_portable(src, dst, n, log),
    }
}

/// [`softmax_rows_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_rows_avx512(src: &[f32], dst: &mut [f32], n: usize, log: bool) {
    softmax_rows_portable(src, dst, n, log)
}

/// [`softmax_rows_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_rows_avx2(src: &[f32], dst: &mut [f32], n: usize, log: bool) {
    softmax_rows_portable(src, dst, n, log)
}

#[inline(always)]
fn softmax_rows_portable(src: &[f32], dst: &mut [f32], n: usize, log: bool) {
    for (src, dst) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
        softmax_line(src, dst, log);
    }
}

/// The softmax (or log-softmax) of one line `src`, written to `dst`, with one `exp` per
/// element: the exponentials are kept, summed in a fixed order that vectorises
/// (`lanes.rs`), then divided by their sum. The `exp` and `log` are the engine's own
/// (`math.rs`): polynomials that vectorise, within one unit in the last place.
#[inline(always)]
fn softmax_line(src: &[f32], dst: &mut [f32], log: bool) {
    let max = lane_max(src);
    // A line with no finite maximum (all -inf, or a +inf) is not shifted: all -inf gives
    // 0/0 = NaN everywhere, as in PyTorch; a +inf gives NaN at the +inf.
    let shift = if max.is_finite() { max } else { 0.0 };
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = exp(x - shift);
    }
    let total = lane_sum(dst);
    if log {
        let log_total = math::log(total);
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = (x - shift) - log_total;
        }
    } else {
        for d in dst.iter_mut() {
            *d /= total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of awkward lengths (tails of the 8 partial sums) with a wide range of values.
    fn rows(n: usize, count: usize) -> Vec<f32> {
        (0..n * count)
            .map(|i| ((i * 7919 % 1013) as f32 / 1013.0 - 0.5) * 30.0)
            .collect()
    }

    /// Softmax in f64 from the f32 differences `x - max` the kernel exponentiates (their
    /// rounding is f32's, not the kernel's, and moves a tiny weight by up to 2e-6 of itself).
    fn softmax_f64(row: &[f32]) -> Vec<f64> {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f64> = row.iter().map(|&x| ((x - max) as f64).exp()).collect();
        let total: f64 = e.iter().sum();
        e.iter().map(|v| v / total).collect()
    }

    #[test]
    fn softmax_is_within_2e_7_of_the_exact_value_and_log_softmax_is_its_log() {
        for n in [1, 7, 8, 9, 31, 256] {
            let a = rows(n, 5);
            let soft = softmax_dim(&a, (5, n, 1), false);
            let log = softmax_dim(&a, (5, n, 1), true);
            for (r, row) in a.chunks(n).enumerate() {
                for (j, exact) in softmax_f64(row).into_iter().enumerate() {
                    let got = soft[r * n + j] as f64;
                    assert!(
                        (got - exact).abs() <= 2e-7 * exact,
                        "n {n}, row {r}, col {j}: {got} against {exact}"
                    );
                    let got_log = log[r * n + j] as f64;
                    assert!(
                        (got_log - exact.ln()).abs()
                            < 2e-6 * exact.ln().abs().max(1.0),
                        "log-softmax n {n}, row {r}, col {j}: {got_log} against {}",
                        exact.ln()
                    );
                }
            }
        }
    }

    #[test]
    fn masked_positions_get_exactly_zero_and_an_all_masked_row_is_nan() {
        let ninf = f32::NEG_INFINITY;
        let a = [1.0, ninf, 2.0, ninf, ninf, ninf];
        let out = softmax_dim(&a, (2, 3, 1), false);
        assert_eq!(out[1], 0.0);
        assert!((out[0] + out[2] - 1.0).abs() < 1e-7);
        assert!(out[3..].iter().all(|v| v.is_nan()), "{out:?}");
    }

    #[test]
    fn the_strided_path_gives_the_bits_of_the_contiguous_one() {
        // Softmax over dim 0 of [n, 3] equals softmax over the rows of its transpose.
        let n = 11;
        let a = rows(n, 3);
        let transposed: Vec<f32> = (0..3)
            .flat_map(|c| (0..n).map(move |r| (r, c)))
            .map(|(r, c)| a[r * 3 + c])
            .collect();
        let strided = softmax_dim(&a, (1, n, 3), false);
        let rows_out = softmax_dim(&transposed, (3, n, 1), false);
        for r in 0..n {
            for c in 0..3 {
                assert_eq!(
                    strided[r * 3 + c].to_bits(),
                    rows_out[c * n + r].to_bits()
                );
            }
        }
    }

    #[test]
    fn every_path_gives_the_bits_of_the_portable_one() {
        for log in [false, true] {
            for n in [1, 5, 8, 13, 16, 17, 64, 257] {
                let mut a = rows(n, 4);
                a[n / 2] = f32::NEG_INFINITY; // a masked position
                let on = |path| {
                    kernels::with_path(path, || softmax_dim(&a, (4, n, 1), log))
                };
                let plain = on(KernelPath::Portable);
                for path in KernelPath::supported() {
                    let same = on(path)
                        .iter()
                        .zip(&plain)
                        .all(|(x, y)| x.to_bits() == y.to_bits());
                    assert!(same, "{path}: n {n}, log {log}");
                }
            }
        }
    }
}
