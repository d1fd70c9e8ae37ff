//! Additive attention (Bahdanau et al.), batched over queries: d2l's
//! `AdditiveAttention`.

use engine::nn::{
    Dropout, DropoutConfig, Linear, LinearConfig, LoadError, Module, StateDict,
    StateReader, prefixed,
};
use engine::{Activation, Tensor};

use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// How additive attention computes its scores `w · tanh(q̃ + k̃)` for every query and
/// key. Both give the same numbers (to about 1e-6) and the same gradients; they
/// differ in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdditiveScoring {
    /// One fused op, [`Tensor::additive_scores`]: no `[B, Q, K, h]` tensor is built,
    /// in the forward pass or the backward pass. The default.
    #[default]
    Fused,
    /// d2l's composition of broadcasting ops: `(q̃.unsqueeze(2) +
    /// k̃.unsqueeze(1)).tanh()` is a `[B, Q, K, h]` tensor, then a product with `w`.
    /// Kept for teaching: it is the definition, step by step, and it costs `B·Q·K·h`
    /// floats several times over.
    Broadcast,
}

/// The additive score of every projected query against every projected key:
/// `score[b, q, k] = w · f(q̃[b, q] + k̃[b, k])`, `f` the activation (`tanh` unless the
/// config says otherwise).
///
/// `queries: [B, Q, h]` and `keys: [B, K, h]` are already projected; `w` is `[h]`.
#[track_caller]
pub(crate) fn additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w: &Tensor,
    scoring: AdditiveScoring,
    activation: Activation,
) -> Tensor {
    match (scoring, activation) {
        (AdditiveScoring::Fused, f) => queries.additive_scores_with(keys, w, f),
        (AdditiveScoring::Broadcast, Activation::Tanh) => {
            broadcast_additive_scores(queries, keys, w)
        }
        (AdditiveScoring::Broadcast, f) => f
            .apply(&(queries.unsqueeze(2) + keys.unsqueeze(1)))
            .matmul(&w.unsqueeze(1))
            .squeeze(-1),
    }
}

// ANCHOR: broadcast_scores
/// The scores written with broadcasting ops (d2l's form): the sum of every projected
/// query with every projected key is a `[B, Q, K, h]` feature tensor, which is what
/// makes this form cost `B·Q·K·h` memory.
#[track_caller]
pub(crate) fn broadcast_additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w: &Tensor,
) -> Tensor {
    let features = (queries.unsqueeze(2) + keys.unsqueeze(1)).tanh(); // [B, Q, K, h]
    features.matmul(&w.unsqueeze(1)).squeeze(-1) // [B, Q, K]
}
// ANCHOR_END: broadcast_scores

/// The settings of an [`AdditiveAttention`] module; names follow d2l's
/// `AdditiveAttention(num_hiddens, dropout)`, with the query and key sizes that
/// PyTorch's `LazyLinear` infers written out.
///
/// ```
/// use attention::{AdditiveAttentionConfig, Fill};
/// let config = AdditiveAttentionConfig { query_size: 20, key_size: 2, num_hiddens: 8, ..Default::default() };
/// assert_eq!((config.dropout, config.fill), (0.0, Fill::Safe));
/// assert_eq!(config.scoring, attention::AdditiveScoring::Fused);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdditiveAttentionConfig {
    /// The size of each query (no default: must be set).
    pub query_size: usize,
    /// The size of each key (no default: must be set); it may differ from
    /// `query_size`.
    pub key_size: usize,
    /// The size `h` of the hidden space in which queries and keys are added (no
    /// default). d2l's name, used by every config of this crate for the model size.
    pub num_hiddens: usize,
    /// Dropout on the attention weights, in training mode (default 0).
    pub dropout: f32,
    /// What masked scores become (default [`Fill::Safe`]; [`Fill::D2l`] reproduces
    /// d2l).
    pub fill: Fill,
    /// How the scores are computed (default [`AdditiveScoring::Fused`]).
    pub scoring: AdditiveScoring,
    /// The activation of the energies, `w · f(q̃ + k̃)` (default [`Activation::Tanh`],
    /// as in d2l; `Relu` is a debugging guide's alternative when `tanh` saturates).
    pub activation: Activation,
}

/// Additive attention over a batch of queries, exactly d2l's `AdditiveAttention`:
/// queries and keys are projected to `num_hiddens` without biases, added, passed
/// through `tanh`, and scored by a bias-free `Linear(num_hiddens, 1)`. Queries and
/// keys may have different sizes. The scores are computed by one fused op by default,
/// without d2l's `[B, Q, K, h]` tensor; `scoring: AdditiveScoring::Broadcast`
/// computes them as d2l writes them.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, dv]` |
/// | `mask` | see [`Mask`]: scores are `[B, Q, K]` |
/// | output | `[B, Q, dv]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, Q, K]` |
///
/// Parameters (PyTorch layout, `[out, in]`, d2l's names): `W_q.weight: [h,
/// query_size]`, `W_k.weight: [h, key_size]`, `w_v.weight: [1, h]`.
///
/// A new module is in training mode (dropout on, as in PyTorch); call
/// [`eval`](Module::eval) before measuring.
///
/// ```
/// use attention::{AdditiveAttention, AdditiveAttentionConfig, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = AdditiveAttention::new(AdditiveAttentionConfig {
///     query_size: 20,
///     key_size: 2,
///     num_hiddens: 8,
///     dropout: 0.1,
///     ..Default::default()
/// });
/// let queries = Tensor::randn([2, 1, 20]);
/// let keys = Tensor::ones([2, 10, 2]);
/// let values = Tensor::arange(40).reshape([1, 10, 4]).expand([2, 10, 4]);
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 6.0], [2]));
/// assert_eq!(attention.forward(&queries, &keys, &values, &lens).shape(), &[2, 1, 4]);
/// ```
#[derive(Debug)]
pub struct AdditiveAttention {
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    dropout: Dropout,
    fill: Fill,
    scoring: AdditiveScoring,
    activation: Activation,
    weights: WeightsSlot,
}

impl AdditiveAttention {
    /// A module initialised like PyTorch's `Linear` layers.
    #[track_caller]
    pub fn new(config: AdditiveAttentionConfig) -> Self {
        let (q, k, h) = Self::check_config("AdditiveAttention::new", &config);
        Self::from_layers(
            Linear::new(no_bias(q, h)),
            Linear::new(no_bias(k, h)),
            Linear::new(no_bias(h, 1)),
            config,
        )
    }

    /// A module whose parameters are copies of the tensors in `state`, by the names
    /// listed above; every problem is reported at once. Loading copies, as in
    /// PyTorch: the module owns its parameters, and the state's tensors are never
    /// shared or changed. To copy values into an existing module, use
    /// [`load_state_dict`](Module::load_state_dict).
    #[track_caller]
    pub fn from_state_dict(
        config: AdditiveAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        let (q, k, h) =
            Self::check_config("AdditiveAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let w_q = reader.linear("W_q", no_bias(q, h));
        let w_k = reader.linear("W_k", no_bias(k, h));
        let w_v = reader.linear("w_v", no_bias(h, 1));
        reader.finish()?;
        Ok(Self::from_layers(w_q, w_k, w_v, config))
    }

    #[track_caller]
    fn check_config(
        module: &str,
        c: &AdditiveAttentionConfig,
    ) -> (usize, usize, usize) {
        check::positive(module, "query_size", c.query_size);
        check::positive(module, "key_size", c.key_size);
        check::positive(module, "num_hiddens", c.num_hiddens);
        check::probability(module, "dropout", c.dropout);
        check::fill(module, c.fill);
        (c.query_size, c.key_size, c.num_hiddens)
    }

    fn from_layers(
        w_q: Linear,
        w_k: Linear,
        w_v: Linear,
        config: AdditiveAttentionConfig,
    ) -> Self {
        AdditiveAttention {
            w_q,
            w_k,
            w_v,
            dropout: Dropout::new(DropoutConfig { p: config.dropout }),
            fill: config.fill,
            scoring: config.scoring,
            activation: config.activation,
            weights: WeightsSlot::default(),
        }
    }

    /// Attends each query to the keys and returns the weighted sum of `values`.
    #[track_caller]
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> Tensor {
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
            &self.w_v.weight().squeeze(0),
            self.scoring,
            self.activation,
        );
        let weights =
            masked_softmax_in("AdditiveAttention", &scores, mask, self.fill);
        self.weights.store(&weights);
        self.dropout.forward(&weights).bmm(values)
    }
}

/// A bias-free projection from `i` to `o` features.
pub(crate) fn no_bias(i: usize, o: usize) -> LinearConfig {
    LinearConfig {
        in_features: i,
        out_features: o,
        bias: false,
    }
}

/// A projection from `i` to `o` features, with or without a bias.
pub(crate) fn projection(i: usize, o: usize, bias: bool) -> LinearConfig {
    LinearConfig {
        in_features: i,
        out_features: o,
        bias,
    }
}

impl Module for AdditiveAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
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
