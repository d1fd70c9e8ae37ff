//! [`Adam`] and [`AdamW`]: adaptive moment estimation, with L2 or decoupled weight decay.

use super::optimizer::{
    Optimizer, check_learning_rate, check_non_negative, check_parameters,
};
use crate::check;
use crate::grad_mode::no_grad;
use crate::tensor::Tensor;

/// Hyper-parameters of [`Adam`] and [`AdamW`].
///
/// `Default` gives `torch.optim.Adam`'s defaults (no weight decay);
/// [`AdamConfig::default_adamw`] gives `torch.optim.AdamW`'s (weight decay 0.01).
///
/// ```
/// use engine::optim::AdamConfig;
/// let config = AdamConfig { lr: 3e-4, ..AdamConfig::default_adamw() };
/// assert_eq!(config.weight_decay, 0.01);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    /// Learning rate (default 1e-3).
    pub lr: f32,
    /// Decay rates of the first and second moment averages (default 0.9, 0.999).
    pub betas: (f32, f32),
    /// Added to the denominator for stability (default 1e-8).
    pub eps: f32,
    /// Weight decay: an L2 term in [`Adam`], a decoupled shrink in [`AdamW`].
    pub weight_decay: f32,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
}

impl AdamConfig {
    /// PyTorch's `AdamW` defaults: as `default()`, with `weight_decay = 0.01`.
    pub fn default_adamw() -> AdamConfig {
        AdamConfig {
            weight_decay: 1e-2,
            ..AdamConfig::default()
        }
    }

    /// The checks [`Adam::new`] and [`AdamW::new`] make on their hyper-parameters; call it
    /// from the constructor of an Adam of your own, with the constructor's name as `op`.
    ///
    /// # Panics
    /// When `lr`, `eps` or `weight_decay` is negative or not finite, or a beta is outside
    /// `[0, 1)`.
    ///
    /// ```should_panic
    /// use engine::optim::AdamConfig;
    /// // MyAdam::new: both betas must be in [0, 1), found (0.9, 1)
    /// AdamConfig { betas: (0.9, 1.0), ..Default::default() }.check("MyAdam::new");
    /// ```
    #[track_caller]
    pub fn check(&self, op: &str) {
        check_learning_rate(op, self.lr);
        check_non_negative(op, "eps", self.eps);
        check_non_negative(op, "weight_decay", self.weight_decay);
        let (b1, b2) = self.betas;
        check::ensure(
            (0.0..1.0).contains(&b1) && (0.0..1.0).contains(&b2),
            op,
            || format!("both betas must be in [0, 1), found ({b1}, {b2})"),
        );
    }
}

/// Adam (Kingma and Ba, 2015) with PyTorch's exact update (`torch.optim.Adam`). For each
/// parameter `p` with gradient `g`, at its `t`-th update (counting from 1):
///
/// ```text
/// g = g + weight_decay · p                 (L2 penalty, part of the gradient)
/// m = β₁ m + (1 − β₁) g
/// v = β₂ v + (1 − β₂) g²
/// p = p − lr / (1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + eps)
/// ```
///
/// `m` and `v` start at zero; `t` counts only the steps on which the parameter had a
/// gradient, as PyTorch's per-parameter `step` does.
#[derive(Debug)]
pub struct Adam {
    core: AdamCore,
}

/// AdamW (Loshchilov and Hutter, 2019), `torch.optim.AdamW`: Adam whose weight decay is
/// decoupled from the gradient. Each update first shrinks the parameter,
/// `p = p − lr · weight_decay · p`, then takes the [`Adam`] step with the raw gradient,
/// so the decay is not rescaled by the adaptive denominator.
#[derive(Debug)]
pub struct AdamW {
    core: AdamCore,
}

impl Adam {
    /// An optimizer for `params` (leaf tensors, e.g. from `Module::parameters`).
    ///
    /// # Panics
    /// When `params` is empty, or holds a tensor that does not require a gradient, is not
    /// a leaf or is listed twice (see [`check_parameters`](super::check_parameters)), or
    /// when a hyper-parameter is out of range.
    #[track_caller]
    pub fn new(params: Vec<Tensor>, config: AdamConfig) -> Adam {
        Adam {
            core: AdamCore::new("Adam::new", params, config),
        }
    }

    /// The hyper-parameters (the learning rate as last set).
    pub fn config(&self) -> &AdamConfig {
        &self.core.config
    }
}

impl AdamW {
    /// An optimizer for `params` (leaf tensors, e.g. from `Module::parameters`).
    ///
    /// # Panics
    /// When `params` is empty, or holds a tensor that does not require a gradient, is not
    /// a leaf or is listed twice (see [`check_parameters`](super::check_parameters)), or
    /// when a hyper-parameter is out of range.
    #[track_caller]
    pub fn new(params: Vec<Tensor>, config: AdamConfig) -> AdamW {
        AdamW {
            core: AdamCore::new("AdamW::new", params, config),
        }
    }

    /// The hyper-parameters (the learning rate as last set).
    pub fn config(&self) -> &AdamConfig {
        &self.core.config
    }
}

/// Where weight decay enters the update.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decay {
    /// Added to the gradient (Adam).
    L2,
    /// Applied to the parameter directly (AdamW).
    Decoupled,
}

/// A parameter's running averages and its own update count.
#[derive(Debug)]
struct Moments {
    step: i32,
    m: Tensor,
    v: Tensor,
}

/// The state and update shared by [`Adam`] and [`AdamW`].
#[derive(Debug)]
struct AdamCore {
    params: Vec<Tensor>,
    config: AdamConfig,
    moments: Vec<Option<Moments>>,
}

impl AdamCore {
    #[track_caller]
    fn new(op: &str, params: Vec<Tensor>, config: AdamConfig) -> AdamCore {
        check_parameters(op, &params);
        config.check(op);
        let moments = params.iter().map(|_| None).collect();
        AdamCore {
            params,
            config,
            moments,
        }
    }

    fn step(&mut self, decay: Decay) {
        let c = self.config;
        let (b1, b2) = c.betas;
        no_grad(|| {
            for (p, state) in self.params.iter().zip(&mut self.moments) {
                let Some(mut g) = p.grad().ok() else { continue };
                let s = state.get_or_insert_with(|| Moments {
                    step: 0,
                    m: p.zeros_like(),
                    v: p.zeros_like(),
                });
                s.step += 1;
                let mut value = p.detach();
                if c.weight_decay != 0.0 {
                    match decay {
                        Decay::L2 => g = &g + &value * c.weight_decay,
                        Decay::Decoupled => {
                            value = &value * (1.0 - c.lr * c.weight_decay)
                        }
                    }
                }
                s.m = &s.m * b1 + &g * (1.0 - b1);
                s.v = &s.v * b2 + g.square() * (1.0 - b2);
                let correction1 = 1.0 - b1.powi(s.step);
                let correction2 = 1.0 - b2.powi(s.step);
                let denom = s.v.sqrt() / correction2.sqrt() + c.eps;
                let update = &s.m / denom * (c.lr / correction1);
                p.assign(&(value - update));
            }
        });
    }

    #[track_caller]
    fn set_lr(&mut self, op: &str, lr: f32) {
        check_learning_rate(op, lr);
        self.config.lr = lr;
    }
}

impl Optimizer for Adam {
    fn step(&mut self) {
        self.core.step(Decay::L2);
    }

    fn parameters(&self) -> &[Tensor] {
        &self.core.params
    }

    fn lr(&self) -> f32 {
        self.core.config.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f32) {
        self.core.set_lr("Adam::set_lr", lr);
    }
}

impl Optimizer for AdamW {
    fn step(&mut self) {
        self.core.step(Decay::Decoupled);
    }

    fn parameters(&self) -> &[Tensor] {
        &self.core.params
    }

    fn lr(&self) -> f32 {
        self.core.config.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f32) {
        self.core.set_lr("AdamW::set_lr", lr);
    }
}
