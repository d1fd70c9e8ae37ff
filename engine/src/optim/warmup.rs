//! [`LinearWarmup`]: a learning rate that rises linearly, then stays constant.

use super::optimizer::check_non_negative;
use crate::check;

/// A learning-rate schedule that rises linearly over the first `warmup_steps` steps and
/// then stays at the base rate:
///
/// ```text
/// lr(t) = base_lr · (s + (1 − s) · min(t, W) / W)
/// ```
///
/// with `s` the start factor (0 unless set with [`with_start_factor`](Self::with_start_factor))
/// and `W = warmup_steps`; with `W = 0` the rate is `base_lr` from the start. Step `t`
/// counts optimizer steps from 0, so the first step runs at `s · base_lr`.
///
/// This is PyTorch's `LinearLR(opt, start_factor=s, end_factor=1.0, total_iters=W)` (which
/// requires `s > 0`), and for `s = 0` it is `LambdaLR(opt, lambda t: min(t, W) / W)`.
///
/// ```
/// use engine::optim::{LinearWarmup, Optimizer, Sgd, SgdConfig};
/// use engine::Tensor;
///
/// let schedule = LinearWarmup::new(0.1, 4);
/// assert_eq!(schedule.lr_at(0), 0.0);
/// assert_eq!(schedule.lr_at(2), 0.05);
/// assert_eq!(schedule.lr_at(100), 0.1);
///
/// let w = Tensor::zeros(&[1]).requires_grad_();
/// let mut opt = Sgd::new(vec![w], SgdConfig::default());
/// for step in 0..3 {
///     opt.set_lr(schedule.lr_at(step));
///     // forward, backward, opt.step(), opt.zero_grad()
/// }
/// assert_eq!(opt.lr(), 0.05);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearWarmup {
    base_lr: f32,
    warmup_steps: usize,
    start_factor: f32,
}

impl LinearWarmup {
    /// A warmup from 0 to `base_lr` over `warmup_steps` steps.
    #[track_caller]
    pub fn new(base_lr: f32, warmup_steps: usize) -> LinearWarmup {
        check_non_negative("LinearWarmup::new", "base_lr", base_lr);
        LinearWarmup {
            base_lr,
            warmup_steps,
            start_factor: 0.0,
        }
    }

    /// Starts the warmup at `start_factor · base_lr` instead of 0 (`start_factor` in
    /// `[0, 1]`).
    #[track_caller]
    pub fn with_start_factor(self, start_factor: f32) -> LinearWarmup {
        check::ensure(
            (0.0..=1.0).contains(&start_factor),
            "LinearWarmup::with_start_factor",
            || format!("start_factor must be in [0, 1], found {start_factor}"),
        );
        LinearWarmup {
            start_factor,
            ..self
        }
    }

    /// The learning rate for optimizer step `step` (counting from 0).
    pub fn lr_at(&self, step: usize) -> f32 {
        if self.warmup_steps == 0 {
            return self.base_lr;
        }
        let progress = step.min(self.warmup_steps) as f32 / self.warmup_steps as f32;
        self.base_lr * (self.start_factor + (1.0 - self.start_factor) * progress)
    }

    /// The rate reached at the end of the warmup.
    pub fn base_lr(&self) -> f32 {
        self.base_lr
    }

    /// The number of steps the rise takes.
    pub fn warmup_steps(&self) -> usize {
        self.warmup_steps
    }

    /// The fraction of `base_lr` at step 0.
    pub fn start_factor(&self) -> f32 {
        self.start_factor
    }
}
