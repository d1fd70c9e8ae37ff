//! Attention mechanisms built on the [`engine`]: masks and masked softmax, additive
//! attention (batched and single-query), scaled dot-product attention, multi-head
//! attention in both forms, and a KV cache for incremental decoding.
//!
//! One file per mechanism:
//! - `mask.rs`: [`Mask`], which keys each query may see;
//! - `masked_softmax.rs`: [`masked_softmax`] and its [`Fill`] policy;
//! - `additive.rs`: [`AdditiveAttention`] (d2l); `bahdanau.rs`: [`BahdanauAttention`]
//!   (one query per example); `multi_head_additive.rs`: [`MultiHeadAdditiveAttention`];
//! - `dot_product.rs`: [`scaled_dot_product_attention`], [`DotProductAttention`];
//! - `multi_head.rs`: [`MultiHeadAttention`] (d2l);
//! - `kv_cache.rs`: [`KvCache`]; `causal_self_attention.rs`: [`CausalSelfAttention`].
//!
//! Every module keeps its last weights for plotting ([`AttentionWeights`]).

mod additive;
mod bahdanau;
mod causal_self_attention;
mod check;
mod dot_product;
mod kv_cache;
mod mask;
mod masked_softmax;
mod multi_head;
mod multi_head_additive;
mod weights;

pub use additive::AdditiveAttention;
pub use bahdanau::BahdanauAttention;
pub use causal_self_attention::CausalSelfAttention;
pub use dot_product::{DotProductAttention, scaled_dot_product_attention};
pub use kv_cache::KvCache;
pub use mask::Mask;
pub use masked_softmax::{D2L_FILL, Fill, masked_softmax};
pub use multi_head::MultiHeadAttention;
pub use multi_head_additive::MultiHeadAdditiveAttention;
pub use weights::AttentionWeights;
