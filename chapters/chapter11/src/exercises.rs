//! Your solutions to the chapter 11 exercises. Replace each `todo!()` with your code,
//! then check it with `cargo test -p chapter11 --features exercises` (the same tests
//! the reference solutions pass). The page's "Exercises" section explains each one.

use crate::online::Running;

/// Exercise 1. Merges the online-softmax states of two parts of one row, each
/// computed on its own (`a` over some keys, `b` over the others): the state of the
/// whole row. Either part may be empty ([`Running::EMPTY`], whose `max` is `-∞`).
pub fn merge(a: Running, b: Running) -> Running {
    let _ = (a, b);
    todo!(
        "exercise 1: the larger max; rescale each part's sum and acc to it, then add"
    )
}

/// Exercise 2. The `[n, n]` keep mask (row-major, 1.0 where kept) of a dilated
/// window: query `i` sees key `j` when `|i − j| ≤ window · dilation` and `|i − j|` is
/// a multiple of `dilation`. With `dilation = 1` it is the local window of half-width
/// `window`.
pub fn dilated_window_mask(n: usize, window: usize, dilation: usize) -> Vec<f32> {
    let _ = (n, window, dilation);
    todo!("exercise 2: one row per query; test the distance, then its remainder")
}

/// Exercise 3. The share of a row's softmax weight that a pattern keeps: with
/// `p = softmax(scores)` over the whole row, `Σ p[j]` over the keys `j` where
/// `keep[j]`.
pub fn kept_weight(scores: &[f64], keep: &[bool]) -> f64 {
    let _ = (scores, keep);
    todo!("exercise 3: a stable softmax of the whole row, then sum the kept weights")
}

/// Exercise 4. The least-squares slope of `ln y` against `ln x` over `points` (at
/// least two, with different `x`): for costs `y = c·xᵏ` it is `k`.
pub fn loglog_slope(points: &[(f64, f64)]) -> f64 {
    let _ = points;
    todo!("exercise 4: take logs, then slope = cov(x, y) / var(x)")
}
