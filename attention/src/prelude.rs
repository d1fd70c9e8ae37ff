//! Everything a lesson or a program usually needs, in one import:
//! `use attention::prelude::*;`.
//!
//! It brings the attention modules and their configs, [`Mask`] and [`Fill`], the KV cache,
//! the traits whose methods are called without naming them ([`Module`] for `eval()`,
//! `parameters()`, `load_state_dict()`; [`AttentionWeights`] for
//! `last_attention_weights()`), and the engine's prelude ([`Tensor`], `no_grad`,
//! `manual_seed`, the layers and optimizers).
//!
//! [`Module`]: engine::nn::Module
//! [`Tensor`]: engine::Tensor

pub use crate::long_sequences::{
    LocalWindow, LowRankAttention, LowRankAttentionConfig, LshOptions, SparsePattern,
    local_window_attention, local_window_attention_with, low_rank_attention,
    lsh_attention, lsh_buckets, sparse_attention,
};
pub use crate::transformer::{
    CausalTransformerLayer, FeedForwardActivation, PositionWiseFfn,
    PositionWiseFfnConfig, TransformerDecoderLayer, TransformerEncoderLayer,
    TransformerLayerConfig,
};
pub use crate::{
    AdditiveAttention, AdditiveAttentionConfig, AdditiveScoring, AttentionPath,
    AttentionWeights, BahdanauAttention, BahdanauAttentionConfig,
    CausalSelfAttention, CausalSelfAttentionConfig, DotProductAttention,
    DotProductAttentionConfig, Fill, Gate, HybridGatedAttention,
    HybridGatedAttentionConfig, KvCache, Mask, MultiHeadAdditiveAttention,
    MultiHeadAdditiveAttentionConfig, MultiHeadAttention, MultiHeadAttentionConfig,
    SdpaOptions, blocked_attention, masked_softmax, scaled_dot_product_attention,
    scaled_dot_product_attention_with,
};
pub use engine::prelude::*;
