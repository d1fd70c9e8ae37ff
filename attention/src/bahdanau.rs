//! Additive attention for one query per example, with biases, a learned score vector and a
//! value projection after pooling: the form used by a seq2seq decoder (the first article).

use engine::nn::{
    Linear, LoadError, Module, StateDict, StateReader, parameter, prefixed,
};
use engine::{Activation, Tensor};

use crate::additive::{AdditiveScoring, additive_scores, projection};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::state::{holds_any, load_through};
use crate::weights::{AttentionWeights, WeightsSlot};

/// The article's names for the parameters, which `from_state_dict` and `load_state_dict`
/// also accept: `query_proj`, `key_proj` and `value_proj` are `nn.Linear` layers and `v`
/// is `nn.Linear(h, 1, bias=False)`.
const ARTICLE_NAMES: [&str; 7] = [
    "query_proj.weight",
    "query_proj.bias",
    "key_proj.weight",
    "key_proj.bias",
    "v.weight",
    "value_proj.weight",
    "value_proj.bias",
];

/// The settings of a [`BahdanauAttention`] module (and of each head of a
/// [`MultiHeadAdditiveAttention`](crate::MultiHeadAdditiveAttention)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BahdanauAttentionConfig {
    /// The size of the query, e.g. a decoder's hidden state (no default: must be set).
    pub query_size: usize,
    /// The size of each key, e.g. an encoder output (no default: must be set).
    pub key_size: usize,
    /// The size of each value, and of the context (no default: must be set).
    pub value_size: usize,
    /// The size `h` of the hidden space where query and key are added (no default).
    /// d2l's name, used by every config of this crate for the model size. The module has no
    /// `bias` setting: the article's projections always have biases, and `v` has none.
    pub num_hiddens: usize,
    /// What masked scores become (default [`Fill::Safe`]; the article uses
    /// `Fill::Constant(-1e9)`).
    pub fill: Fill,
    /// How the scores are computed (default [`AdditiveScoring::Fused`]).
    pub scoring: AdditiveScoring,
    /// The activation of the energies, `v · f(W_q q + W_k k)` (default
    /// [`Activation::Tanh`], the article's).
    pub activation: Activation,
}

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
/// | `mask` | [`Mask::key_padding`] of `[B, K]`, [`Mask::valid_lens`] of `[B]`, or [`Mask::none`] (scores are `[B, 1, K]`) |
/// | context | `[B, value_size]` |
/// | weights (and [`last_attention_weights`](AttentionWeights::last_attention_weights)) | `[B, K]` |
///
/// Parameters: `W_q: Linear(query_size, h)`, `W_k: Linear(key_size, h)` (both with bias),
/// `v: [h]` drawn from `U(-1/√h, 1/√h)`, `W_o: Linear(value_size, value_size)`.
///
/// **The article's names.** The article's PyTorch module names the same parameters
/// `query_proj`, `key_proj`, `value_proj` (three `nn.Linear` layers with biases) and `v`
/// (`nn.Linear(h, 1, bias=False)`), and projects the values before pooling,
/// `Σ_k weights[k] · value_proj(values[k])`. That is the same context as `W_o` after
/// pooling here, because the weights sum to 1 (they sum to 0 only on an example with no
/// visible key under [`Fill::Safe`], where this module gives `b_o` and the article's order
/// would give 0). So its state dict loads as it is:
///
/// | the article's `state_dict()` key | shape | here |
/// |---|---|---|
/// | `query_proj.weight`, `query_proj.bias` | `[h, query_size]`, `[h]` | `W_q.weight`, `W_q.bias` |
/// | `key_proj.weight`, `key_proj.bias` | `[h, key_size]`, `[h]` | `W_k.weight`, `W_k.bias` |
/// | `v.weight` | `[1, h]` | `v`, `[h]` |
/// | `value_proj.weight`, `value_proj.bias` | `[value_size, value_size]`, `[value_size]` | `W_o.weight`, `W_o.bias` |
///
/// [`from_state_dict`](Self::from_state_dict) and
/// [`load_state_dict`](Module::load_state_dict) read a state in the article's layout when
/// it holds any of the article's names, and in this module's own otherwise; a problem is
/// named as the state names it, and names of the other layout are reported as unexpected.
/// [`state_dict`](Module::state_dict) always gives this module's own names, which are also
/// those of each head of a [`MultiHeadAdditiveAttention`](crate::MultiHeadAdditiveAttention)
/// (`heads.0.W_q.weight`, …).
///
/// The article fills masked scores with `-1e9` (`fill: Fill::Constant(-1e9)`). The
/// default safe fill gives the same weights whenever an example has at least one key. The
/// module has no dropout, so training and evaluation mode behave alike.
///
/// ```
/// use attention::{BahdanauAttention, BahdanauAttentionConfig, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = BahdanauAttention::new(BahdanauAttentionConfig {
///     query_size: 6,
///     key_size: 4,
///     value_size: 5,
///     num_hiddens: 8,
///     ..Default::default()
/// });
/// let pad = Tensor::from_vec(vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0], [2, 3]); // 1 = real key
/// let (context, weights) = attention.forward(
///     &Tensor::randn([2, 6]),
///     &Tensor::randn([2, 3, 4]),
///     &Tensor::randn([2, 3, 5]),
///     &Mask::key_padding(&pad),
/// );
/// assert_eq!((context.shape(), weights.shape()), (&[2, 5][..], &[2, 3][..]));
/// assert_eq!(weights.to_vec()[2], 0.0);
/// ```
#[derive(Debug)]
pub struct BahdanauAttention {
    w_q: Linear,
    w_k: Linear,
    v: Tensor,
    w_o: Linear,
    config: BahdanauAttentionConfig,
    weights: WeightsSlot,
}

impl BahdanauAttention {
    /// A module initialised like PyTorch's `Linear`, with `v` uniform in `±1/√h`.
    #[track_caller]
    pub fn new(config: BahdanauAttentionConfig) -> Self {
        Self::new_in("BahdanauAttention::new", config)
    }

    #[track_caller]
    pub(crate) fn new_in(module: &str, config: BahdanauAttentionConfig) -> Self {
        let [q, k, v, h] = Self::check_config(module, &config);
        let bound = 1.0 / (h as f32).sqrt();
        Self::from_layers(
            Linear::new(projection(q, h, true)),
            Linear::new(projection(k, h, true)),
            Tensor::rand([h], -bound, bound),
            Linear::new(projection(v, v, true)),
            config,
        )
    }

    /// A module whose parameters are copies of the tensors in `state`, by the names listed
    /// above; every problem is reported at once. Loading copies, as in PyTorch: the module
    /// owns its parameters, and the state's tensors are never shared or changed.
    #[track_caller]
    pub fn from_state_dict(
        config: BahdanauAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        Self::check_config("BahdanauAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let module = Self::read(&mut reader, "", config);
        reader.finish()?;
        Ok(module)
    }

    /// Reads the parameters named `{prefix}W_q.weight` and so on, or the article's
    /// `{prefix}query_proj.weight` and so on when the state holds any of those (a
    /// multi-head module reads each head with its own prefix).
    pub(crate) fn read(
        reader: &mut StateReader<'_>,
        prefix: &str,
        c: BahdanauAttentionConfig,
    ) -> Self {
        let (q, k, v, h) = (c.query_size, c.key_size, c.value_size, c.num_hiddens);
        let names = if holds_any(reader, prefix, &ARTICLE_NAMES) {
            ["query_proj", "key_proj", "v.weight", "value_proj"]
        } else {
            ["W_q", "W_k", "v", "W_o"]
        };
        let w_q =
            reader.linear(&format!("{prefix}{}", names[0]), projection(q, h, true));
        let w_k =
            reader.linear(&format!("{prefix}{}", names[1]), projection(k, h, true));
        let score_name = format!("{prefix}{}", names[2]);
        // The article's `v` is a Linear(h, 1) weight, [1, h]: the same numbers as a row.
        let score = if names[2] == "v.weight" {
            reader.tensor(&score_name, &[1, h]).reshape([h])
        } else {
            reader.tensor(&score_name, &[h])
        };
        let w_o =
            reader.linear(&format!("{prefix}{}", names[3]), projection(v, v, true));
        Self::from_layers(w_q, w_k, score, w_o, c)
    }

    #[track_caller]
    pub(crate) fn check_config(
        module: &str,
        c: &BahdanauAttentionConfig,
    ) -> [usize; 4] {
        check::positive(module, "query_size", c.query_size);
        check::positive(module, "key_size", c.key_size);
        check::positive(module, "value_size", c.value_size);
        check::positive(module, "num_hiddens", c.num_hiddens);
        check::fill(module, c.fill);
        [c.query_size, c.key_size, c.value_size, c.num_hiddens]
    }

    fn from_layers(
        w_q: Linear,
        w_k: Linear,
        v: Tensor,
        w_o: Linear,
        config: BahdanauAttentionConfig,
    ) -> Self {
        BahdanauAttention {
            w_q,
            w_k,
            v: parameter(&v),
            w_o,
            config,
            weights: WeightsSlot::default(),
        }
    }

    /// The learned score vector `v: [h]`.
    pub fn v(&self) -> &Tensor {
        &self.v
    }

    /// The hidden size `h`.
    pub fn num_hiddens(&self) -> usize {
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
        // One query per example: scores are [B, 1, K].
        assert!(
            !mask.is_causal(),
            "{module}: a causal mask has no meaning for one query per example; hint: pass Mask::key_padding ([B, K]) or Mask::valid_lens ([B])"
        );
        let q = self.w_q.forward(query).unsqueeze(1);
        let scores = additive_scores(
            &q,
            &self.w_k.forward(keys),
            &self.v,
            self.config.scoring,
            self.config.activation,
        );
        let weights = masked_softmax_in(module, &scores, mask, self.config.fill);
        let pooled = weights.bmm(values).squeeze(1);
        let weights = weights.squeeze(1);
        self.weights.store(&weights);
        (self.w_o.forward(&pooled), weights)
    }
}

impl Module for BahdanauAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            vec![("v".into(), self.v.clone())],
            prefixed("W_o", &self.w_o),
        ]
        .concat()
    }

    /// Copies a state in either layout (this module's names or the article's, see the
    /// type's documentation) into the parameters; nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| Self::read(reader, "", self.config))
    }
}

impl AttentionWeights for BahdanauAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
