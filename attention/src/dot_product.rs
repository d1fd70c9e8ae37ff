//! Scaled dot-product attention: scores `Q Kᵀ / √d`.

use engine::Tensor;
use engine::nn::{Dropout, DropoutConfig, Module};
use engine::shape::broadcast_shapes;

use crate::blocked::{AttentionPath, attend_in_blocks};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// Attention weights and output for queries, keys and values, without dropout:
/// `weights = masked_softmax(Q Kᵀ / √d)`, `output = weights V`, with `d` the query size and
/// the safe fill ([`Fill::Safe`]). Returns `(output, weights)`. For causal order, another
/// scale or fill, or dropout, name them in [`SdpaOptions`] and call
/// [`scaled_dot_product_attention_with`]; the [`DotProductAttention`] module keeps them
/// as settings.
///
/// The feature size `d` must be at least 1: with `d = 0` every score is an empty sum and
/// the scale `1/√d` is infinite, so the call panics and says so (see
/// [`scaled_dot_product_attention_with`] for why this is not PyTorch's answer).
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

/// The options of [`scaled_dot_product_attention_with`], named after the arguments of
/// PyTorch's `torch.nn.functional.scaled_dot_product_attention(query, key, value,
/// attn_mask=None, dropout_p=0.0, is_causal=False, scale=None)`, plus the fill policy.
/// `SdpaOptions::default()` is the plain [`scaled_dot_product_attention`] call; set the
/// fields you need and leave the rest with `..Default::default()`.
///
/// ```
/// use attention::{Fill, Mask, SdpaOptions};
/// let options = SdpaOptions { is_causal: true, ..Default::default() };
/// assert!(options.mask.is_none());
/// assert_eq!((options.dropout_p, options.scale, options.fill), (0.0, None, Fill::Safe));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SdpaOptions {
    /// Which keys each query may see (default [`Mask::none`]): PyTorch's `attn_mask`. A
    /// boolean `attn_mask` (True = takes part) is [`Mask::keep`] of the same 0/1 values;
    /// valid lengths and padding masks work too.
    pub mask: Mask,
    /// Dropout on the weights before they multiply the values (default 0). As in PyTorch
    /// it applies whenever it is above 0, training or not: pass
    /// `if training { p } else { 0.0 }`. Must be in `[0, 1]`.
    pub dropout_p: f32,
    /// Causal order as PyTorch's `is_causal` defines it: query `i` sees keys `0..=i`,
    /// aligned to the *first* key ([`Mask::causal_with_offset(0)`](Mask::causal_with_offset)),
    /// which for a square score matrix is the usual lower triangle (default `false`).
    /// Combined with `mask` when both are given (PyTorch refuses both at once). For
    /// queries that are the *last* tokens of the keys, as in cached decoding, put
    /// [`Mask::causal`] in `mask` instead.
    pub is_causal: bool,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
    /// What masked scores become (default [`Fill::Safe`], which gives what PyTorch's
    /// implementation gives: masked keys left out, a fully masked row all zeros).
    pub fill: Fill,
}

/// [`scaled_dot_product_attention`] with named options, as PyTorch's
/// `F.scaled_dot_product_attention(q, k, v, attn_mask=…, dropout_p=…, is_causal=…,
/// scale=…)` takes them: `weights = masked_softmax(Q Kᵀ · scale)` under `options.mask`
/// (and causal order when `options.is_causal`) with `options.fill`, then
/// `output = dropout(weights) V`. Returns `(output, weights)`, the weights before dropout
/// (PyTorch returns only the output).
///
/// Shapes are those of [`scaled_dot_product_attention`]. A feature size `d = 0` panics:
/// every score would be an empty sum, and the default scale `1/√d` infinite. PyTorch
/// returns uniform weights there (it scales the empty `Q` and `K`, not the scores, so no
/// `0 · ∞` appears); but a query of no features is a shape mistake upstream (a width that
/// did not divide among the heads, a `narrow` of length 0), and uniform weights would
/// hide it.
///
/// ```
/// use attention::{scaled_dot_product_attention, scaled_dot_product_attention_with, Mask, SdpaOptions};
/// use engine::Tensor;
///
/// let q = Tensor::from_vec(vec![1.0, 0.0, 1.0, 0.0], [1, 2, 2]);
/// let k = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1, 3, 2]);
/// let v = Tensor::from_vec(vec![1.0, 2.0, 3.0], [1, 3, 1]);
/// // The defaults are the plain call.
/// let (plain, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
/// let (same, _) = scaled_dot_product_attention_with(&q, &k, &v, &SdpaOptions::default());
/// assert_eq!(plain.to_vec(), same.to_vec());
/// // Causal order as PyTorch's is_causal, and the scale ln 3: query 0 sees key 0 only;
/// // query 1 sees keys 0 and 1, with scores ln 3 and 0, so weights 3/4 and 1/4.
/// let options = SdpaOptions { is_causal: true, scale: Some(3f32.ln()), ..Default::default() };
/// let (out, w) = scaled_dot_product_attention_with(&q, &k, &v, &options);
/// let w = w.to_vec();
/// assert_eq!(&w[..3], &[1.0, 0.0, 0.0]);
/// assert!((w[3] - 0.75).abs() < 1e-6 && (w[4] - 0.25).abs() < 1e-6 && w[5] == 0.0);
/// assert!((out.to_vec()[1] - 1.25).abs() < 1e-6);
/// ```
#[track_caller]
pub fn scaled_dot_product_attention_with(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    options: &SdpaOptions,
) -> (Tensor, Tensor) {
    let module = "scaled_dot_product_attention_with";
    check::probability(module, "dropout_p", options.dropout_p);
    check::scale(module, options.scale);
    check::fill(module, options.fill);
    let causal;
    let mask = if options.is_causal {
        causal = &options.mask & &Mask::causal_with_offset(0);
        &causal
    } else {
        &options.mask
    };
    let weights = attention_weights(
        module,
        queries,
        keys,
        values,
        mask,
        options.fill,
        options.scale,
    );
    let dropped = if options.dropout_p > 0.0 {
        weights.dropout(options.dropout_p, true)
    } else {
        weights.clone()
    };
    (dropped.matmul(values), weights)
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
    check_qkv(module, queries, keys, values);
    let d = queries.size(-1);
    let scale = scale.unwrap_or(1.0 / (d as f32).sqrt());
    let scores = queries.matmul_t(keys) * scale; // Q Kᵀ, reading K in place
    masked_softmax_in(module, &scores, mask, fill)
}

/// Checks that queries, keys and values fit scaled dot-product attention: ranks, a
/// feature size `d ≥ 1` shared by queries and keys, one value per key, and leading
/// dimensions that broadcast.
#[track_caller]
pub(crate) fn check_qkv(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
) {
    assert!(
        queries.rank() >= 2 && keys.rank() >= 2 && values.rank() >= 2,
        "{module}: queries, keys and values need shape [..., entries, features], found {:?}, {:?} and {:?}",
        queries.shape(),
        keys.shape(),
        values.shape()
    );
    let d = queries.size(-1);
    check::ensure(d > 0, module, || {
        format!(
            "queries {:?} and keys {:?} have no features (d = 0): every score Q Kᵀ would be an empty sum and the scale 1/√d infinite; hint: check the size that was split or narrowed to make them",
            queries.shape(),
            keys.shape()
        )
    });
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
    /// Full or blocked computation (default [`AttentionPath::Auto`]: blocked from
    /// [`BLOCKED_FROM_KEYS`](crate::BLOCKED_FROM_KEYS) keys on, where it applies).
    pub path: AttentionPath,
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
    path: AttentionPath,
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
            path: config.path,
            weights: WeightsSlot::default(),
        }
    }

    /// Attends `queries` to `keys`, returning the weighted sum of `values`.
    #[track_caller]
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> Tensor {
        let module = "DotProductAttention";
        let dropout_active = self.dropout.is_training() && self.dropout.p() > 0.0;
        let block = self.path.block_for(
            module,
            (queries, keys),
            mask,
            self.fill,
            dropout_active,
        );
        if let Some(block) = block {
            let out = attend_in_blocks(
                module, queries, keys, values, mask, self.scale, block,
            );
            self.weights.store_recipe(queries, keys, mask, self.scale);
            return out;
        }
        let weights = attention_weights(
            module, queries, keys, values, mask, self.fill, self.scale,
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
