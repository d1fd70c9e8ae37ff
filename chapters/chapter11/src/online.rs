//! The online softmax by hand, on one row of scores: the idea behind exact attention
//! in blocks, small enough to follow number by number.
//!
//! A row of scores `s` and one value `v` per key (a number, to keep the example
//! small) are met a block at a time. After each block the row holds three numbers, a
//! [`Running`] state: the largest score so far `m`, the sum `l = Σ exp(s − m)` and
//! the weighted sum `acc = Σ exp(s − m) v` over the keys met so far. When a block
//! raises the maximum from `m` to `m'`, everything held so far is multiplied by
//! `exp(m − m')`, so that it is again relative to the new maximum. At the end
//! `acc / l` is the attention output and `exp(s − m) / l` are the softmax weights,
//! exactly as if the whole row had been seen at once.

/// What the online softmax holds for one row after some of its keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Running {
    /// The largest score met so far, `m` (`-∞` before the first key).
    pub max: f64,
    /// `l = Σ exp(s − m)` over the keys met so far.
    pub sum: f64,
    /// `acc = Σ exp(s − m) · v` over the keys met so far.
    pub acc: f64,
}

impl Running {
    /// The state before any key: `m = -∞`, `l = 0`, `acc = 0`.
    pub const EMPTY: Running = Running {
        max: f64::NEG_INFINITY,
        sum: 0.0,
        acc: 0.0,
    };

    /// The attention output, `acc / l`.
    pub fn output(&self) -> f64 {
        self.acc / self.sum
    }

    /// The log of the softmax's denominator, `m + ln l`: what the engine keeps per
    /// row for the backward pass.
    pub fn log_sum_exp(&self) -> f64 {
        self.max + self.sum.ln()
    }

    /// The softmax weights of `scores` (the whole row), `exp(s − m) / l`, from this
    /// final state.
    pub fn weights(&self, scores: &[f64]) -> Vec<f64> {
        scores
            .iter()
            .map(|&s| (s - self.max).exp() / self.sum)
            .collect()
    }
}

// ANCHOR: step
/// Meets one block of `scores`, with their `values`: returns the new state and the
/// factor `exp(m − m')` that rescaled the old one (0 on the first block, where `m` is
/// `-∞` and there is nothing to rescale). The block must hold at least one finite
/// score.
pub fn step(state: Running, scores: &[f64], values: &[f64]) -> (Running, f64) {
    let block_max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let max = state.max.max(block_max); // m' = max(m, this block's max)
    let rescale = (state.max - max).exp(); // exp(m − m')
    let mut sum = state.sum * rescale;
    let mut acc = state.acc * rescale;
    for (&s, &v) in scores.iter().zip(values) {
        let w = (s - max).exp();
        sum += w;
        acc += w * v;
    }
    (Running { max, sum, acc }, rescale)
}
// ANCHOR_END: step

/// One step of [`online_softmax`]: the keys of the block, the factor that rescaled
/// what the row held, and the state after the block.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The first key of the block.
    pub first: usize,
    /// The number of keys in the block.
    pub len: usize,
    /// The block's largest score.
    pub block_max: f64,
    /// The maximum before the block, `m`.
    pub max_before: f64,
    /// `exp(m − m')`.
    pub rescale: f64,
    /// The state after the block.
    pub after: Running,
}

// ANCHOR: online_softmax
/// The whole row, `block` keys at a time: every step, in order. The last step's state
/// gives the output, the weights and the log-sum-exp.
pub fn online_softmax(scores: &[f64], values: &[f64], block: usize) -> Vec<Step> {
    assert!(
        block > 0,
        "online_softmax: the block size must be at least 1"
    );
    assert_eq!(
        scores.len(),
        values.len(),
        "online_softmax: one value per score"
    );
    let mut state = Running::EMPTY;
    let mut steps = Vec::new();
    for first in (0..scores.len()).step_by(block) {
        let end = (first + block).min(scores.len());
        let (s, v) = (&scores[first..end], &values[first..end]);
        let max_before = state.max;
        let (after, rescale) = step(state, s, v);
        steps.push(Step {
            first,
            len: end - first,
            block_max: s.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            max_before,
            rescale,
            after,
        });
        state = after;
    }
    steps
}
// ANCHOR_END: online_softmax

// ANCHOR: softmax
/// The plain softmax of a whole row, `exp(s − max) / Σ exp(s − max)`: the reference.
pub fn softmax(scores: &[f64]) -> Vec<f64> {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = scores.iter().map(|&s| (s - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.iter().map(|e| e / total).collect()
}
// ANCHOR_END: softmax

/// The worked example of the page: six scores and their values.
pub const EXAMPLE_SCORES: [f64; 6] = [1.0, 3.0, 0.5, 4.0, 2.0, 2.5];
/// The values of [`EXAMPLE_SCORES`]' keys.
pub const EXAMPLE_VALUES: [f64; 6] = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
