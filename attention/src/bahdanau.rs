//! Additive attention for one query per example, with biases, a learned score vector and a
//! value projection after pooling: the form used by a seq2seq decoder (the first article).

use engine::Tensor;
use engine::nn::{Linear, Module, parameter, prefixed};

use crate::additive::additive_scores;
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// Bahdanau-style additive attention for a single query per example:
///
/// ```text
/// score[b, k] = v · tanh(W_q q[b] + b_q + W_k k[b, k] + b_k)
/// weights     = masked_softmax(score)                 // [B, K]
/// context     = W_o (Σ_k weights[b, k] values[b, k]) + b_o
/// ```
///
/// | argument | shape |
/// |---|---|
/// | `query` | `[B, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `mask` | `Keep` of `[B, K]` (1 = real key, 0 = padding), `ValidLens` of `[B]`, or `None` |
/// | context | `[B, value_size]` |
/// | weights (and [`last_attention_weights`](AttentionWeights::last_attention_weights)) | `[B, K]` |
///
/// Parameters: `W_q: Linear(query_size, h)`, `W_k: Linear(key_size, h)` (both with bias),
/// `v: [h]` drawn from `U(-1/√h, 1/√h)`, `W_o: Linear(value_size, value_size)`.
///
/// The article fills masked scores with `-1e9`: `with_fill(Fill::Constant(-1e9))`. The
/// default safe fill gives the same weights whenever an example has at least one key.
///
/// ```
/// use attention::{BahdanauAttention, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = BahdanauAttention::new(6, 4, 5, 8);
/// let mask = Tensor::from_vec(vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0], &[2, 3]);
/// let (context, weights) =
///     attention.forward(&Tensor::randn(&[2, 6]), &Tensor::randn(&[2, 3, 4]), &Tensor::randn(&[2, 3, 5]), &Mask::Keep(mask));
/// assert_eq!((context.shape(), weights.shape()), (&[2, 5][..], &[2, 3][..]));
/// assert_eq!(weights.to_vec()[2], 0.0);
/// ```
#[derive(Debug)]
pub struct BahdanauAttention {
    w_q: Linear,
    w_k: Linear,
    v: Tensor,
    w_o: Linear,
    fill: Fill,
    weights: WeightsSlot,
}

impl BahdanauAttention {
    /// A module with hidden size `hidden`, initialised like PyTorch's `Linear` and with `v`
    /// uniform in `±1/√hidden`.
    #[track_caller]
    pub fn new(query_size: usize, key_size: usize, value_size: usize, hidden: usize) -> Self {
        assert!(
            hidden > 0,
            "BahdanauAttention::new: hidden must be at least 1"
        );
        let bound = 1.0 / (hidden as f32).sqrt();
        Self::from_parts(
            Linear::new(query_size, hidden, true),
            Linear::new(key_size, hidden, true),
            Tensor::rand(&[hidden], -bound, bound),
            Linear::new(value_size, value_size, true),
        )
    }

    /// A module from given layers and score vector (to reproduce a PyTorch model).
    #[track_caller]
    pub fn from_parts(w_q: Linear, w_k: Linear, v: Tensor, w_o: Linear) -> Self {
        let h = w_q.out_features();
        assert!(
            w_k.out_features() == h && v.shape() == [h] && w_o.in_features() == w_o.out_features(),
            "BahdanauAttention: W_q {:?}, W_k {:?}, v {:?} and W_o {:?} must be [h, query_size], [h, key_size], [h] and [value_size, value_size]",
            w_q.weight().shape(),
            w_k.weight().shape(),
            v.shape(),
            w_o.weight().shape()
        );
        BahdanauAttention {
            w_q,
            w_k,
            v: parameter(&v),
            w_o,
            fill: Fill::Safe,
            weights: WeightsSlot::default(),
        }
    }

    /// The same module with another fill policy.
    pub fn with_fill(mut self, fill: Fill) -> Self {
        self.fill = fill;
        self
    }

    /// The learned score vector `v: [h]`.
    pub fn v(&self) -> &Tensor {
        &self.v
    }

    /// The hidden size `h`.
    pub fn hidden(&self) -> usize {
        self.w_q.out_features()
    }

    /// The size of a query, `query_size`.
    pub fn query_size(&self) -> usize {
        self.w_q.in_features()
    }

    /// The size of a key, `key_size`.
    pub fn key_size(&self) -> usize {
        self.w_k.in_features()
    }

    /// The size of a value (and of the context), `value_size`.
    pub fn value_size(&self) -> usize {
        self.w_o.in_features()
    }

    /// Returns `(context [B, value_size], weights [B, K])`.
    #[track_caller]
    pub fn forward(
        &self,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let expected = check::Expected {
            query_rank: 2,
            query_size: self.w_q.in_features(),
            key_size: self.w_k.in_features(),
            value_size: Some(self.w_o.in_features()),
        };
        check::inputs("BahdanauAttention", query, keys, values, expected);
        self.attend("BahdanauAttention", query, keys, values, mask)
    }

    /// The computation of [`forward`](Self::forward) on checked inputs; `module` names the
    /// caller in mask errors (a multi-head module runs each head through this).
    #[track_caller]
    pub(crate) fn attend(
        &self,
        module: &str,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        // One query per example: scores are [B, 1, K], and a [B, K] mask gains that axis.
        let mask = match mask {
            Mask::Keep(m) if m.rank() == 2 => Mask::Keep(m.unsqueeze(1)),
            Mask::Causal { .. } => panic!(
                "{module}: a causal mask has no meaning for one query per example; hint: pass Keep ([B, K]) or ValidLens ([B])"
            ),
            other => other.clone(),
        };
        let q = self.w_q.forward(query).unsqueeze(1);
        let scores = additive_scores(&q, &self.w_k.forward(keys), &self.v.unsqueeze(0));
        let weights = masked_softmax_in(module, &scores, &mask, self.fill);
        let pooled = weights.bmm(values).squeeze(1);
        let weights = weights.squeeze(1);
        self.weights.store(&weights);
        (self.w_o.forward(&pooled), weights)
    }
}

impl Module for BahdanauAttention {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            vec![("v".into(), self.v.clone())],
            prefixed("W_o", &self.w_o),
        ]
        .concat()
    }
}

impl AttentionWeights for BahdanauAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
