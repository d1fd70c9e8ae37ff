//! Reductions along one dimension, and the softmax family.
//!
//! A tensor is viewed as `[outer, n, inner]` around the reduced dimension (see
//! [`crate::shape::split_at_dim`]); each of the `outer × inner` lines of `n` values is
//! reduced independently. Loops run `outer → n → inner` so the innermost loop reads
//! contiguous memory.

/// Sums each line: `[outer, n, inner] → [outer, inner]`.
pub(crate) fn sum_dim(a: &[f32], (outer, n, inner): (usize, usize, usize)) -> Vec<f32> {
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
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let max = (0..n).map(|k| a[at(k)]).fold(f32::NEG_INFINITY, f32::max);
            // A line with no finite maximum (all -inf, or a +inf) is not shifted: all -inf
            // gives 0/0 = NaN everywhere, as in PyTorch; a +inf gives NaN at the +inf.
            let shift = if max.is_finite() { max } else { 0.0 };
            let total: f32 = (0..n).map(|k| (a[at(k)] - shift).exp()).sum();
            for k in 0..n {
                let z = a[at(k)] - shift;
                out[at(k)] = if log { z - total.ln() } else { z.exp() / total };
            }
        }
    }
    out
}
