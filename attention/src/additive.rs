//! Additive attention (Bahdanau et al.), batched over queries: d2l's `AdditiveAttention`.

use engine::Tensor;
use engine::nn::{Dropout, Linear, Module, prefixed};

use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// The additive score of every projected query against every projected key:
/// `score[b, q, k] = w · tanh(q̃[b, q] + k̃[b, k])`.
///
/// `queries: [B, Q, h]` and `keys: [B, K, h]` are already projected; `w` is `[1, h]` (the
/// weight of a bias-free `Linear(h, 1)`). The broadcast sum builds a `[B, Q, K, h]`
/// feature tensor, which is what makes additive attention cost `B·Q·K·h` memory.
pub(crate) fn additive_scores(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let features = (queries.unsqueeze(2) + keys.unsqueeze(1)).tanh();
    features.matmul(&w.transpose(0, 1)).squeeze(-1)
}

/// Additive attention over a batch of queries, exactly d2l's `AdditiveAttention`: queries
/// and keys are projected to `num_hiddens` without biases, added, passed through `tanh`,
/// and scored by a bias-free `Linear(num_hiddens, 1)`. Queries and keys may have different
/// sizes.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, dv]` |
/// | `mask` | see [`Mask`] (`ValidLens` of `[B]` or `[B, Q]`, …) |
/// | output | `[B, Q, dv]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, Q, K]` |
///
/// Parameters (PyTorch layout, `[out, in]`): `W_q.weight: [h, query_size]`,
/// `W_k.weight: [h, key_size]`, `w_v.weight: [1, h]`.
///
/// ```
/// use attention::{AdditiveAttention, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = AdditiveAttention::new(20, 2, 8, 0.1);
/// let queries = Tensor::randn(&[2, 1, 20]);
/// let keys = Tensor::ones(&[2, 10, 2]);
/// let values = Tensor::arange(40).reshape([1, 10, 4]).expand([2, 10, 4]);
/// let lens = Mask::ValidLens(Tensor::from_vec(vec![2.0, 6.0], &[2]));
/// assert_eq!(attention.forward(&queries, &keys, &values, &lens).shape(), &[2, 1, 4]);
/// ```
#[derive(Debug)]
pub struct AdditiveAttention {
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    dropout: Dropout,
    fill: Fill,
    weights: WeightsSlot,
}

impl AdditiveAttention {
    /// A module for queries of size `query_size` and keys of size `key_size`, scored in a
    /// hidden space of size `num_hiddens`, with dropout on the weights. Initialised like
    /// PyTorch's `Linear`.
    #[track_caller]
    pub fn new(query_size: usize, key_size: usize, num_hiddens: usize, dropout: f32) -> Self {
        Self::from_parts(
            Linear::new(query_size, num_hiddens, false),
            Linear::new(key_size, num_hiddens, false),
            Linear::new(num_hiddens, 1, false),
            dropout,
        )
    }

    /// A module with given weights `W_q: [h, query_size]`, `W_k: [h, key_size]`,
    /// `w_v: [1, h]` (to reproduce a PyTorch model number for number).
    #[track_caller]
    pub fn from_weights(w_q: &Tensor, w_k: &Tensor, w_v: &Tensor, dropout: f32) -> Self {
        for (name, w, layout) in [
            ("W_q", w_q, "[h, query_size]"),
            ("W_k", w_k, "[h, key_size]"),
            ("w_v", w_v, "[1, h]"),
        ] {
            check::rank("AdditiveAttention::from_weights", name, w, 2, layout);
        }
        Self::from_parts(
            Linear::from_weights(w_q, None),
            Linear::from_weights(w_k, None),
            Linear::from_weights(w_v, None),
            dropout,
        )
    }

    #[track_caller]
    fn from_parts(w_q: Linear, w_k: Linear, w_v: Linear, dropout: f32) -> Self {
        let h = w_q.out_features();
        assert!(
            w_k.out_features() == h && w_v.in_features() == h && w_v.out_features() == 1,
            "AdditiveAttention: W_q {:?}, W_k {:?} and w_v {:?} must be [h, query_size], [h, key_size] and [1, h] with one h",
            w_q.weight().shape(),
            w_k.weight().shape(),
            w_v.weight().shape()
        );
        AdditiveAttention {
            w_q,
            w_k,
            w_v,
            dropout: Dropout::new(dropout),
            fill: Fill::Safe,
            weights: WeightsSlot::default(),
        }
    }

    /// The same module with another fill policy ([`Fill::D2l`] reproduces d2l exactly).
    pub fn with_fill(mut self, fill: Fill) -> Self {
        self.fill = fill;
        self
    }

    /// Attends each query to the keys and returns the weighted sum of `values`.
    #[track_caller]
    pub fn forward(&self, queries: &Tensor, keys: &Tensor, values: &Tensor, mask: &Mask) -> Tensor {
        let expected = check::Expected {
            query_rank: 3,
            query_size: self.w_q.in_features(),
            key_size: self.w_k.in_features(),
            value_size: None,
        };
        check::inputs("AdditiveAttention", queries, keys, values, expected);
        let scores = additive_scores(
            &self.w_q.forward(queries),
            &self.w_k.forward(keys),
            self.w_v.weight(),
        );
        let weights = masked_softmax_in("AdditiveAttention", &scores, mask, self.fill);
        self.weights.store(&weights);
        self.dropout.forward(&weights).bmm(values)
    }
}

impl Module for AdditiveAttention {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            prefixed("w_v", &self.w_v),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}

impl AttentionWeights for AdditiveAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
