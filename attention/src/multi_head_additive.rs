//! Multi-head additive attention: several Bahdanau heads side by side (the first article).

use engine::nn::{Linear, LoadError, Module, StateDict, StateReader, prefixed};
use engine::{Activation, Tensor};

use crate::additive::{AdditiveScoring, projection};
use crate::bahdanau::{BahdanauAttention, BahdanauAttentionConfig};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::state::load_through;
use crate::weights::{AttentionWeights, WeightsSlot};

/// The settings of a [`MultiHeadAdditiveAttention`] module.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MultiHeadAdditiveAttentionConfig {
    /// The size of the query (no default: must be set).
    pub query_size: usize,
    /// The size of each key (no default: must be set).
    pub key_size: usize,
    /// The size of each value, and of the context (no default: must be set).
    pub value_size: usize,
    /// The total hidden size, shared out equally: each head gets `num_hiddens / num_heads`
    /// (no default). d2l's name, used by every config of this crate for the model size.
    /// Every projection has a bias, as in [`BahdanauAttention`]; there is no `bias`
    /// setting.
    pub num_hiddens: usize,
    /// The number of heads, which must divide `num_hiddens` (no default).
    pub num_heads: usize,
    /// What masked scores become in every head (default [`Fill::Safe`]).
    pub fill: Fill,
    /// How every head computes its scores (default [`AdditiveScoring::Fused`]).
    pub scoring: AdditiveScoring,
    /// The activation of every head's energies (default [`Activation::Tanh`]).
    pub activation: Activation,
}

/// `num_heads` independent [`BahdanauAttention`] heads of hidden size
/// `num_hiddens / num_heads`, their contexts concatenated and projected back to
/// `value_size`.
///
/// | argument | shape |
/// |---|---|
/// | `query` | `[B, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `mask` | as for [`BahdanauAttention`] |
/// | context | `[B, value_size]` |
/// | weights (and [`last_attention_weights`](AttentionWeights::last_attention_weights)) | `[B, num_heads, K]` |
///
/// Parameters: `heads.i.*` for each head (see [`BahdanauAttention`]) and
/// `W_o: Linear(num_heads · value_size, value_size)`. The module has no dropout. A head's
/// parameters may also be given under the article's names (`heads.i.query_proj.weight`,
/// …), read as [`BahdanauAttention`] reads them.
///
/// ```
/// use attention::{Mask, MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
///     query_size: 6,
///     key_size: 4,
///     value_size: 5,
///     num_hiddens: 8,
///     num_heads: 2,
///     ..Default::default()
/// });
/// let (context, weights) = attention.forward(
///     &Tensor::randn([3, 6]),
///     &Tensor::randn([3, 7, 4]),
///     &Tensor::randn([3, 7, 5]),
///     &Mask::none(),
/// );
/// assert_eq!((context.shape(), weights.shape()), (&[3, 5][..], &[3, 2, 7][..]));
/// ```
#[derive(Debug)]
pub struct MultiHeadAdditiveAttention {
    heads: Vec<BahdanauAttention>,
    w_o: Linear,
    config: MultiHeadAdditiveAttentionConfig,
    weights: WeightsSlot,
}

impl MultiHeadAdditiveAttention {
    /// A module initialised like [`BahdanauAttention::new`] in every head.
    #[track_caller]
    pub fn new(config: MultiHeadAdditiveAttentionConfig) -> Self {
        let module = "MultiHeadAdditiveAttention::new";
        let head = Self::check_config(module, &config);
        let heads = (0..config.num_heads)
            .map(|_| BahdanauAttention::new_in(module, head))
            .collect();
        let v = config.value_size;
        MultiHeadAdditiveAttention {
            heads,
            w_o: Linear::new(projection(config.num_heads * v, v, true)),
            config,
            weights: WeightsSlot::default(),
        }
    }

    /// A module whose parameters are copies of the tensors in `state`, by the names listed
    /// above; every problem is reported at once. Loading copies, as in PyTorch: the module
    /// owns its parameters, and the state's tensors are never shared or changed.
    #[track_caller]
    pub fn from_state_dict(
        config: MultiHeadAdditiveAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        Self::check_config("MultiHeadAdditiveAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let module = Self::read(&mut reader, config);
        reader.finish()?;
        Ok(module)
    }

    /// Reads every head (each in either layout) and `W_o` from checked settings.
    fn read(
        reader: &mut StateReader<'_>,
        config: MultiHeadAdditiveAttentionConfig,
    ) -> Self {
        let head = Self::head_config(&config);
        let heads = (0..config.num_heads)
            .map(|i| BahdanauAttention::read(reader, &format!("heads.{i}."), head))
            .collect();
        let v = config.value_size;
        let w_o = reader.linear("W_o", projection(config.num_heads * v, v, true));
        MultiHeadAdditiveAttention {
            heads,
            w_o,
            config,
            weights: WeightsSlot::default(),
        }
    }

    /// Checks the settings and returns those of one head.
    #[track_caller]
    fn check_config(
        module: &str,
        c: &MultiHeadAdditiveAttentionConfig,
    ) -> BahdanauAttentionConfig {
        check::heads_divide(module, "num_hiddens", c.num_hiddens, c.num_heads);
        let head = Self::head_config(c);
        BahdanauAttention::check_config(module, &head);
        head
    }

    /// The settings of one head.
    fn head_config(c: &MultiHeadAdditiveAttentionConfig) -> BahdanauAttentionConfig {
        BahdanauAttentionConfig {
            query_size: c.query_size,
            key_size: c.key_size,
            value_size: c.value_size,
            num_hiddens: c.num_hiddens / c.num_heads,
            fill: c.fill,
            scoring: c.scoring,
            activation: c.activation,
        }
    }

    /// The number of heads.
    pub fn num_heads(&self) -> usize {
        self.heads.len()
    }

    /// Returns `(context [B, value_size], weights [B, num_heads, K])`.
    #[track_caller]
    pub fn forward(
        &self,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let first = &self.heads[0];
        let expected = check::Expected {
            query_rank: 2,
            query_size: first.query_size(),
            key_size: first.key_size(),
            value_size: Some(first.value_size()),
        };
        check::inputs("MultiHeadAdditiveAttention", query, keys, values, expected);
        let module = "MultiHeadAdditiveAttention";
        let (mut contexts, mut weights) = (Vec::new(), Vec::new());
        for head in &self.heads {
            let (context, w) = head.attend(module, query, keys, values, mask);
            contexts.push(context);
            weights.push(w);
        }
        let concatenated = Tensor::concat(&contexts, -1);
        let weights = Tensor::stack(&weights, 1);
        self.weights.store(&weights);
        (self.w_o.forward(&concatenated), weights)
    }
}

impl Module for MultiHeadAdditiveAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut all: Vec<(String, Tensor)> = self
            .heads
            .iter()
            .enumerate()
            .flat_map(|(i, h)| prefixed(&format!("heads.{i}"), h))
            .collect();
        all.extend(prefixed("W_o", &self.w_o));
        all
    }

    /// Copies a state into the parameters, each head's in either layout (see
    /// [`BahdanauAttention`]); nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| Self::read(reader, self.config))
    }
}

impl AttentionWeights for MultiHeadAdditiveAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
