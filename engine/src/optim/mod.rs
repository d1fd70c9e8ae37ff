//! Optimizers, gradient clipping and a learning-rate warmup, each following PyTorch's
//! formulas exactly so a run can be compared step for step with `torch.optim`.
//!
//! ```
//! use engine::nn::{Linear, LinearConfig, Module};
//! use engine::optim::{Optimizer, Sgd, SgdConfig};
//! use engine::Tensor;
//!
//! engine::manual_seed(0);
//! let layer = Linear::new(LinearConfig { in_features: 2, out_features: 1, ..Default::default() });
//! let mut opt = Sgd::new(layer.parameters(), SgdConfig { lr: 0.1, ..SgdConfig::default() });
//! let x = Tensor::from_vec(vec![1.0, 2.0], &[1, 2]);
//! let loss_before = layer.forward(&x).square().sum();
//! loss_before.backward();
//! opt.step();
//! opt.zero_grad();
//! let loss_after = layer.forward(&x).square().sum();
//! assert!(loss_after.item() < loss_before.item());
//! ```
//!
//! Where to look:
//! - `optimizer.rs`: the [`Optimizer`] trait and [`check_parameters`].
//! - `sgd.rs`: [`Sgd`]; `adam.rs`: [`Adam`] and [`AdamW`].
//! - `clip.rs`: [`clip_grad_norm`]; `warmup.rs`: [`LinearWarmup`].
//! - `grad_scaler.rs`: [`GradScaler`], dynamic loss scaling for half precision.

mod adam;
mod clip;
mod grad_scaler;
mod optimizer;
mod sgd;
mod warmup;

pub use adam::{Adam, AdamConfig, AdamW};
pub use clip::clip_grad_norm;
pub use grad_scaler::{GradScaler, GradScalerConfig};
pub use optimizer::{Optimizer, check_learning_rate, check_parameters};
pub use sgd::{Sgd, SgdConfig};
pub use warmup::LinearWarmup;
