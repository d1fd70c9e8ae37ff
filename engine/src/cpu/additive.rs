//! Fused additive scores: `s[b, q, k] = Σₕ w[h] · f(q[b, q, h] + k[b, k, h])`, with `f`
//! the [`Activation`] (`tanh`, or ReLU), forward and backward, without the `[B, Q, K, h]`
//! tensor that the broadcast form builds.
//!
//! The forward pass walks one (query, key) pair at a time and keeps only its running sum;
//! the backward pass recomputes each `f` instead of storing it (memory is what made the
//! broadcast form impossible at `Q = K = 1024`, and arithmetic is cheap next to memory
//! traffic).
//!
//! Two things make the loops fast, and neither changes a number:
//! - `tanh` is the engine's own (`cpu/math.rs`, the one element-wise `tanh` uses too): a
//!   rational function of `x²` that the compiler turns into SIMD instructions.
//! - The sum over `h` runs in 8 independent partial sums (`cpu/lanes.rs`), added in a
//!   fixed order at the end, so it vectorises without reassociation. The same code is
//!   compiled for AVX-512, for AVX2 and plain, and runs on the path
//!   [`kernels::active`](crate::kernels::active) names; the three do the same operations
//!   in the same order (Rust never fuses a multiply and an add on its own), so they give
//!   the same bits.

use super::lanes::lane_sum;
use super::math::{relu, relu_grad, tanh};
use crate::activation::Activation;
use crate::kernels;
#[cfg(target_arch = "x86_64")]
use crate::kernels::KernelPath;
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

/// The scores `[B, Q, K]` of `queries: [B, Q, h]` against `keys: [B, K, h]` with `w: [h]`.
pub(crate) fn scores(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: Dims,
    activation: Activation,
) -> Vec<f32> {
    match kernels::active() {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe {
            scores_avx512(queries, keys, w, dims, activation)
        },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe {
            scores_avx2(queries, keys, w, dims, activation)
        },
        _ => scores_portable(queries, keys, w, dims, activation),
    }
}

/// The gradients of [`scores`] given `upstream: [B, Q, K]`, the gradient of the loss with
/// respect to the scores.
pub(crate) fn grads(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
    activation: Activation,
) -> Grads {
    match kernels::active() {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe {
            grads_avx512(queries, keys, w, upstream, dims, activation)
        },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe {
            grads_avx2(queries, keys, w, upstream, dims, activation)
        },
        _ => grads_portable(queries, keys, w, upstream, dims, activation),
    }
}

/// [`scores_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scores_avx512(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: Dims,
    activation: Activation,
) -> Vec<f32> {
    scores_portable(queries, keys, w, dims, activation)
}

/// [`scores_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn scores_avx2(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: Dims,
    activation: Activation,
) -> Vec<f32> {
    scores_portable(queries, keys, w, dims, activation)
}

/// [`grads_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn grads_avx512(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
    activation: Activation,
) -> Grads {
    grads_portable(queries, keys, w, upstream, dims, activation)
}

/// [`grads_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn grads_avx2(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
    activation: Activation,
) -> Grads {
    grads_portable(queries, keys, w, upstream, dims, activation)
}

#[inline(always)]
fn scores_portable(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: Dims,
    activation: Activation,
) -> Vec<f32> {
    match activation {
        Activation::Tanh => scores_of(queries, keys, w, dims, tanh),
        Activation::Relu => scores_of(queries, keys, w, dims, relu),
    }
}

/// The scores with the activation `f`, compiled once per activation.
#[inline(always)]
fn scores_of(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: Dims,
    f: impl Fn(f32) -> f32,
) -> Vec<f32> {
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
    // The terms w[h]·f(q[h] + k[h]) of one pair: a map, then a sum, vectorise reliably.
    let mut terms = vec![0.0f32; h];
    for ((q_block, k_block), out_block) in queries
        .chunks_exact(nq * h)
        .zip(keys.chunks_exact(nk * h))
        .zip(out.chunks_exact_mut(nq * nk))
    {
        for (q_row, out_row) in
            q_block.chunks_exact(h).zip(out_block.chunks_exact_mut(nk))
        {
            for (k_row, score) in k_block.chunks_exact(h).zip(out_row.iter_mut()) {
                let (q_row, k_row, w, terms) =
                    (&q_row[..h], &k_row[..h], &w[..h], &mut terms[..h]);
                for i in 0..h {
                    terms[i] = w[i] * f(q_row[i] + k_row[i]);
                }
                *score = lane_sum(terms);
            }
        }
    }
    out
}

#[inline(always)]
fn grads_portable(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
    activation: Activation,
) -> Grads {
    match activation {
        Activation::Tanh => grads_of(queries, keys, w, upstream, dims, |x| {
            let t = tanh(x);
            (t, 1.0 - t * t)
        }),
        Activation::Relu => grads_of(queries, keys, w, upstream, dims, |x| {
            // The element-wise relu and its derivative: NaN stays NaN, slope 0 at 0.
            (relu(x), relu_grad(x))
        }),
    }
}

/// With `(t, slope) = f_and_slope(q[h] + k[h])` and `g` the upstream gradient of one
/// score: `dq[h] += g·w[h]·slope`, `dk[h] += g·w[h]·slope`, `dw[h] += g·t` (for `tanh`,
/// the slope is `1 − t²`).
#[inline(always)]
fn grads_of(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: Dims,
    f_and_slope: impl Fn(f32) -> (f32, f32),
) -> Grads {
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
                let (k_row, dk_row, dw_row) =
                    (&k_row[..h], &mut dk_row[..h], &mut dw_row[..h]);
                for i in 0..h {
                    let (t, slope) = f_and_slope(q_row[i] + k_row[i]);
                    let d = g * w[i] * slope;
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
    use crate::cpu::seeded_values;
    use crate::kernels::KernelPath;

    #[test]
    fn every_path_gives_the_bits_of_the_portable_one() {
        let same = |x: &[f32], y: &[f32]| {
            x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits())
        };
        for hidden in [1, 7, 8, 19, 64] {
            let dims = Dims {
                batch: 2,
                queries: 3,
                keys: 5,
                hidden,
            };
            let scale =
                |v: Vec<f32>| v.into_iter().map(|x| x * 4.0).collect::<Vec<f32>>();
            let q = scale(seeded_values(2 * 3 * hidden, 1));
            let k = scale(seeded_values(2 * 5 * hidden, 2));
            let w = seeded_values(hidden, 3);
            let g = seeded_values(2 * 3 * 5, 4);
            for act in [Activation::Tanh, Activation::Relu] {
                let on = |path| {
                    kernels::with_path(path, || {
                        let s = scores(&q, &k, &w, dims, act);
                        (s, grads(&q, &k, &w, &g, dims, act))
                    })
                };
                let (plain, plain_grads) = on(KernelPath::Portable);
                for path in KernelPath::supported() {
                    let (s, gr) = on(path);
                    assert!(
                        same(&s, &plain),
                        "{path} {act}: scores, hidden {hidden}"
                    );
                    assert!(
                        same(&gr.queries, &plain_grads.queries),
                        "{path} {act}: dq"
                    );
                    assert!(same(&gr.keys, &plain_grads.keys), "{path} {act}: dk");
                    assert!(same(&gr.w, &plain_grads.w), "{path} {act}: dw");
                }
            }
        }
    }
}
