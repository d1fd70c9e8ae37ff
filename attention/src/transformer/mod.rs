//! The Transformer's layers, built from this crate's attention: the position-wise
//! feed-forward network, residual connections with LayerNorm after the sublayer
//! (post-norm, the original paper) or before it (pre-norm, GPT-2), and dropout.
//!
//! - [`PositionWiseFfn`]: `linear2(dropout(activation(linear1(x))))`, applied to every
//!   position alone.
//! - [`TransformerEncoderLayer`]: self-attention, then the feed-forward network;
//!   `nn.TransformerEncoderLayer`.
//! - [`TransformerDecoderLayer`]: masked self-attention, cross-attention to the
//!   encoder's output, the feed-forward network; `nn.TransformerDecoderLayer`.
//! - [`CausalTransformerLayer`]: a decoder layer without cross-attention (GPT's block),
//!   whose self-attention can run token by token from a [`KvCache`](crate::KvCache).
//!
//! All three take one [`TransformerLayerConfig`], named as PyTorch's two layers name
//! their arguments where this crate has no name of its own, and read PyTorch's state
//! dicts by PyTorch's names (`self_attn.in_proj_weight`, `linear1.weight`,
//! `norm1.weight`, …).

mod causal_layer;
mod config;
mod decoder_layer;
mod encoder_layer;
mod feed_forward;
mod residual;

pub use causal_layer::CausalTransformerLayer;
pub use config::{FeedForwardActivation, TransformerLayerConfig};
pub use decoder_layer::TransformerDecoderLayer;
pub use encoder_layer::TransformerEncoderLayer;
pub use feed_forward::{PositionWiseFfn, PositionWiseFfnConfig};
