//! Multi-head attention: d2l's `MultiHeadAttention`, heads folded into the batch.

use engine::Tensor;
use engine::nn::{Linear, LoadError, Module, StateDict, StateReader, prefixed};

use crate::additive::projection;
use crate::blocked::AttentionPath;
use crate::check;
use crate::dot_product::{DotProductAttention, DotProductAttentionConfig};
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::state::{holds_any, load_through};
use crate::weights::AttentionWeights;

/// `nn.MultiheadAttention`'s names for the parameters, which `from_state_dict` and
/// `load_state_dict` also accept.
const TORCH_NAMES: [&str; 7] = [
    "in_proj_weight",
    "in_proj_bias",
    "q_proj_weight",
    "k_proj_weight",
    "v_proj_weight",
    "out_proj.weight",
    "out_proj.bias",
];

/// The settings of a [`MultiHeadAttention`] module, named as in d2l's
/// `MultiHeadAttention(num_hiddens, num_heads, dropout, bias=False)`.
///
/// ```
/// use attention::MultiHeadAttentionConfig;
/// let config = MultiHeadAttentionConfig { num_hiddens: 16, num_heads: 4, ..Default::default() };
/// assert_eq!((config.dropout, config.bias, config.query_size), (0.0, false, None));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MultiHeadAttentionConfig {
    /// The size the queries, keys and values are projected to, and of the output (no
    /// default: must be set). d2l's name, used by every config of this crate; PyTorch's
    /// `nn.MultiheadAttention` calls it `embed_dim`, the Transformer paper `d_model`.
    pub num_hiddens: usize,
    /// The number of heads, which must divide `num_hiddens` (no default).
    pub num_heads: usize,
    /// The size of each query; `None` (the default) means `num_hiddens`.
    pub query_size: Option<usize>,
    /// The size of each key; `None` (the default) means `num_hiddens`.
    pub key_size: Option<usize>,
    /// The size of each value; `None` (the default) means `num_hiddens`.
    pub value_size: Option<usize>,
    /// Dropout on the attention weights, in training mode (default 0).
    pub dropout: f32,
    /// Whether the four projections have biases (default `false`: d2l's
    /// `MultiHeadAttention` is the definition this module follows number for number).
    /// PyTorch's `nn.MultiheadAttention` defaults to `bias=True`: set `bias: true` to match
    /// it. [`CausalSelfAttentionConfig`](crate::CausalSelfAttentionConfig), which has no d2l
    /// definition, defaults to `true`.
    pub bias: bool,
    /// What masked scores become (default [`Fill::Safe`]; [`Fill::D2l`] reproduces d2l).
    pub fill: Fill,
    /// Full or blocked computation of each head's attention (default
    /// [`AttentionPath::Auto`]: blocked from [`BLOCKED_FROM_KEYS`](crate::BLOCKED_FROM_KEYS)
    /// keys on, where it applies). After a blocked pass,
    /// [`last_attention_weights`](AttentionWeights::last_attention_weights) recomputes
    /// the weights from the projected queries and keys.
    pub path: AttentionPath,
}

impl MultiHeadAttentionConfig {
    /// `[query_size, key_size, value_size]`, each defaulting to `num_hiddens`.
    fn input_sizes(&self) -> [usize; 3] {
        [self.query_size, self.key_size, self.value_size]
            .map(|s| s.unwrap_or(self.num_hiddens))
    }
}

/// Multi-head scaled dot-product attention, exactly d2l's `MultiHeadAttention`: queries,
/// keys and values are projected to `num_hiddens`, split into `num_heads` heads of
/// `num_hiddens / num_heads` features, attended per head, merged, and projected by `W_o`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `mask` | see [`Mask`]: scores are `[B, Q, K]`, the same mask for every head |
/// | output | `[B, Q, num_hiddens]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, num_heads, Q, K]` |
///
/// Parameters (d2l's names): `W_q.weight: [num_hiddens, query_size]`,
/// `W_k.weight: [num_hiddens, key_size]`, `W_v.weight: [num_hiddens, value_size]`,
/// `W_o.weight: [num_hiddens, num_hiddens]`, and `W_*.bias: [num_hiddens]` when `bias`.
///
/// A new module is in training mode (dropout on, as in PyTorch); call
/// [`eval`](Module::eval) before measuring.
///
/// **Loading `torch.nn.MultiheadAttention(E, H, batch_first=True)`.** Its state dict loads
/// as it is, by its own names, with `num_hiddens: E, num_heads: H` and `bias` as given to
/// it (PyTorch's default is `bias=True`, this config's `false`):
///
/// | PyTorch's `state_dict()` key | shape | here |
/// |---|---|---|
/// | `in_proj_weight` | `[3E, E]` | `W_q.weight`, `W_k.weight`, `W_v.weight` stacked on dimension 0, in that order |
/// | `in_proj_bias` (with `bias`) | `[3E]` | `W_q.bias`, `W_k.bias`, `W_v.bias`, likewise |
/// | `out_proj.weight`, `out_proj.bias` | `[E, E]`, `[E]` | `W_o.weight`, `W_o.bias` |
///
/// With key or value sizes other than `E` (its `kdim`, `vdim`), PyTorch keeps the three
/// projections apart as `q_proj_weight`, `k_proj_weight`, `v_proj_weight`, and so are they
/// read here. [`from_state_dict`](Self::from_state_dict) and
/// [`load_state_dict`](Module::load_state_dict) read PyTorch's layout when the state holds
/// any of those names, and d2l's otherwise; a problem is named as the state names it, and
/// names of the other layout are reported as unexpected.
/// [`state_dict`](Module::state_dict) always gives d2l's names.
///
/// Its `key_padding_mask` is `True` where a key is *ignored*, the opposite of
/// [`Mask::key_padding`]: pass it to [`Mask::key_padding_ignore`]. Its returned weights are
/// averaged over heads unless `average_attn_weights=False`.
///
/// **Beside [`CausalSelfAttention`](crate::CausalSelfAttention):** with the same weights
/// (`bias: true` here), `forward(&x, &x, &x, &(Mask::causal() & pad))` gives the same numbers
/// as `CausalSelfAttention::forward(&x, &pad)`. This module folds the heads into the batch
/// and attends queries to other keys (cross-attention); that one keeps the heads as a
/// dimension and can decode token by token with a [`KvCache`](crate::KvCache).
///
/// ```
/// use attention::{Mask, MultiHeadAttention, MultiHeadAttentionConfig};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = MultiHeadAttention::new(MultiHeadAttentionConfig {
///     num_hiddens: 100,
///     num_heads: 5,
///     ..Default::default()
/// });
/// let x = Tensor::randn([2, 4, 100]);
/// let y = Tensor::randn([2, 6, 100]);
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![3.0, 2.0], [2]));
/// assert_eq!(attention.forward(&x, &y, &y, &lens).shape(), &[2, 4, 100]);
/// ```
#[derive(Debug)]
pub struct MultiHeadAttention {
    config: MultiHeadAttentionConfig,
    attention: DotProductAttention,
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    w_o: Linear,
}

impl MultiHeadAttention {
    /// A module initialised like PyTorch's `Linear` layers.
    #[track_caller]
    pub fn new(config: MultiHeadAttentionConfig) -> Self {
        let [q, k, v] = Self::check_config("MultiHeadAttention::new", &config);
        let (h, bias) = (config.num_hiddens, config.bias);
        Self::from_layers(
            [
                Linear::new(projection(q, h, bias)),
                Linear::new(projection(k, h, bias)),
                Linear::new(projection(v, h, bias)),
                Linear::new(projection(h, h, bias)),
            ],
            config,
        )
    }

    /// A module whose parameters are copies of the tensors in `state`, by the names listed
    /// above; every problem is reported at once. Loading copies, as in PyTorch: the module
    /// owns its parameters, and the state's tensors are never shared or changed.
    #[track_caller]
    pub fn from_state_dict(
        config: MultiHeadAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        Self::check_config("MultiHeadAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let layers = Self::read(&mut reader, "", &config);
        reader.finish()?;
        Ok(Self::from_layers(layers, config))
    }

    /// A module read from the names after `prefix` (`""` at the top, `"self_attn."` inside
    /// a Transformer layer), in d2l's layout or PyTorch's; every problem is recorded in
    /// `reader`, named as the state names it.
    #[track_caller]
    pub(crate) fn read_at(
        reader: &mut StateReader<'_>,
        prefix: &str,
        config: MultiHeadAttentionConfig,
    ) -> Self {
        Self::check_config("MultiHeadAttention::from_state_dict", &config);
        Self::from_layers(Self::read(reader, prefix, &config), config)
    }

    /// The four projections from a state in d2l's layout, or in PyTorch's when the state
    /// holds any of its names, each after `prefix`; `c` has been checked.
    pub(crate) fn read(
        reader: &mut StateReader<'_>,
        prefix: &str,
        c: &MultiHeadAttentionConfig,
    ) -> [Linear; 4] {
        let [q, k, v] = c.input_sizes();
        let (h, bias) = (c.num_hiddens, c.bias);
        let name = |n: &str| format!("{prefix}{n}");
        if !holds_any(reader, prefix, &TORCH_NAMES) {
            return [
                reader.linear(&name("W_q"), projection(q, h, bias)),
                reader.linear(&name("W_k"), projection(k, h, bias)),
                reader.linear(&name("W_v"), projection(v, h, bias)),
                reader.linear(&name("W_o"), projection(h, h, bias)),
            ];
        }
        // PyTorch keeps one stacked input projection when every size is the model's
        // (`_qkv_same_embed_dim`), and three apart otherwise.
        let weights = if [q, k, v] == [h; 3] {
            let stacked = reader.tensor(&name("in_proj_weight"), &[3 * h, h]);
            [0, 1, 2].map(|i| stacked.narrow(0, i * h, h))
        } else {
            [
                ("q_proj_weight", q),
                ("k_proj_weight", k),
                ("v_proj_weight", v),
            ]
            .map(|(n, size)| reader.tensor(&name(n), &[h, size]))
        };
        let biases = bias.then(|| {
            let stacked = reader.tensor(&name("in_proj_bias"), &[3 * h]);
            [0, 1, 2].map(|i| stacked.narrow(0, i * h, h))
        });
        let out = reader.linear(&name("out_proj"), projection(h, h, bias));
        let [w_q, w_k, w_v] = [0, 1, 2].map(|i| {
            Linear::from_weights(&weights[i], biases.as_ref().map(|b| &b[i]))
        });
        [w_q, w_k, w_v, out]
    }

    #[track_caller]
    fn check_config(module: &str, c: &MultiHeadAttentionConfig) -> [usize; 3] {
        check::heads_divide(module, "num_hiddens", c.num_hiddens, c.num_heads);
        let sizes = c.input_sizes();
        for (name, size) in ["query_size", "key_size", "value_size"].iter().zip(sizes)
        {
            check::positive(module, name, size);
        }
        check::probability(module, "dropout", c.dropout);
        check::fill(module, c.fill);
        sizes
    }

    #[track_caller]
    fn from_layers(layers: [Linear; 4], config: MultiHeadAttentionConfig) -> Self {
        let [w_q, w_k, w_v, w_o] = layers;
        MultiHeadAttention {
            config,
            attention: DotProductAttention::new(DotProductAttentionConfig {
                dropout: config.dropout,
                fill: config.fill,
                scale: None,
                path: config.path,
            }),
            w_q,
            w_k,
            w_v,
            w_o,
        }
    }

    /// The number of heads.
    pub fn num_heads(&self) -> usize {
        self.config.num_heads
    }

    /// `[B, T, num_hiddens] → [B·H, T, num_hiddens / H]`: head `h` of example `b` becomes
    /// batch row `b·H + h`.
    #[track_caller]
    pub fn transpose_qkv(&self, x: &Tensor) -> Tensor {
        let h = self.config.num_heads;
        assert!(
            x.rank() == 3 && x.shape()[2].is_multiple_of(h),
            "MultiHeadAttention::transpose_qkv: x must be [B, T, num_hiddens] with num_hiddens divisible by num_heads ({h}), found {:?}",
            x.shape()
        );
        let (b, t, d) = (x.shape()[0], x.shape()[1], x.shape()[2] / h);
        x.reshape([b, t, h, d])
            .permute([0, 2, 1, 3])
            .reshape([b * h, t, d])
    }

    /// The inverse of [`transpose_qkv`](Self::transpose_qkv): `[B·H, T, d] → [B, T, H·d]`.
    #[track_caller]
    pub fn transpose_output(&self, x: &Tensor) -> Tensor {
        let h = self.config.num_heads;
        assert!(
            x.rank() == 3 && x.shape()[0].is_multiple_of(h),
            "MultiHeadAttention::transpose_output: x must be [B·num_heads, T, d] with num_heads = {h}, found {:?}",
            x.shape()
        );
        let (b, t, d) = (x.shape()[0] / h, x.shape()[1], x.shape()[2]);
        x.reshape([b, h, t, d])
            .permute([0, 2, 1, 3])
            .reshape([b, t, h * d])
    }

    /// Attends every query to the keys in every head.
    #[track_caller]
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> Tensor {
        let module = "MultiHeadAttention";
        let expected = check::Expected {
            query_rank: 3,
            query_size: self.w_q.in_features(),
            key_size: self.w_k.in_features(),
            value_size: Some(self.w_v.in_features()),
        };
        check::inputs(module, queries, keys, values, expected);
        // Check the mask against the scores as the caller sees them, [B, Q, K], before the
        // heads are folded into the batch.
        mask.keep_for(
            module,
            &[queries.shape()[0], queries.shape()[1], keys.shape()[1]],
        );
        let q = self.transpose_qkv(&self.w_q.forward(queries));
        let k = self.transpose_qkv(&self.w_k.forward(keys));
        let v = self.transpose_qkv(&self.w_v.forward(values));
        let output = self.attention.forward(
            &q,
            &k,
            &v,
            &mask.repeat_for_heads(self.config.num_heads),
        );
        self.w_o.forward(&self.transpose_output(&output))
    }
}

impl Module for MultiHeadAttention {
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
        self.attention.set_training(training);
    }

    /// Copies a state in either layout (d2l's names or `nn.MultiheadAttention`'s, see the
    /// type's documentation) into the parameters; nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| {
            Self::from_layers(Self::read(reader, "", &self.config), self.config)
        })
    }
}

impl AttentionWeights for MultiHeadAttention {
    /// `[B, num_heads, Q, K]`.
    fn last_attention_weights(&self) -> Option<Tensor> {
        let w = self.attention.last_attention_weights()?;
        let h = self.config.num_heads;
        Some(w.reshape([w.shape()[0] / h, h, w.shape()[1], w.shape()[2]]))
    }
}
