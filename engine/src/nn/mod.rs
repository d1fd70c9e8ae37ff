//! Layers built from the engine's ops, shaped and initialised like their PyTorch namesakes,
//! so weights can be copied across and results compared number for number.
//!
//! Each layer owns its parameters (leaf tensors that require a gradient) and has an
//! inherent `forward` method; the [`Module`] trait gives every layer the same way to list
//! its parameters and to switch between training and evaluation.
//!
//! ```
//! use engine::nn::{Linear, Module};
//! use engine::Tensor;
//!
//! engine::manual_seed(0);
//! let layer = Linear::new(4, 2, true);
//! let y = layer.forward(&Tensor::ones(&[3, 4]));
//! assert_eq!(y.shape(), &[3, 2]);
//! assert_eq!(layer.num_parameters(), 4 * 2 + 2);
//! ```
//!
//! Where to look:
//! - `module.rs`: the [`Module`] trait and [`parameter`].
//! - `init.rs`: the initialisers, as [`init`].
//! - one file per layer: `linear.rs`, `embedding.rs`, `layer_norm.rs`, `dropout.rs`,
//!   `gru.rs`.

mod dropout;
mod embedding;
mod gru;
pub mod init;
mod layer_norm;
mod linear;
mod module;

pub use dropout::Dropout;
pub use embedding::Embedding;
pub use gru::{Gru, GruCell};
pub use layer_norm::LayerNorm;
pub use linear::Linear;
pub use module::{Module, parameter, prefixed};
