//! Causal multi-head self-attention with a KV cache: full, prefill and one-token steps.

use engine::Tensor;
use engine::nn::{Linear, Module, prefixed};

use crate::check;
use crate::dot_product::scaled_dot_product_attention;
use crate::kv_cache::KvCache;
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::weights::{AttentionWeights, WeightsSlot};

/// Multi-head self-attention in which token `t` sees only tokens `0..=t`, as in a decoder.
/// Heads are kept as their own dimension (`[B, H, T, d]`), which is the layout a KV cache
/// stores.
///
/// Three ways to run it, which give the same numbers:
/// - [`forward`](Self::forward): the whole sequence at once with a causal mask;
/// - [`prefill`](Self::prefill) then [`step`](Self::step): the prompt at once, filling a
///   [`KvCache`], then one new token at a time, attending to the cache.
///
/// | argument | shape |
/// |---|---|
/// | `x` for `forward` and `prefill` | `[B, T, d_model]` |
/// | `x` for `step` | `[B, 1, d_model]` |
/// | output | same as `x` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, H, T, keys so far]` |
///
/// ```
/// use attention::{CausalSelfAttention, KvCache};
/// use engine::{no_grad, Tensor};
///
/// engine::manual_seed(0);
/// let layer = CausalSelfAttention::new(8, 2, true);
/// let x = Tensor::randn(&[1, 5, 8]);
/// let full = layer.forward(&x);
/// let mut cache = KvCache::new(4);
/// let stepped = no_grad(|| {
///     let mut rows = vec![layer.prefill(&x.narrow(1, 0, 3), &mut cache)];
///     for t in 3..5 {
///         rows.push(layer.step(&x.narrow(1, t, 1), &mut cache));
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
    fill: Fill,
    weights: WeightsSlot,
}

impl CausalSelfAttention {
    /// A layer of width `d_model` split into `num_heads` heads (1 for single-head).
    #[track_caller]
    pub fn new(d_model: usize, num_heads: usize, bias: bool) -> Self {
        check::heads_divide("CausalSelfAttention::new", "d_model", d_model, num_heads);
        Self::from_linears(
            [
                Linear::new(d_model, d_model, bias),
                Linear::new(d_model, d_model, bias),
                Linear::new(d_model, d_model, bias),
                Linear::new(d_model, d_model, bias),
            ],
            num_heads,
        )
    }

    /// A layer from given projections `[W_q, W_k, W_v, W_o]`, each `[d_model, d_model]`.
    #[track_caller]
    pub fn from_linears(linears: [Linear; 4], num_heads: usize) -> Self {
        let [w_q, w_k, w_v, w_o] = linears;
        let d = w_q.in_features();
        for (name, l) in [("W_q", &w_q), ("W_k", &w_k), ("W_v", &w_v), ("W_o", &w_o)] {
            assert!(
                l.in_features() == d && l.out_features() == d,
                "CausalSelfAttention: {name} has weight {:?} but every projection must be [d_model, d_model] = [{d}, {d}]",
                l.weight().shape()
            );
        }
        check::heads_divide("CausalSelfAttention", "d_model", d, num_heads);
        CausalSelfAttention {
            w_q,
            w_k,
            w_v,
            w_o,
            num_heads,
            fill: Fill::Safe,
            weights: WeightsSlot::default(),
        }
    }

    /// The model width.
    pub fn d_model(&self) -> usize {
        self.w_q.in_features()
    }

    /// The whole sequence at once: token `t` attends to tokens `0..=t`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        self.check_input("forward", x);
        let (q, k, v) = (
            self.heads(&self.w_q, x),
            self.heads(&self.w_k, x),
            self.heads(&self.w_v, x),
        );
        self.attend(&q, &k, &v, 0)
    }

    /// Processes the prompt `x: [B, T, d_model]` into an empty cache; returns its outputs.
    #[track_caller]
    pub fn prefill(&self, x: &Tensor, cache: &mut KvCache) -> Tensor {
        assert!(
            cache.is_empty(),
            "CausalSelfAttention::prefill: the cache already holds {} tokens; hint: reset() it before a new sequence, or use step() to continue",
            cache.len()
        );
        self.extend("prefill", x, cache)
    }

    /// Processes one new token `x: [B, 1, d_model]` after those in the cache.
    #[track_caller]
    pub fn step(&self, x: &Tensor, cache: &mut KvCache) -> Tensor {
        assert!(
            x.rank() == 3 && x.shape()[1] == 1,
            "CausalSelfAttention::step: x must be one token, [B, 1, d_model], found {:?}",
            x.shape()
        );
        self.extend("step", x, cache)
    }

    #[track_caller]
    fn extend(&self, call: &str, x: &Tensor, cache: &mut KvCache) -> Tensor {
        self.check_input(call, x);
        let offset = cache.len();
        cache.append(&self.heads(&self.w_k, x), &self.heads(&self.w_v, x));
        self.attend(
            &self.heads(&self.w_q, x),
            &cache.keys(),
            &cache.values(),
            offset,
        )
    }

    /// Queries at positions `offset..`, attending causally to all keys given.
    fn attend(&self, q: &Tensor, k: &Tensor, v: &Tensor, offset: usize) -> Tensor {
        let (out, weights) =
            scaled_dot_product_attention(q, k, v, &Mask::Causal { offset }, self.fill, None);
        self.weights.store(&weights);
        // [B, H, T, d] → [B, T, H·d]
        let merged = out.transpose(1, 2);
        let (b, t) = (merged.shape()[0], merged.shape()[1]);
        self.w_o.forward(&merged.reshape([b, t, self.d_model()]))
    }

    /// Projects `x: [B, T, d_model]` with `w` and splits the heads: `[B, H, T, d_model / H]`.
    fn heads(&self, w: &Linear, x: &Tensor) -> Tensor {
        let (b, t, h) = (x.shape()[0], x.shape()[1], self.num_heads);
        w.forward(x)
            .reshape([b, t, h, self.d_model() / h])
            .transpose(1, 2)
    }

    #[track_caller]
    fn check_input(&self, call: &str, x: &Tensor) {
        assert!(
            x.rank() == 3 && x.shape()[2] == self.d_model(),
            "CausalSelfAttention::{call}: x must be [B, T, d_model] with d_model = {}, found {:?}",
            self.d_model(),
            x.shape()
        );
    }
}

impl Module for CausalSelfAttention {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            prefixed("W_v", &self.w_v),
            prefixed("W_o", &self.w_o),
        ]
        .concat()
    }
}

impl AttentionWeights for CausalSelfAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
