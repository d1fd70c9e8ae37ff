//! Dynamic loss scaling, PyTorch's `torch.amp.GradScaler`: multiply the loss by a large
//! factor so that small gradients survive half precision, divide the gradients by it
//! before the step, and skip any step whose gradients overflowed.

use crate::check;
use crate::grad_mode::no_grad;
use crate::optim::Optimizer;
use crate::tensor::Tensor;

/// The settings of a [`GradScaler`], with PyTorch's names and defaults.
///
/// ```
/// use engine::optim::GradScalerConfig;
/// let c = GradScalerConfig::default();
/// assert_eq!((c.init_scale, c.growth_factor, c.backoff_factor, c.growth_interval), (65536.0, 2.0, 0.5, 2000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradScalerConfig {
    /// The first scale (default 2¹⁶ = 65536).
    pub init_scale: f32,
    /// The factor the scale grows by after `growth_interval` steps without an overflow
    /// (default 2).
    pub growth_factor: f32,
    /// The factor the scale shrinks by after a step whose gradients overflowed (default ½).
    pub backoff_factor: f32,
    /// Steps without an overflow before the scale grows (default 2000).
    pub growth_interval: usize,
    /// With `false`, scaling does nothing: `scale` returns the loss, `step` always steps
    /// (default `true`), so one training loop serves both.
    pub enabled: bool,
}

impl Default for GradScalerConfig {
    fn default() -> Self {
        GradScalerConfig {
            init_scale: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
            enabled: true,
        }
    }
}

/// Dynamic loss scaling, step for step PyTorch's `GradScaler` rule:
///
/// 1. [`scale`](GradScaler::scale): `loss × S` before `backward`, so every gradient is
///    `S` times larger and fewer underflow to zero in f16;
/// 2. [`unscale_`](GradScaler::unscale_) (optional, before clipping): every gradient
///    times `1/S`, and a note of whether any is infinite or NaN;
/// 3. [`step`](GradScaler::step): unscales if not done yet, then runs the optimizer's
///    step, unless a gradient overflowed: then the step is skipped, the parameters are
///    left as they were, and it returns `false`;
/// 4. [`update`](GradScaler::update): after an overflow `S ← S × backoff_factor`;
///    after `growth_interval` steps in a row without one, `S ← S × growth_factor`.
///
/// ```
/// use engine::optim::{GradScaler, GradScalerConfig, Optimizer, Sgd, SgdConfig};
/// use engine::Tensor;
///
/// let w = Tensor::from_vec(vec![1.0], [1]).requires_grad_();
/// let mut opt = Sgd::new(vec![w.clone()], SgdConfig { lr: 0.1, ..Default::default() });
/// let mut scaler = GradScaler::new(GradScalerConfig { init_scale: 1024.0, ..Default::default() });
/// let loss = w.square().sum(); // d loss / dw = 2
/// scaler.scale(&loss).backward();
/// assert_eq!(w.grad().unwrap().item(), 2048.0); // scaled
/// assert!(scaler.step(&mut opt)); // unscaled to 2, then w ← 1 − 0.1 · 2
/// scaler.update();
/// assert!((w.item() - 0.8).abs() < 1e-6);
/// ```
#[derive(Clone, Debug)]
pub struct GradScaler {
    config: GradScalerConfig,
    scale: f32,
    /// Steps in a row without an overflow since the scale last changed.
    growth_tracker: usize,
    /// Set by `unscale_` for the current step: whether a gradient was infinite or NaN.
    found_inf: Option<bool>,
    /// Whether `step` was called since the last `update`.
    stepped: bool,
    skipped: usize,
}

impl GradScaler {
    /// A scaler with the given settings.
    #[track_caller]
    pub fn new(config: GradScalerConfig) -> GradScaler {
        let op = "GradScaler::new";
        check::ensure(
            config.init_scale.is_finite() && config.init_scale > 0.0,
            op,
            || {
                format!(
                    "init_scale must be finite and above 0, found {}",
                    config.init_scale
                )
            },
        );
        check::ensure(config.growth_factor > 1.0, op, || {
            format!(
                "growth_factor must be above 1, found {}",
                config.growth_factor
            )
        });
        check::ensure(
            config.backoff_factor > 0.0 && config.backoff_factor < 1.0,
            op,
            || {
                format!(
                    "backoff_factor must be in (0, 1), found {}",
                    config.backoff_factor
                )
            },
        );
        check::positive(op, "growth_interval", config.growth_interval);
        GradScaler {
            config,
            scale: config.init_scale,
            growth_tracker: 0,
            found_inf: None,
            stepped: false,
            skipped: 0,
        }
    }

    /// `loss × scale` (the loss itself when disabled): call `backward` on this.
    pub fn scale(&self, loss: &Tensor) -> Tensor {
        if self.config.enabled {
            loss * self.scale
        } else {
            loss.clone()
        }
    }

    /// Divides every gradient of the optimizer's parameters by the scale (multiplies by
    /// `1/scale`, as PyTorch does) and notes whether any is infinite or NaN. Call it before
    /// clipping gradients; [`step`](GradScaler::step) calls it if you did not. Calling it
    /// twice between two [`update`](GradScaler::update)s is a mistake and panics (the
    /// gradients would be divided twice).
    #[track_caller]
    pub fn unscale_(&mut self, optimizer: &dyn Optimizer) {
        if !self.config.enabled {
            return;
        }
        check::ensure(self.found_inf.is_none(), "GradScaler::unscale_", || {
            "unscale_ was already called since the last update(): the gradients would be divided by the scale twice; hint: call update() after every step".into()
        });
        let inverse = (1.0 / f64::from(self.scale)) as f32;
        let mut found_inf = false;
        no_grad(|| {
            for p in optimizer.parameters() {
                if let Ok(g) = p.grad() {
                    let unscaled = &g * inverse;
                    found_inf |= unscaled.to_vec().iter().any(|v| !v.is_finite());
                    p.set_grad(Some(unscaled));
                }
            }
        });
        self.found_inf = Some(found_inf);
    }

    /// Unscales the gradients (unless [`unscale_`](GradScaler::unscale_) already did) and
    /// runs `optimizer.step()` unless a gradient is infinite or NaN. Returns whether the
    /// step ran. Call [`update`](GradScaler::update) after it.
    #[track_caller]
    pub fn step(&mut self, optimizer: &mut dyn Optimizer) -> bool {
        if !self.config.enabled {
            optimizer.step();
            return true;
        }
        if self.found_inf.is_none() {
            self.unscale_(optimizer);
        }
        self.stepped = true;
        if self.found_inf == Some(true) {
            self.skipped += 1;
            return false;
        }
        optimizer.step();
        true
    }

    /// Adjusts the scale after a step: halved (× `backoff_factor`) when the gradients
    /// overflowed, doubled (× `growth_factor`) after `growth_interval` steps in a row
    /// without an overflow, unchanged otherwise.
    #[track_caller]
    pub fn update(&mut self) {
        if !self.config.enabled {
            return;
        }
        check::ensure(self.stepped, "GradScaler::update", || {
            "called without a step() since the last update(); hint: scaler.step(&mut optimizer) first".into()
        });
        if self.found_inf == Some(true) {
            self.scale *= self.config.backoff_factor;
            self.growth_tracker = 0;
        } else {
            self.growth_tracker += 1;
            if self.growth_tracker == self.config.growth_interval {
                self.scale *= self.config.growth_factor;
                self.growth_tracker = 0;
            }
        }
        self.found_inf = None;
        self.stepped = false;
    }

    /// The current scale (PyTorch's `get_scale()`).
    pub fn get_scale(&self) -> f32 {
        self.scale
    }

    /// How many steps were skipped because a gradient overflowed.
    pub fn steps_skipped(&self) -> usize {
        self.skipped
    }

    /// The settings.
    pub fn config(&self) -> GradScalerConfig {
        self.config
    }
}
