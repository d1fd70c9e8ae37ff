//! Reductions along one dimension, and the softmax family.
//!
//! A tensor is viewed as `[outer, n, inner]` around the reduced dimension (see
//! [`crate::shape::split_at_dim`]); each of the `outer × inner` lines of `n` values is
//! reduced independently. Loops run `outer → n → inner` so the innermost loop reads
//! contiguous memory.

use super::parallel::for_each_block;

/// Sums each line: `[outer, n, inner] → [outer, inner]`.
pub(crate) fn sum_dim(a: &[f32], (outer, n, inner): (usize, usize, usize)) -> Vec<f32> {
    if inner == 1 {
        // The last dimension: each line is a contiguous row, added up in the same order.
        return (0..outer)
            .map(|o| a[o * n..(o + 1) * n].iter().fold(0.0, |acc, &x| acc + x))
            .collect();
    }
    let mut out = vec![0.0; outer * inner];
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

/// The maximum of each line: `[outer, n, inner] → [outer, inner]`. NaN propagates, as in
/// PyTorch.
pub(crate) fn max_dim(a: &[f32], (outer, n, inner): (usize, usize, usize)) -> Vec<f32> {
    let mut out = vec![f32::NEG_INFINITY; outer * inner];
    for o in 0..outer {
        let row = &mut out[o * inner..(o + 1) * inner];
        for k in 0..n {
            let src = &a[(o * n + k) * inner..(o * n + k + 1) * inner];
            for (acc, &x) in row.iter_mut().zip(src) {
                if x > *acc || x.is_nan() {
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
    let mut out = vec![0.0; a.len()];
    if n == 0 {
        return out;
    }
    if inner == 1 {
        // The last dimension, the usual case: each line is a contiguous row (large tensors
        // share their rows out between threads).
        for_each_block(&mut out, n, |start, block| {
            for (src, dst) in a[start..].chunks_exact(n).zip(block.chunks_exact_mut(n)) {
                softmax_line(src, dst, log);
            }
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
    let mut dx = vec![0.0; out.len()];
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

/// The softmax (or log-softmax) of one line `src`, written to `dst`, with one `exp` per
/// element: the exponentials are kept, then divided by their sum.
fn softmax_line(src: &[f32], dst: &mut [f32], log: bool) {
    let max = src.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // A line with no finite maximum (all -inf, or a +inf) is not shifted: all -inf gives
    // 0/0 = NaN everywhere, as in PyTorch; a +inf gives NaN at the +inf.
    let shift = if max.is_finite() { max } else { 0.0 };
    let mut total = 0.0f32;
    for (d, &x) in dst.iter_mut().zip(src) {
        let e = (x - shift).exp();
        total += e;
        *d = if log { x - shift } else { e };
    }
    if log {
        let log_total = total.ln();
        for d in dst.iter_mut() {
            *d -= log_total;
        }
    } else {
        for d in dst.iter_mut() {
            *d /= total;
        }
    }
}
