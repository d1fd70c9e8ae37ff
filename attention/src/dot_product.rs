//! Scaled dot-product attention: scores `Q Kᵀ / √d`.

use engine::Tensor;
use engine::nn::{Dropout, DropoutConfig, Module};
use engine::shape::broadcast_shapes;

use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// Attention weights and output for queries, keys and values, without dropout:
/// `weights = masked_softmax(Q Kᵀ / √d)`, `output = weights V`, with `d` the query size and
/// the safe fill ([`Fill::Safe`]). Returns `(output, weights)`. For another fill or scale,
/// or dropout, use the [`DotProductAttention`] module.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[..., Q, d]` |
/// | `keys` | `[..., K, d]` |
/// | `values` | `[..., K, dv]` |
/// | `mask` | see [`Mask`]: scores are `[..., Q, K]` |
/// | output | `[..., Q, dv]` |
/// | weights | `[..., Q, K]` |
///
/// Leading dimensions broadcast (they are batch, or batch and heads).
///
/// ```
/// use attention::{scaled_dot_product_attention, Mask};
/// use engine::Tensor;
///
/// let q = Tensor::ones([2, 1, 4]);
/// let k = Tensor::ones([2, 3, 4]);
/// let v = Tensor::arange(6).reshape([2, 3, 1]);
/// let (out, w) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
/// assert_eq!(w.to_vec(), vec![1.0 / 3.0; 6]); // equal scores: equal weights
/// assert_eq!(out.shape(), &[2, 1, 1]);
/// ```
#[track_caller]
pub fn scaled_dot_product_attention(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    mask: &Mask,
) -> (Tensor, Tensor) {
    let weights = attention_weights(
        "scaled_dot_product_attention",
        queries,
        keys,
        values,
        mask,
        Fill::Safe,
        None,
    );
    (weights.matmul(values), weights)
}

/// Checks the arguments and computes `masked_softmax(Q Kᵀ · scale)`; `scale` defaults to
/// `1/√d`.
#[track_caller]
pub(crate) fn attention_weights(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    mask: &Mask,
    fill: Fill,
    scale: Option<f32>,
) -> Tensor {
    assert!(
        queries.rank() >= 2 && keys.rank() >= 2 && values.rank() >= 2,
        "{module}: queries, keys and values need shape [..., entries, features], found {:?}, {:?} and {:?}",
        queries.shape(),
        keys.shape(),
        values.shape()
    );
    let d = queries.size(-1);
    assert!(
        keys.size(-1) == d,
        "{module}: queries {:?} and keys {:?} must have the same last dimension (the size d that QKᵀ sums over), found {d} and {}; hint: additive attention accepts different sizes",
        queries.shape(),
        keys.shape(),
        keys.size(-1)
    );
    check::keys_match_values(module, keys, values);
    let batch = |t: &Tensor| t.shape()[..t.rank() - 2].to_vec();
    let (qb, kb, vb) = (batch(queries), batch(keys), batch(values));
    assert!(
        broadcast_shapes(&qb, &kb)
            .and_then(|qk| broadcast_shapes(&qk, &vb))
            .is_some(),
        "{module}: the leading (batch) dimensions of queries {:?}, keys {:?} and values {:?} do not broadcast ({qb:?}, {kb:?}, {vb:?})",
        queries.shape(),
        keys.shape(),
        values.shape()
    );
    let scale = scale.unwrap_or(1.0 / (d as f32).sqrt());
    let scores = queries.matmul_t(keys) * scale; // Q Kᵀ, reading K in place
    masked_softmax_in(module, &scores, mask, fill)
}

/// The settings of a [`DotProductAttention`] module.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DotProductAttentionConfig {
    /// Dropout on the attention weights, in training mode (default 0).
    pub dropout: f32,
    /// What masked scores become (default [`Fill::Safe`]; [`Fill::D2l`] reproduces d2l).
    pub fill: Fill,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
}

/// Scaled dot-product attention as a module with dropout on the weights, d2l's
/// `DotProductAttention`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, d]` (or any `[..., Q, d]`) |
/// | `keys` | `[B, K, d]` |
/// | `values` | `[B, K, dv]` |
/// | `mask` | see [`Mask`]: scores are `[B, Q, K]` |
/// | output | `[B, Q, dv]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, Q, K]` (before dropout) |
///
/// A new module is in training mode (dropout on, as in PyTorch); call
/// [`eval`](Module::eval) before measuring.
///
/// ```
/// use attention::{AttentionWeights, DotProductAttention, DotProductAttentionConfig, Mask};
/// use engine::Tensor;
///
/// let attention = DotProductAttention::new(DotProductAttentionConfig::default());
/// let q = Tensor::randn([2, 1, 4]);
/// let k = Tensor::randn([2, 10, 4]);
/// let v = Tensor::randn([2, 10, 6]);
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 6.0], [2]));
/// assert_eq!(attention.forward(&q, &k, &v, &lens).shape(), &[2, 1, 6]);
/// let w = attention.last_attention_weights().unwrap();
/// assert_eq!(w.shape(), &[2, 1, 10]);
/// assert_eq!(w.to_vec()[2], 0.0); // key 2 is past the first example's length
/// ```
#[derive(Debug)]
pub struct DotProductAttention {
    dropout: Dropout,
    fill: Fill,
    scale: Option<f32>,
    weights: WeightsSlot,
}

impl DotProductAttention {
    /// A module with the given settings (it has no parameters).
    #[track_caller]
    pub fn new(config: DotProductAttentionConfig) -> Self {
        let module = "DotProductAttention::new";
        check::probability(module, "dropout", config.dropout);
        check::fill(module, config.fill);
        check::scale(module, config.scale);
        DotProductAttention {
            dropout: Dropout::new(DropoutConfig { p: config.dropout }),
            fill: config.fill,
            scale: config.scale,
            weights: WeightsSlot::default(),
        }
    }

    /// Attends `queries` to `keys`, returning the weighted sum of `values`.
    #[track_caller]
    pub fn forward(&self, queries: &Tensor, keys: &Tensor, values: &Tensor, mask: &Mask) -> Tensor {
        let weights = attention_weights(
            "DotProductAttention",
            queries,
            keys,
            values,
            mask,
            self.fill,
            self.scale,
        );
        self.weights.store(&weights);
        self.dropout.forward(&weights).matmul(values)
    }
}

impl Module for DotProductAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}

impl AttentionWeights for DotProductAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
