//! Layers built from the engine's ops, shaped and initialised like their PyTorch namesakes,
//! so weights can be copied across and results compared number for number.
//!
//! Each layer owns its parameters (leaf tensors that require a gradient) and has an
//! inherent `forward` method; the [`Module`] trait gives every layer the same way to list
//! its parameters, save and load them by name ([`StateDict`]), and switch between training
//! and evaluation.
//!
//! One pattern builds every layer: `Layer::new(LayerConfig { … })`, the settings named as
//! in PyTorch, with PyTorch's defaults (sizes have none and must be set). To give a layer
//! chosen weights, build it and [`load_state_dict`](Module::load_state_dict), which
//! *copies* the values in, as PyTorch does: a module owns its parameters, and the state's
//! tensors are never shared or changed (a `from_state_dict` constructor built on
//! [`StateReader`] copies the same way). The basic layers also have
//! `from_weights`, which *shares* the given tensors, for weight tying.
//!
//! ```
//! use engine::nn::{Linear, LinearConfig, Module};
//! use engine::Tensor;
//!
//! engine::manual_seed(0);
//! let layer = Linear::new(LinearConfig { in_features: 4, out_features: 2, ..Default::default() });
//! let y = layer.forward(&Tensor::ones(&[3, 4]));
//! assert_eq!(y.shape(), &[3, 2]);
//! assert_eq!(layer.num_parameters(), 4 * 2 + 2);
//! ```
//!
//! Where to look:
//! - `module.rs`: the [`Module`] trait and [`parameter`]; `state_dict.rs`: [`StateDict`].
//! - `init.rs`: the initialisers, as [`init`].
//! - one file per layer: `linear.rs`, `embedding.rs`, `layer_norm.rs`, `dropout.rs`,
//!   `gru.rs`, and `weight_norm.rs` ([`WeightNorm`], a `Linear` whose weight is a length
//!   times a direction).

mod dropout;
mod embedding;
mod gru;
pub mod init;
mod layer_norm;
mod linear;
mod module;
mod state_dict;
mod weight_norm;

pub use dropout::{Dropout, DropoutConfig};
pub use embedding::{Embedding, EmbeddingConfig};
pub use gru::{Gru, GruCell, GruConfig};
pub use layer_norm::{LayerNorm, LayerNormConfig};
pub use linear::{Linear, LinearConfig};
pub use module::{Module, parameter, prefixed};
pub use state_dict::{LoadError, StateDict, StateReader};
pub use weight_norm::WeightNorm;
