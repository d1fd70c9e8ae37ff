//! Fused additive scores: `s[b, q, k] = Σₕ w[h] · tanh(q[b, q, h] + k[b, k, h])`, forward
//! and backward, without the `[B, Q, K, h]` tensor that the broadcast form builds.
//!
//! The forward pass walks one (query, key) pair at a time and keeps only its running sum;
//! the backward pass recomputes each `tanh` instead of storing it (memory is what made the
//! broadcast form impossible at `Q = K = 1024`, and arithmetic is cheap next to memory
//! traffic).
//!
//! Two things make the loops fast, and neither changes a number:
//! - `tanh` is a rational function of `x²` (the approximation used by Eigen and XLA, less
//!   than 5e-7 from the exact value, tested), which the compiler turns into SIMD
//!   instructions; the library `tanh` is a function call per element.
//! - The sum over `h` runs in 8 independent partial sums (`cpu/lanes.rs`), added in a
//!   fixed order at the end, so it vectorises without reassociation. On x86-64 CPUs that have AVX2 the same
//!   code is compiled a second time for 8-wide registers and chosen at run time; both
//!   versions do the same operations in the same order (Rust never fuses a multiply and an
//!   add on its own), so they give the same bits.

use super::lanes::lane_sum;
use crate::spare;

/// Sizes of one fused call: batch, queries, keys, hidden size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub(crate) batch: usize,
    pub(crate) queries: usize,
    pub(crate) keys: usize,
    pub(crate) hidden: usize,
}

/// The gradients of the three inputs of [`scores`].
pub(crate) struct Grads {
    /// `[B, Q, h]`.
    pub(crate) queries: Vec<f32>,
    /// `[B, K, h]`.
    pub(crate) keys: Vec<f32>,
    /// `[h]`.
    pub(crate) w: Vec<f32>,
}

/// `tanh(x)` as `x · P(x²) / Q(x²)`: Eigen's `generic_fast_tanh_float`, clamped where the
/// exact value rounds to ±1 in `f32`. No branch, so a loop of it vectorises. NaN stays NaN.
#[inline(always)]
pub(crate) fn tanh(x: f32) -> f32 {
    const CLAMP: f32 = 7.905_311;
    const P: [f32; 7] = [
        -2.760_768_5e-16,
        2.000_188e-13,
        -8.604_672e-11,
        5.122_297e-8,
        1.485_722_4e-5,
        6.372_619_3e-4,
        4.893_524_6e-3,
    ];
    const Q: [f32; 4] = [1.198_258_4e-6, 1.185_347_1e-4, 2.268_434_6e-3, 4.893_525e-3];
    let x = x.clamp(-CLAMP, CLAMP);
    let x2 = x * x;
    let p = P.iter().fold(0.0, |acc, &c| acc * x2 + c);
    let q = Q.iter().fold(0.0, |acc, &c| acc * x2 + c);
    x * p / q
}

/// The scores `[B, Q, K]` of `queries: [B, Q, h]` against `keys: [B, K, h]` with `w: [h]`.
pub(crate) fn scores(queries: &[f32], keys: &[f32], w: &[f32], dims: Dims) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked on the line above.
        return unsafe { scores_avx2(queries, keys, w, dims) };
    }
    scores_portable(queries, keys, w, dims)
}

/// The gradients of [`scores`] given `upstream: [B, Q, K]`, the gradient of the loss with
/// respect to the scores.
pub(crate) fn grads(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
) -> Grads {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked on the line above.
        return unsafe { grads_avx2(queries, keys, w, upstream, dims) };
    }
    grads_portable(queries, keys, w, upstream, dims)
}

/// [`scores_portable`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scores_avx2(queries: &[f32], keys: &[f32], w: &[f32], dims: Dims) -> Vec<f32> {
    scores_portable(queries, keys, w, dims)
}

/// [`grads_portable`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn grads_avx2(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
) -> Grads {
    grads_portable(queries, keys, w, upstream, dims)
}

#[inline(always)]
fn scores_portable(queries: &[f32], keys: &[f32], w: &[f32], dims: Dims) -> Vec<f32> {
    let Dims {
        batch,
        queries: nq,
        keys: nk,
        hidden: h,
    } = dims;
    let mut out = spare::zeros(batch * nq * nk);
    if out.is_empty() || h == 0 {
        return out; // no pair, or every score is an empty sum
    }
    // The terms w[h]·tanh(q[h] + k[h]) of one pair: a map, then a sum, vectorise reliably.
    let mut terms = vec![0.0f32; h];
    for ((q_block, k_block), out_block) in queries
        .chunks_exact(nq * h)
        .zip(keys.chunks_exact(nk * h))
        .zip(out.chunks_exact_mut(nq * nk))
    {
        for (q_row, out_row) in q_block.chunks_exact(h).zip(out_block.chunks_exact_mut(nk)) {
            for (k_row, score) in k_block.chunks_exact(h).zip(out_row.iter_mut()) {
                let (q_row, k_row, w, terms) = (&q_row[..h], &k_row[..h], &w[..h], &mut terms[..h]);
                for i in 0..h {
                    terms[i] = w[i] * tanh(q_row[i] + k_row[i]);
                }
                *score = lane_sum(terms);
            }
        }
    }
    out
}

/// With `t = tanh(q[h] + k[h])` and `g` the upstream gradient of one score:
/// `dq[h] += g·w[h]·(1 − t²)`, `dk[h] += g·w[h]·(1 − t²)`, `dw[h] += g·t`.
#[inline(always)]
fn grads_portable(queries: &[f32], keys: &[f32], w: &[f32], upstream: &[f32], dims: Dims) -> Grads {
    let Dims {
        batch,
        queries: nq,
        keys: nk,
        hidden: h,
    } = dims;
    let mut grads = Grads {
        queries: spare::zeros(batch * nq * h),
        keys: spare::zeros(batch * nk * h),
        w: vec![0.0; h],
    };
    if h == 0 || nq == 0 || nk == 0 {
        return grads;
    }
    // The sum over one query's keys first, then over queries: shorter sums, smaller error.
    let mut dw_row = vec![0.0f32; h];
    for b in 0..batch {
        let q_block = &queries[b * nq * h..(b + 1) * nq * h];
        let k_block = &keys[b * nk * h..(b + 1) * nk * h];
        let dq_block = &mut grads.queries[b * nq * h..(b + 1) * nq * h];
        let dk_block = &mut grads.keys[b * nk * h..(b + 1) * nk * h];
        let g_block = &upstream[b * nq * nk..(b + 1) * nq * nk];
        for ((q_row, dq_row), g_row) in q_block
            .chunks_exact(h)
            .zip(dq_block.chunks_exact_mut(h))
            .zip(g_block.chunks_exact(nk))
        {
            dw_row.fill(0.0);
            let (q_row, w, dq_row) = (&q_row[..h], &w[..h], &mut dq_row[..h]);
            for ((k_row, dk_row), &g) in k_block
                .chunks_exact(h)
                .zip(dk_block.chunks_exact_mut(h))
                .zip(g_row)
            {
                let (k_row, dk_row, dw_row) = (&k_row[..h], &mut dk_row[..h], &mut dw_row[..h]);
                for i in 0..h {
                    let t = tanh(q_row[i] + k_row[i]);
                    let d = g * w[i] * (1.0 - t * t);
                    dq_row[i] += d;
                    dk_row[i] += d;
                    dw_row[i] += g * t;
                }
            }
            for (total, part) in grads.w.iter_mut().zip(&dw_row) {
                *total += part;
            }
        }
    }
    grads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_is_within_5e_7_of_the_exact_value() {
        let mut worst = 0.0f64;
        for i in -200_000..=200_000 {
            let x = i as f32 * 1e-4; // -20 ..= 20 in steps of 1e-4
            let exact = (x as f64).tanh();
            worst = worst.max((tanh(x) as f64 - exact).abs());
        }
        assert!(worst < 5e-7, "largest error {worst:e}");
        assert_eq!(tanh(0.0), 0.0);
        assert_eq!(tanh(20.0), 1.0);
        assert_eq!(tanh(-20.0), -1.0);
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert!(tanh(f32::NAN).is_nan());
    }
}
