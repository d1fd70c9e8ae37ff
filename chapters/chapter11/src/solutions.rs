// ANCHOR: all
//! The reference solutions of the chapter 11 exercises (the tests in
//! `tests/exercises.rs` hold your `src/exercises.rs` to the same assertions).

use crate::online::Running;

// ANCHOR: exercise_1
/// Exercise 1. Merges the online-softmax states of two parts of one row, each
/// computed on its own (`a` over some keys, `b` over the others): the state of the
/// whole row. Either part may be empty ([`Running::EMPTY`], whose `max` is `-∞`).
pub fn merge(a: Running, b: Running) -> Running {
    let max = a.max.max(b.max);
    if max == f64::NEG_INFINITY {
        return Running::EMPTY; // both empty: exp(-∞ − -∞) would be NaN
    }
    let (ra, rb) = ((a.max - max).exp(), (b.max - max).exp());
    Running {
        max,
        sum: a.sum * ra + b.sum * rb,
        acc: a.acc * ra + b.acc * rb,
    }
}
// ANCHOR_END: exercise_1

// ANCHOR: exercise_2
/// Exercise 2. The `[n, n]` keep mask (row-major, 1.0 where kept) of a dilated
/// window: query `i` sees key `j` when `|i − j| ≤ window · dilation` and `|i − j|` is
/// a multiple of `dilation`. With `dilation = 1` it is the local window of half-width
/// `window`.
pub fn dilated_window_mask(n: usize, window: usize, dilation: usize) -> Vec<f32> {
    let mut keep = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let distance = i.abs_diff(j);
            if distance <= window * dilation && distance % dilation == 0 {
                keep[i * n + j] = 1.0;
            }
        }
    }
    keep
}
// ANCHOR_END: exercise_2

// ANCHOR: exercise_3
/// Exercise 3. The share of a row's softmax weight that a pattern keeps: with
/// `p = softmax(scores)` over the whole row, `Σ p[j]` over the keys `j` where
/// `keep[j]`.
pub fn kept_weight(scores: &[f64], keep: &[bool]) -> f64 {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = scores.iter().map(|&s| (s - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    let kept: f64 = exps
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(e, _)| e)
        .sum();
    kept / total
}
// ANCHOR_END: exercise_3

// ANCHOR: exercise_4
/// Exercise 4. The least-squares slope of `ln y` against `ln x` over `points` (at
/// least two, with different `x`): for costs `y = c·xᵏ` it is `k`.
pub fn loglog_slope(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> =
        points.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let count = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let cov: f64 = logs.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let var: f64 = logs.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    cov / var
}
// ANCHOR_END: exercise_4
// ANCHOR_END: all
