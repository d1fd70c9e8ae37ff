//! A decoder layer without cross-attention, GPT's block: causal self-attention and the
//! feed-forward network, runnable token by token from a KV cache.

use engine::Tensor;
use engine::nn::{LoadError, Module, StateDict, StateReader, prefixed};

use super::residual::{Residual, from_state};
use super::{PositionWiseFfn, TransformerLayerConfig};
use crate::causal_self_attention::{CausalSelfAttention, CausalSelfAttentionConfig};
use crate::kv_cache::KvCache;
use crate::mask::Mask;
use crate::state::load_through;

/// A decoder-only Transformer's layer (GPT's block): causal self-attention, then the
/// feed-forward network, each inside a residual connection with a LayerNorm, after
/// the sum or before the sublayer as `norm_first` says. GPT-2 is pre-norm
/// (`norm_first: true`, GELU); the layer computes exactly what a
/// [`TransformerEncoderLayer`](super::TransformerEncoderLayer) with the same weights
/// computes under [`Mask::causal()`], and it reads the same state dicts.
///
/// Like [`CausalSelfAttention`], it runs three ways that give the same numbers:
/// [`forward`](Self::forward) over a whole sequence (training), and
/// [`prefill`](Self::prefill) then [`step`](Self::step) with a [`KvCache`] for
/// generation (inside [`engine::no_grad`]). Only the attention needs the cache: the
/// LayerNorms and the feed-forward network act on each position alone.
///
/// | argument | shape |
/// |---|---|
/// | `x` | `[B, T, num_hiddens]` (`T = 1` for `step`) |
/// | `mask` | [`Mask::none`], or [`Mask::key_padding`] of `[B, keys so far]` |
/// | output | same as `x` |
///
/// Parameters: `self_attn.*` (a [`CausalSelfAttention`] with biases: `W_q`, `W_k`,
/// `W_v`, `W_o`; PyTorch's `in_proj_weight`, `in_proj_bias`, `out_proj.*` are read too),
/// `linear1.*`, `linear2.*`, `norm1.*`, `norm2.*`.
///
/// ```
/// use attention::transformer::{CausalTransformerLayer, TransformerLayerConfig};
/// use attention::{KvCache, Mask};
/// use engine::{no_grad, Tensor};
/// use engine::nn::Module;
///
/// engine::manual_seed(0);
/// let mut layer = CausalTransformerLayer::new(TransformerLayerConfig {
///     num_hiddens: 8,
///     num_heads: 2,
///     ffn_num_hiddens: 16,
///     norm_first: true,
///     ..Default::default()
/// });
/// layer.eval();
/// let x = Tensor::randn([1, 4, 8]);
/// let full = layer.forward(&x, &Mask::none());
/// let mut cache = KvCache::new(4);
/// let last = no_grad(|| {
///     layer.prefill(&x.narrow(1, 0, 3), &mut cache, &Mask::none());
///     layer.step(&x.narrow(1, 3, 1), &mut cache, &Mask::none())
/// });
/// let gap = (&full.narrow(1, 3, 1) - &last).abs().max().item();
/// assert!(gap < 1e-5);
/// ```
#[derive(Debug)]
pub struct CausalTransformerLayer {
    config: TransformerLayerConfig,
    self_attn: CausalSelfAttention,
    ffn: PositionWiseFfn,
    attention_block: Residual,
    ffn_block: Residual,
}

impl CausalTransformerLayer {
    /// A layer with fresh weights: PyTorch's `Linear` initialisation, LayerNorms at
    /// weight 1 and bias 0.
    #[track_caller]
    pub fn new(config: TransformerLayerConfig) -> Self {
        config.check("CausalTransformerLayer::new");
        let c = config;
        CausalTransformerLayer {
            config,
            self_attn: CausalSelfAttention::new(Self::attention(&c)),
            ffn: PositionWiseFfn::new(c.ffn()),
            attention_block: Residual::new(&c),
            ffn_block: Residual::new(&c),
        }
    }

    /// A layer whose parameters are copies of the tensors in `state`, by the names above;
    /// every problem is reported at once.
    #[track_caller]
    pub fn from_state_dict(
        config: TransformerLayerConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        from_state(
            "CausalTransformerLayer::from_state_dict",
            config,
            state,
            Self::read,
        )
    }

    #[track_caller]
    fn read(reader: &mut StateReader<'_>, c: TransformerLayerConfig) -> Self {
        CausalTransformerLayer {
            config: c,
            self_attn: CausalSelfAttention::read_at(
                reader,
                "self_attn.",
                Self::attention(&c),
            ),
            ffn: PositionWiseFfn::read_at(reader, "", c.ffn()),
            attention_block: Residual::read(reader, "norm1", &c),
            ffn_block: Residual::read(reader, "norm2", &c),
        }
    }

    fn attention(c: &TransformerLayerConfig) -> CausalSelfAttentionConfig {
        CausalSelfAttentionConfig {
            num_hiddens: c.num_hiddens,
            num_heads: c.num_heads,
            dropout: c.dropout,
            // The rest is the default: biases on (PyTorch's layers have them), the
            // safe fill.
            ..Default::default()
        }
    }

    /// The settings the layer was built with.
    pub fn config(&self) -> &TransformerLayerConfig {
        &self.config
    }

    /// The causal self-attention (its weights: `[B, num_heads, T, keys so far]`).
    pub fn self_attention(&self) -> &CausalSelfAttention {
        &self.self_attn
    }

    // ANCHOR: causal_layer
    /// The whole sequence at once: position `t` sees positions `0..=t`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor, mask: &Mask) -> Tensor {
        let x = self
            .attention_block
            .apply(x, |h| self.self_attn.forward(h, mask));
        self.ffn_block.apply(&x, |h| self.ffn.forward(h))
    }

    /// The prompt `x: [B, T, num_hiddens]` at once, filling an empty `cache` with
    /// this layer's keys and values.
    #[track_caller]
    pub fn prefill(&self, x: &Tensor, cache: &mut KvCache, mask: &Mask) -> Tensor {
        let x = self
            .attention_block
            .apply(x, |h| self.self_attn.prefill(h, cache, mask));
        self.ffn_block.apply(&x, |h| self.ffn.forward(h))
    }

    /// One new position `x: [B, 1, num_hiddens]` after those in `cache`.
    #[track_caller]
    pub fn step(&self, x: &Tensor, cache: &mut KvCache, mask: &Mask) -> Tensor {
        let x = self
            .attention_block
            .apply(x, |h| self.self_attn.step(h, cache, mask));
        self.ffn_block.apply(&x, |h| self.ffn.forward(h))
    }
    // ANCHOR_END: causal_layer
}

impl Module for CausalTransformerLayer {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("self_attn", &self.self_attn),
            self.ffn.list_parameters(),
            prefixed("norm1", &self.attention_block.norm),
            prefixed("norm2", &self.ffn_block.norm),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.self_attn.set_training(training);
        self.ffn.set_training(training);
        self.attention_block.set_training(training);
        self.ffn_block.set_training(training);
    }

    /// Copies a state, by this module's names or PyTorch's (see the type's documentation),
    /// into the parameters; nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| Self::read(reader, self.config))
    }
}
