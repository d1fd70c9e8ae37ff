//! Attention mechanisms built on the [`engine`]: masks and masked softmax, additive
//! attention (batched and single-query), scaled dot-product attention, multi-head
//! attention in both forms, and a KV cache for incremental decoding.
//!
//! ```
//! use attention::prelude::*;
//!
//! manual_seed(0);
//! let mut mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
//!     num_hiddens: 16,
//!     num_heads: 4,
//!     ..Default::default()
//! });
//! mha.eval(); // modules start in training mode, as in PyTorch
//! let x = Tensor::randn([2, 5, 16]); // [batch, tokens, features]
//! let lens = Mask::valid_lens(&Tensor::from_vec(vec![5.0, 3.0], [2])); // 2nd: 3 real tokens
//! let y = mha.forward(&x, &x, &x, &(Mask::causal() & lens));
//! assert_eq!(y.shape(), &[2, 5, 16]);
//! assert_eq!(mha.last_attention_weights().unwrap().shape(), &[2, 4, 5, 5]);
//! ```
//!
//! # A learning path
//! Read in this order; each step uses only what came before.
//! 1. [`Mask`]: which keys a query may see (valid lengths, padding, causal order, and
//!    their combinations), then [`masked_softmax`] and its [`Fill`] policies: what a
//!    masked score becomes, and why a fully masked row needs care.
//! 2. [`AdditiveAttention`]: scores from a small network, `w · tanh(W_q q + W_k k)`, the
//!    form that accepts queries and keys of different sizes; then [`BahdanauAttention`],
//!    the one-query-per-step form a seq2seq decoder uses.
//! 3. [`scaled_dot_product_attention`] and [`DotProductAttention`]: scores from a dot
//!    product, scaled by `1/√d` so they do not saturate the softmax; PyTorch's named
//!    options (`is_causal`, `scale`, `dropout_p`) through
//!    [`scaled_dot_product_attention_with`] and [`SdpaOptions`].
//! 4. [`MultiHeadAttention`]: several dot-product heads on projections of one input, and
//!    [`MultiHeadAdditiveAttention`], the same idea for the additive form.
//! 5. [`CausalSelfAttention`] and [`KvCache`]: a decoder's self-attention, run over a
//!    whole sequence for training or token by token from a cache for generation.
//! 6. Long sequences: [`blocked_attention`] and [`AttentionPath`], exact attention
//!    computed in blocks of keys in memory linear in the length (the path the dot-product
//!    modules take from [`BLOCKED_FROM_KEYS`] keys on); then [`long_sequences`], four
//!    approximations that attend to part of the keys (a local window, a sparse pattern,
//!    low-rank projections, hashing).
//! 7. [`transformer`]: the Transformer's layers from these pieces: the position-wise
//!    feed-forward network, residual connections with LayerNorm after or before each
//!    sublayer, the encoder and decoder layers, and GPT's causal block with its cache.
//!
//! # Conventions
//! - Every module is built the same way: `Module::new(ModuleConfig { … })`, settings named
//!   and defaulted (sizes have no default and must be set). From given weights:
//!   `Module::from_state_dict(config, &state)`, with PyTorch's parameter names; to copy
//!   weights into a module that exists, [`Module::load_state_dict`](engine::nn::Module).
//! - Where the PyTorch code a learner compares with names the parameters otherwise, its
//!   state dict loads as it is too: [`BahdanauAttention`] (and each head of
//!   [`MultiHeadAdditiveAttention`]) takes the article's `query_proj`, `key_proj`,
//!   `value_proj`, `v`; [`MultiHeadAttention`] takes `nn.MultiheadAttention`'s
//!   `in_proj_weight`, `in_proj_bias`, `out_proj.*`. The layout is told by the names;
//!   `state_dict()` gives the module's own.
//! - Loading a state copies it, the PyTorch rule: a module owns its parameters (fresh
//!   leaves that require gradients, whatever the state held), and the state's tensors are
//!   never shared or changed, by `from_state_dict` or by `load_state_dict`.
//! - The model size is called `num_hiddens` in every config, d2l's name: the modules follow
//!   d2l's definitions number for number, and a learner reads d2l's code beside them.
//!   PyTorch's `nn.MultiheadAttention` calls the same size `embed_dim`, and the Transformer
//!   paper and GPT code `d_model`; one name here, for the same thing everywhere.
//! - `bias` defaults to d2l's `false` where d2l defines the module
//!   ([`MultiHeadAttentionConfig`]) and to `true` where it does not
//!   ([`CausalSelfAttentionConfig`], as in GPT-2 and PyTorch); each config says which.
//! - Every module starts in training mode (dropout on); `eval()` switches it off.
//! - Every module keeps the weights of its last forward pass for plotting
//!   ([`AttentionWeights::last_attention_weights`]).
//! - `use attention::prelude::*` brings the modules, their configs, [`Mask`], [`Fill`], the
//!   traits whose methods they use ([`engine::nn::Module`], [`AttentionWeights`]) and
//!   [`engine::Tensor`].
//!
//! One file per mechanism: `mask.rs`, `masked_softmax.rs`, `additive.rs`, `bahdanau.rs`,
//! `multi_head_additive.rs`, `dot_product.rs`, `multi_head.rs`, `kv_cache.rs`,
//! `causal_self_attention.rs`, `blocked.rs`, and the folders `long_sequences/` and
//! `transformer/`; `state.rs` holds what the modules that also read PyTorch's
//! names for their parameters share.

mod additive;
mod bahdanau;
mod blocked;
mod causal_self_attention;
mod check;
mod dot_product;
mod hybrid;
mod kv_cache;
pub mod long_sequences;
mod mask;
mod masked_softmax;
mod multi_head;
mod multi_head_additive;
pub mod prelude;
mod state;
pub mod transformer;
mod weights;

pub use additive::{AdditiveAttention, AdditiveAttentionConfig, AdditiveScoring};
pub use bahdanau::{BahdanauAttention, BahdanauAttentionConfig};
pub use blocked::{AttentionPath, BLOCKED_FROM_KEYS, blocked_attention};
pub use causal_self_attention::{CausalSelfAttention, CausalSelfAttentionConfig};
pub use dot_product::{
    DotProductAttention, DotProductAttentionConfig, SdpaOptions,
    scaled_dot_product_attention, scaled_dot_product_attention_with,
};
/// The activation of the additive modules' energies (their configs' `activation`).
pub use engine::Activation;
pub use hybrid::{Gate, HybridGatedAttention, HybridGatedAttentionConfig};
pub use kv_cache::KvCache;
pub use long_sequences::{
    LocalWindow, LowRankAttention, LowRankAttentionConfig, LshOptions, SparsePattern,
    local_window_attention, local_window_attention_with, low_rank_attention,
    lsh_attention, lsh_buckets, sparse_attention,
};
pub use mask::Mask;
pub use masked_softmax::{D2L_FILL, Fill, masked_softmax};
pub use multi_head::{MultiHeadAttention, MultiHeadAttentionConfig};
pub use multi_head_additive::{
    MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig,
};
pub use transformer::{
    CausalTransformerLayer, FeedForwardActivation, PositionWiseFfn,
    PositionWiseFfnConfig, TransformerDecoderLayer, TransformerEncoderLayer,
    TransformerLayerConfig,
};
pub use weights::AttentionWeights;
