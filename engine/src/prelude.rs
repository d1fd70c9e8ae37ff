//! The names most programs need, in one import: `use engine::prelude::*;`.
//!
//! It brings the [`Tensor`] type, the traits whose methods you call without naming them
//! ([`Module`] for `eval()`, `parameters()`, `load_state_dict()`; [`Optimizer`] for
//! `step()`), the layers with their configs, [`StateDict`] and the [`LoadError`] a load
//! returns, and the small enums that ops take as arguments ([`Reduction`],
//! [`GeluApprox`], [`Activation`]).
//!
//! ```
//! use engine::prelude::*;
//!
//! manual_seed(0);
//! let mut layer = Linear::new(LinearConfig { in_features: 3, out_features: 2, ..Default::default() });
//! layer.eval(); // a Module method, in scope through the prelude
//! let y = no_grad(|| layer.forward(&Tensor::ones([1, 3])));
//! assert_eq!(y.shape(), &[1, 2]);
//! ```

pub use crate::activation::Activation;
pub use crate::autocast::autocast;
pub use crate::grad_mode::no_grad;
pub use crate::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Gru, GruCell, GruConfig,
    LayerNorm, LayerNormConfig, Linear, LinearConfig, LoadError, Module, StateDict,
};
pub use crate::op::GeluApprox;
pub use crate::ops::{BlockedAttentionOptions, Reduction};
pub use crate::optim::{Adam, AdamConfig, AdamW, Optimizer, Sgd, SgdConfig};
pub use crate::precision::Precision;
pub use crate::random::manual_seed;
pub use crate::tensor::Tensor;
