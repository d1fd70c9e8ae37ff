//! [`Sgd`]: stochastic gradient descent with momentum and weight decay.

use super::optimizer::{
    Optimizer, check_learning_rate, check_non_negative, check_parameters,
};
use crate::check;
use crate::grad_mode::no_grad;
use crate::tensor::Tensor;

/// Hyper-parameters of [`Sgd`], with PyTorch's defaults.
///
/// ```
/// use engine::optim::SgdConfig;
/// let config = SgdConfig { lr: 0.1, momentum: 0.9, ..SgdConfig::default() };
/// assert_eq!(config.weight_decay, 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdConfig {
    /// Learning rate (PyTorch's default 1e-3).
    pub lr: f32,
    /// Momentum factor; 0 turns momentum off.
    pub momentum: f32,
    /// How much of each new gradient the momentum buffer takes in is `1 − dampening`.
    pub dampening: f32,
    /// L2 penalty: `weight_decay · p` is added to the gradient.
    pub weight_decay: f32,
    /// Nesterov momentum (needs `momentum > 0` and `dampening = 0`).
    pub nesterov: bool,
}

impl Default for SgdConfig {
    fn default() -> Self {
        SgdConfig {
            lr: 1e-3,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
        }
    }
}

/// Stochastic gradient descent with PyTorch's exact update (`torch.optim.SGD`). For each
/// parameter `p` with gradient `g`:
///
/// ```text
/// d = g + weight_decay · p
/// b = d                                  on the first step (no dampening yet)
/// b = momentum · b + (1 − dampening) · d  afterwards
/// d = d + momentum · b  if nesterov, else  d = b      (only when momentum ≠ 0)
/// p = p − lr · d
/// ```
#[derive(Debug)]
pub struct Sgd {
    params: Vec<Tensor>,
    config: SgdConfig,
    /// One momentum buffer per parameter, created on its first update.
    momentum_buffers: Vec<Option<Tensor>>,
}

impl Sgd {
    /// An optimizer for `params` (leaf tensors, e.g. from `Module::parameters`).
    ///
    /// # Panics
    /// When `params` is empty, or holds a tensor that does not require a gradient, is not
    /// a leaf or is listed twice (see [`check_parameters`](super::check_parameters)), or
    /// when a hyper-parameter is out of range.
    #[track_caller]
    pub fn new(params: Vec<Tensor>, config: SgdConfig) -> Sgd {
        let op = "Sgd::new";
        check_parameters(op, &params);
        check_learning_rate(op, config.lr);
        check_non_negative(op, "momentum", config.momentum);
        check_non_negative(op, "weight_decay", config.weight_decay);
        check::ensure(config.dampening.is_finite(), op, || {
            format!("dampening must be finite, found {}", config.dampening)
        });
        check::ensure(
            !config.nesterov || (config.momentum > 0.0 && config.dampening == 0.0),
            op,
            || {
                format!(
                    "nesterov momentum needs momentum > 0 and dampening = 0, found momentum {} and dampening {}",
                    config.momentum, config.dampening
                )
            },
        );
        let momentum_buffers = vec![None; params.len()];
        Sgd {
            params,
            config,
            momentum_buffers,
        }
    }

    /// The hyper-parameters (the learning rate as last set).
    pub fn config(&self) -> &SgdConfig {
        &self.config
    }
}

impl Optimizer for Sgd {
    fn step(&mut self) {
        let c = self.config;
        no_grad(|| {
            for (p, buffer) in self.params.iter().zip(&mut self.momentum_buffers) {
                let Some(mut d) = p.grad().ok() else { continue };
                if c.weight_decay != 0.0 {
                    d = &d + p * c.weight_decay;
                }
                if c.momentum != 0.0 {
                    let b = match buffer.take() {
                        // A handle of its own, not the gradient's: the buffer must not
                        // change if someone later assigns to the gradient. (Values never
                        // change in place, so sharing them is safe, on any device.)
                        None => d.detach(),
                        Some(b) => b * c.momentum + &d * (1.0 - c.dampening),
                    };
                    d = if c.nesterov {
                        &d + &b * c.momentum
                    } else {
                        b.clone()
                    };
                    *buffer = Some(b);
                }
                p.assign(&(p - d * c.lr));
            }
        });
    }

    fn parameters(&self) -> &[Tensor] {
        &self.params
    }

    fn lr(&self) -> f32 {
        self.config.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f32) {
        check_learning_rate("Sgd::set_lr", lr);
        self.config.lr = lr;
    }
}
