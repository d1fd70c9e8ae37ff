//! Causal multi-head self-attention with a KV cache: full, prefill and one-token steps.

use engine::Tensor;
use engine::nn::{
    Dropout, DropoutConfig, Linear, LoadError, Module, StateDict, StateReader,
    prefixed,
};

use crate::additive::projection;
use crate::check;
use crate::dot_product::attention_weights;
use crate::kv_cache::KvCache;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// The settings of a [`CausalSelfAttention`] layer.
///
/// ```
/// use attention::CausalSelfAttentionConfig;
/// let config = CausalSelfAttentionConfig { num_hiddens: 8, num_heads: 2, ..Default::default() };
/// assert_eq!((config.bias, config.dropout), (true, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CausalSelfAttentionConfig {
    /// The model width: the size of each token's vector, of the projections and of the
    /// output (no default: must be set). d2l's name, used by every config of this crate;
    /// PyTorch's `nn.MultiheadAttention` calls it `embed_dim`, the Transformer paper and
    /// GPT code `d_model`.
    pub num_hiddens: usize,
    /// The number of heads, which must divide `num_hiddens` (no default; 1 for
    /// single-head).
    pub num_heads: usize,
    /// Whether the four projections have biases (default `true`: d2l has no causal layer
    /// to follow, and GPT-2's attention and PyTorch's `nn.MultiheadAttention` have them).
    /// [`MultiHeadAttentionConfig`](crate::MultiHeadAttentionConfig) defaults to `false`,
    /// because there d2l is the definition.
    pub bias: bool,
    /// Dropout on the attention weights, in training mode (default 0).
    pub dropout: f32,
    /// What masked scores become (default [`Fill::Safe`]).
    pub fill: Fill,
}

impl Default for CausalSelfAttentionConfig {
    fn default() -> Self {
        CausalSelfAttentionConfig {
            num_hiddens: 0,
            num_heads: 0,
            bias: true,
            dropout: 0.0,
            fill: Fill::Safe,
        }
    }
}

/// Multi-head self-attention in which token `t` sees only tokens `0..=t`, as in a decoder.
/// Heads are kept as their own dimension (`[B, H, T, d]`), which is the layout a KV cache
/// stores.
///
/// Three ways to run it, which give the same numbers:
/// - [`forward`](Self::forward): the whole sequence at once with a causal mask (the way to
///   train: gradients flow);
/// - [`prefill`](Self::prefill) then [`step`](Self::step): the prompt at once, filling a
///   [`KvCache`], then one new token at a time, attending to the cache. This is inference:
///   the cache holds plain values, so these two refuse to run while gradients are being
///   recorded (wrap decoding in [`engine::no_grad`]).
///
/// Every call also takes a [`Mask`] combined with causal order, for padding:
/// [`Mask::key_padding`] of `[B, keys so far]`, or [`Mask::none`].
///
/// | argument | shape |
/// |---|---|
/// | `x` for `forward` and `prefill` | `[B, T, num_hiddens]` |
/// | `x` for `step` | `[B, 1, num_hiddens]` |
/// | `mask` | see [`Mask`]: scores are `[B, T, keys so far]` |
/// | output | same as `x` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, H, T, keys so far]` |
///
/// Parameters: `W_q`, `W_k`, `W_v`, `W_o`, each `Linear(num_hiddens, num_hiddens)` (`weight`, and
/// `bias` when `bias`). With the same weights,
/// [`MultiHeadAttention`](crate::MultiHeadAttention) (`bias: true`) gives the same numbers
/// for `forward(&x, &x, &x, &(Mask::causal() & mask))`.
///
/// A new layer is in training mode (dropout on, as in PyTorch); call
/// [`eval`](Module::eval) before decoding.
///
/// ```
/// use attention::{CausalSelfAttention, CausalSelfAttentionConfig, KvCache, Mask};
/// use engine::{no_grad, Tensor};
///
/// engine::manual_seed(0);
/// let layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
///     num_hiddens: 8,
///     num_heads: 2,
///     ..Default::default()
/// });
/// let x = Tensor::randn([1, 5, 8]);
/// let full = layer.forward(&x, &Mask::none());
/// let mut cache = KvCache::new(4);
/// let stepped = no_grad(|| {
///     let mut rows = vec![layer.prefill(&x.narrow(1, 0, 3), &mut cache, &Mask::none())];
///     for t in 3..5 {
///         rows.push(layer.step(&x.narrow(1, t, 1), &mut cache, &Mask::none()));
///     }
///     Tensor::concat(&rows, 1)
/// });
/// let diff = (&full - &stepped).to_vec().iter().fold(0f32, |m, v| m.max(v.abs()));
/// assert!(diff < 1e-5);
/// ```
#[derive(Debug)]
pub struct CausalSelfAttention {
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    w_o: Linear,
    num_heads: usize,
    dropout: Dropout,
    fill: Fill,
    weights: WeightsSlot,
}

impl CausalSelfAttention {
    /// A layer initialised like PyTorch's `Linear` layers.
    #[track_caller]
    pub fn new(config: CausalSelfAttentionConfig) -> Self {
        let d = Self::check_config("CausalSelfAttention::new", &config);
        let layer = || Linear::new(projection(d, d, config.bias));
        Self::from_layers([layer(), layer(), layer(), layer()], config)
    }

    /// A layer whose parameters are copies of the tensors in `state`, by the names listed
    /// above; every problem is reported at once. Loading copies, as in PyTorch: the module
    /// owns its parameters, and the state's tensors are never shared or changed.
    #[track_caller]
    pub fn from_state_dict(
        config: CausalSelfAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        let d = Self::check_config("CausalSelfAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let layers = ["W_q", "W_k", "W_v", "W_o"]
            .map(|name| reader.linear(name, projection(d, d, config.bias)));
        reader.finish()?;
        Ok(Self::from_layers(layers, config))
    }

    /// A layer read from the names after `prefix` (`"self_attn."` inside a Transformer
    /// layer), in d2l's layout (`W_q`, …) or `nn.MultiheadAttention`'s (`in_proj_weight`,
    /// …), as [`MultiHeadAttention`](crate::MultiHeadAttention) reads them; every problem
    /// is recorded in `reader`.
    #[track_caller]
    pub(crate) fn read_at(
        reader: &mut StateReader<'_>,
        prefix: &str,
        config: CausalSelfAttentionConfig,
    ) -> Self {
        let d = Self::check_config("CausalSelfAttention::from_state_dict", &config);
        let layout = crate::MultiHeadAttentionConfig {
            num_hiddens: d,
            num_heads: config.num_heads,
            bias: config.bias,
            ..Default::default()
        };
        let layers = crate::MultiHeadAttention::read(reader, prefix, &layout);
        Self::from_layers(layers, config)
    }

    #[track_caller]
    fn check_config(module: &str, c: &CausalSelfAttentionConfig) -> usize {
        check::heads_divide(module, "num_hiddens", c.num_hiddens, c.num_heads);
        check::probability(module, "dropout", c.dropout);
        check::fill(module, c.fill);
        c.num_hiddens
    }

    fn from_layers(layers: [Linear; 4], config: CausalSelfAttentionConfig) -> Self {
        let [w_q, w_k, w_v, w_o] = layers;
        CausalSelfAttention {
            w_q,
            w_k,
            w_v,
            w_o,
            num_heads: config.num_heads,
            dropout: Dropout::new(DropoutConfig { p: config.dropout }),
            fill: config.fill,
            weights: WeightsSlot::default(),
        }
    }

    /// The model width, `num_hiddens`.
    pub fn num_hiddens(&self) -> usize {
        self.w_q.in_features()
    }

    /// The number of heads.
    pub fn num_heads(&self) -> usize {
        self.num_heads
    }

    /// The whole sequence at once: token `t` attends to tokens `0..=t` that `mask` allows.
    #[track_caller]
    pub fn forward(&self, x: &Tensor, mask: &Mask) -> Tensor {
        self.check_input("forward", x);
        let (q, k, v) = (
            self.heads(&self.w_q, x),
            self.heads(&self.w_k, x),
            self.heads(&self.w_v, x),
        );
        let kv = KeysValues::Tensors(&k, &v);
        self.attend("CausalSelfAttention::forward", &q, kv, mask)
    }

    /// Processes the prompt `x: [B, T, num_hiddens]` into an empty cache; returns its outputs.
    #[track_caller]
    pub fn prefill(&self, x: &Tensor, cache: &mut KvCache, mask: &Mask) -> Tensor {
        assert!(
            cache.is_empty(),
            "CausalSelfAttention::prefill: the cache already holds {} tokens; hint: reset() it before a new sequence, or use step() to continue",
            cache.len()
        );
        self.extend("prefill", x, cache, mask)
    }

    /// Processes one new token `x: [B, 1, num_hiddens]` after those in the cache.
    #[track_caller]
    pub fn step(&self, x: &Tensor, cache: &mut KvCache, mask: &Mask) -> Tensor {
        assert!(
            x.rank() == 3 && x.shape()[1] == 1,
            "CausalSelfAttention::step: x must be one token, [B, 1, num_hiddens], found {:?}",
            x.shape()
        );
        self.extend("step", x, cache, mask)
    }

    #[track_caller]
    fn extend(
        &self,
        call: &str,
        x: &Tensor,
        cache: &mut KvCache,
        mask: &Mask,
    ) -> Tensor {
        self.check_input(call, x);
        let recording = engine::grad_mode::is_enabled()
            && (x.requires_grad()
                || self.parameters().iter().any(Tensor::requires_grad));
        assert!(
            !recording,
            "CausalSelfAttention::{call}: gradients are being recorded, but a KvCache stores plain values, so no gradient would reach W_k, W_v or the earlier tokens through it\n  hint: decoding is inference: run it inside engine::no_grad(|| ...); to train, use forward(), which computes the same numbers with gradients"
        );
        let module = format!("CausalSelfAttention::{call}");
        let (q, k, v) = (
            self.heads(&self.w_q, x),
            self.heads(&self.w_k, x),
            self.heads(&self.w_v, x),
        );
        cache.append(&k, &v);
        if cache.len() == k.size(2) {
            // The cache held nothing before: what it holds now is `k` and `v`.
            self.attend(&module, &q, KeysValues::Tensors(&k, &v), mask)
        } else {
            self.attend(&module, &q, KeysValues::Cache(cache), mask)
        }
    }

    /// The queries are the last tokens of the keys: causal order aligned to the last key,
    /// combined with the caller's mask.
    #[track_caller]
    fn attend(
        &self,
        module: &str,
        q: &Tensor,
        kv: KeysValues,
        mask: &Mask,
    ) -> Tensor {
        let (b, t) = (q.size(0), q.size(2));
        let keys = match kv {
            KeysValues::Tensors(k, _) => k.size(2),
            KeysValues::Cache(cache) => cache.len(),
        };
        // Check the caller's mask against the scores as the caller sees them, [B, T, K].
        mask.keep_for(module, &[b, t, keys]);
        // One query, the last token, may see every key: there the causal part would hide
        // nothing, and leaving it out spares the masked softmax its passes over the scores
        // (a decoding step's softmax then costs what an unmasked one does).
        let mask = if t == 1 {
            mask.with_head_axis()
        } else {
            Mask::causal() & mask.with_head_axis()
        };
        let weights = match kv {
            KeysValues::Tensors(k, v) => {
                attention_weights(module, q, k, v, &mask, self.fill, None)
            }
            KeysValues::Cache(cache) => {
                let scale = 1.0 / (q.size(-1) as f32).sqrt();
                masked_softmax_in(
                    module,
                    &(cache.scores(q) * scale),
                    &mask,
                    self.fill,
                )
            }
        };
        self.weights.store(&weights);
        let weights = self.dropout.forward(&weights);
        let out = match kv {
            KeysValues::Tensors(_, v) => weights.matmul(v),
            KeysValues::Cache(cache) => cache.weighted_values(&weights),
        };
        self.merge_heads(&out)
    }

    /// `out: [B, H, T, d]` → `[B, T, H·d]`, then the output projection `W_o`.
    fn merge_heads(&self, out: &Tensor) -> Tensor {
        let (b, t) = (out.size(0), out.size(2));
        let merged = out.transpose(1, 2);
        self.w_o
            .forward(&merged.reshape([b, t, self.num_hiddens()]))
    }

    /// Projects `x: [B, T, num_hiddens]` with `w` and splits the heads: `[B, H, T, num_hiddens / H]`.
    fn heads(&self, w: &Linear, x: &Tensor) -> Tensor {
        let (b, t, h) = (x.shape()[0], x.shape()[1], self.num_heads);
        w.forward(x)
            .reshape([b, t, h, self.num_hiddens() / h])
            .transpose(1, 2)
    }

    #[track_caller]
    fn check_input(&self, call: &str, x: &Tensor) {
        assert!(
            x.rank() == 3 && x.shape()[2] == self.num_hiddens(),
            "CausalSelfAttention::{call}: x must be [B, T, num_hiddens] with num_hiddens = {}, found {:?}",
            self.num_hiddens(),
            x.shape()
        );
    }
}

/// What the queries attend to: keys and values as tensors `[B, H, K, d]` (the whole
/// sequence, or a prompt that fills an empty cache), or the keys and values a cache holds,
/// read where they are stored. Copying them out of the cache (`keys()`, `values()`) would
/// cost a decoding step as much as the attention itself, for every token.
#[derive(Clone, Copy)]
enum KeysValues<'a> {
    Tensors(&'a Tensor, &'a Tensor),
    Cache(&'a KvCache),
}

impl Module for CausalSelfAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            prefixed("W_v", &self.w_v),
            prefixed("W_o", &self.w_o),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}

impl AttentionWeights for CausalSelfAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
