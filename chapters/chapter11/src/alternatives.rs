//! A second solution to each chapter 11 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use crate::online::Running;

/// Exercise 1, by cases: an empty part leaves the other as it is; otherwise only the
/// part with the smaller maximum is rescaled, to the larger one.
pub fn merge(a: Running, b: Running) -> Running {
    if b.max == f64::NEG_INFINITY {
        return a;
    }
    if a.max == f64::NEG_INFINITY {
        return b;
    }
    let (high, low) = if a.max >= b.max { (a, b) } else { (b, a) };
    let r = (low.max - high.max).exp();
    Running {
        max: high.max,
        sum: high.sum + r * low.sum,
        acc: high.acc + r * low.acc,
    }
}

/// Exercise 2, by walking from each query in steps of `dilation`, at most `window`
/// steps either way, instead of testing every pair.
pub fn dilated_window_mask(n: usize, window: usize, dilation: usize) -> Vec<f32> {
    let mut keep = vec![0.0; n * n];
    for i in 0..n {
        keep[i * n + i] = 1.0;
        for step in 1..=window {
            let reach = step * dilation;
            if reach == 0 {
                break;
            }
            if i >= reach {
                keep[i * n + i - reach] = 1.0;
            }
            if i + reach < n {
                keep[i * n + i + reach] = 1.0;
            }
        }
    }
    keep
}

/// The log of `Σ exp(sᵢ)` over `scores`, stably; `-∞` when there are none.
fn log_sum_exp(scores: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = scores.clone().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + scores.map(|s| (s - max).exp()).sum::<f64>().ln()
}

/// Exercise 3, in log space: `exp(logsumexp(kept) − logsumexp(all))`.
pub fn kept_weight(scores: &[f64], keep: &[bool]) -> f64 {
    let kept = scores
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(s, _)| *s);
    (log_sum_exp(kept) - log_sum_exp(scores.iter().copied())).exp()
}

/// Exercise 4, by the normal equations' closed form,
/// `(n Σxy − Σx Σy) / (n Σx² − (Σx)²)`, on the logs.
pub fn loglog_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mut sx, mut sy, mut sxy, mut sxx) = (0.0, 0.0, 0.0, 0.0);
    for &(x, y) in points {
        let (lx, ly) = (x.ln(), y.ln());
        sx += lx;
        sy += ly;
        sxy += lx * ly;
        sxx += lx * lx;
    }
    (n * sxy - sx * sy) / (n * sxx - sx * sx)
}
