//! Hybrid gated attention: additive scores in a small space and scaled dot-product scores
//! in a larger one, mixed by a learned gate before one softmax.

use engine::nn::{
    Dropout, DropoutConfig, Linear, LoadError, Module, StateDict, StateReader,
    parameter, prefixed,
};
use engine::{Activation, Tensor};

use crate::additive::{AdditiveScoring, additive_scores, no_bias, projection};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};
use crate::weights::{AttentionWeights, WeightsSlot};

/// How [`HybridGatedAttention`] weighs its two scores: `g · additive + (1 − g) · dot`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Gate {
    /// One learned number for the whole module, `g = sigmoid(gate_logit)`; the logit
    /// starts at 0, so `g` starts at ½. One parameter: the module learns which scoring
    /// suits the task, the same for every query.
    #[default]
    Scalar,
    /// One gate per query from a small layer, `g = sigmoid(gate · q + bias)`: the module
    /// can use additive scores for some queries and dot products for others, at the
    /// cost of `query_size + 1` parameters and a gate to read per query.
    PerQuery,
    /// A gate fixed at `g` in `[0, 1]`, not learned: 1 is pure additive attention, 0 pure
    /// scaled dot-product attention on the dot projections.
    Fixed(f32),
}

/// The settings of a [`HybridGatedAttention`] module.
///
/// ```
/// use attention::{Gate, HybridGatedAttentionConfig};
/// let config = HybridGatedAttentionConfig {
///     query_size: 32,
///     key_size: 16,
///     additive_hiddens: 8,
///     dot_hiddens: 64,
///     ..Default::default()
/// };
/// assert_eq!((config.gate, config.dropout), (Gate::Scalar, 0.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HybridGatedAttentionConfig {
    /// The size of each query (no default).
    pub query_size: usize,
    /// The size of each key (no default).
    pub key_size: usize,
    /// The size of the additive space, `w · tanh(W_q q + W_k k)` (no default; small).
    pub additive_hiddens: usize,
    /// The size of the dot-product space, `(W_q_dot q) · (W_k_dot k) / √size` (no
    /// default; larger).
    pub dot_hiddens: usize,
    /// How the two scores are mixed (default [`Gate::Scalar`]).
    pub gate: Gate,
    /// Dropout on the attention weights, in training mode (default 0).
    pub dropout: f32,
    /// What masked scores become (default [`Fill::Safe`]).
    pub fill: Fill,
}

/// Attention whose scores mix two scoring functions with a learned gate:
///
/// ```text
/// additive = w_v · tanh(W_q q + W_k k)                (in additive_hiddens features)
/// dot      = (W_q_dot q) · (W_k_dot k) / √dot_hiddens  (in dot_hiddens features)
/// scores   = g · additive + (1 − g) · dot
/// output   = dropout(masked_softmax(scores)) · values
/// ```
///
/// Queries and keys may have different sizes, as in additive attention. The gate `g` is
/// one learned number, one per query, or fixed ([`Gate`]); with `Gate::Fixed(1.0)` the
/// module is [`AdditiveAttention`](crate::AdditiveAttention) with the same `W_q`, `W_k`,
/// `w_v`, and with `Gate::Fixed(0.0)` it is scaled dot-product attention on the dot
/// projections.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, dv]` |
/// | `mask` | see [`Mask`]: scores are `[B, Q, K]` |
/// | output | `[B, Q, dv]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, Q, K]` |
/// | [`last_gate`](HybridGatedAttention::last_gate) | `[1]`, or `[B, Q]` per query |
///
/// Parameters (PyTorch layout, `[out, in]`): `W_q.weight: [additive_hiddens,
/// query_size]`, `W_k.weight: [additive_hiddens, key_size]`, `w_v.weight: [1,
/// additive_hiddens]` (the names of `AdditiveAttention`), `W_q_dot.weight: [dot_hiddens,
/// query_size]`, `W_k_dot.weight: [dot_hiddens, key_size]`, and the gate's: `gate_logit:
/// [1]` ([`Gate::Scalar`]) or `gate.weight: [1, query_size]`, `gate.bias: [1]`
/// ([`Gate::PerQuery`]); none for a fixed gate.
///
/// ```
/// use attention::{Gate, HybridGatedAttention, HybridGatedAttentionConfig, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = HybridGatedAttention::new(HybridGatedAttentionConfig {
///     query_size: 6,
///     key_size: 4,
///     additive_hiddens: 3,
///     dot_hiddens: 8,
///     gate: Gate::PerQuery,
///     ..Default::default()
/// });
/// let (q, k, v) = (Tensor::randn([2, 5, 6]), Tensor::randn([2, 7, 4]), Tensor::randn([2, 7, 2]));
/// assert_eq!(attention.forward(&q, &k, &v, &Mask::none()).shape(), &[2, 5, 2]);
/// assert_eq!(attention.last_gate().unwrap().shape(), &[2, 5]);
/// ```
#[derive(Debug)]
pub struct HybridGatedAttention {
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    w_q_dot: Linear,
    w_k_dot: Linear,
    gate: GateParams,
    dropout: Dropout,
    fill: Fill,
    weights: WeightsSlot,
    gate_values: WeightsSlot,
}

/// The gate's parameters.
#[derive(Debug)]
enum GateParams {
    Scalar(Tensor),
    PerQuery(Linear),
    Fixed(f32),
}

impl HybridGatedAttention {
    /// A module initialised like PyTorch's `Linear` layers, with a scalar gate's logit at
    /// 0 (`g = ½`).
    #[track_caller]
    pub fn new(config: HybridGatedAttentionConfig) -> Self {
        let c = check_config("HybridGatedAttention::new", &config);
        let gate = match config.gate {
            Gate::Scalar => GateParams::Scalar(parameter(&Tensor::zeros([1]))),
            Gate::PerQuery => {
                GateParams::PerQuery(Linear::new(projection(c.q, 1, true)))
            }
            Gate::Fixed(g) => GateParams::Fixed(g),
        };
        HybridGatedAttention {
            w_q: Linear::new(no_bias(c.q, c.ha)),
            w_k: Linear::new(no_bias(c.k, c.ha)),
            w_v: Linear::new(no_bias(c.ha, 1)),
            w_q_dot: Linear::new(no_bias(c.q, c.hd)),
            w_k_dot: Linear::new(no_bias(c.k, c.hd)),
            gate,
            dropout: Dropout::new(DropoutConfig { p: config.dropout }),
            fill: config.fill,
            weights: WeightsSlot::default(),
            gate_values: WeightsSlot::default(),
        }
    }

    /// A module whose parameters are copies of the tensors in `state`, by the names listed
    /// above; every problem is reported at once.
    #[track_caller]
    pub fn from_state_dict(
        config: HybridGatedAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        let c = check_config("HybridGatedAttention::from_state_dict", &config);
        let mut reader = StateReader::new(state);
        let module = HybridGatedAttention {
            w_q: reader.linear("W_q", no_bias(c.q, c.ha)),
            w_k: reader.linear("W_k", no_bias(c.k, c.ha)),
            w_v: reader.linear("w_v", no_bias(c.ha, 1)),
            w_q_dot: reader.linear("W_q_dot", no_bias(c.q, c.hd)),
            w_k_dot: reader.linear("W_k_dot", no_bias(c.k, c.hd)),
            gate: match config.gate {
                Gate::Scalar => GateParams::Scalar(reader.tensor("gate_logit", &[1])),
                Gate::PerQuery => GateParams::PerQuery(
                    reader.linear("gate", projection(c.q, 1, true)),
                ),
                Gate::Fixed(g) => GateParams::Fixed(g),
            },
            dropout: Dropout::new(DropoutConfig { p: config.dropout }),
            fill: config.fill,
            weights: WeightsSlot::default(),
            gate_values: WeightsSlot::default(),
        };
        reader.finish()?;
        Ok(module)
    }

    /// Attends each query to the keys with the mixed scores and returns the weighted sum
    /// of `values`.
    #[track_caller]
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> Tensor {
        let module = "HybridGatedAttention";
        let expected = check::Expected {
            query_rank: 3,
            query_size: self.w_q.in_features(),
            key_size: self.w_k.in_features(),
            value_size: None,
        };
        check::inputs(module, queries, keys, values, expected);
        let additive = additive_scores(
            &self.w_q.forward(queries),
            &self.w_k.forward(keys),
            &self.w_v.weight().squeeze(0),
            AdditiveScoring::Fused,
            Activation::Tanh,
        );
        let dot_size = self.w_q_dot.out_features() as f32;
        let dot = self
            .w_q_dot
            .forward(queries)
            .matmul_t(&self.w_k_dot.forward(keys))
            * (1.0 / dot_size.sqrt());
        // g broadcasts over the scores: [1], or [B, Q, 1] per query.
        let gate = match &self.gate {
            GateParams::Scalar(logit) => logit.sigmoid(),
            GateParams::PerQuery(layer) => layer.forward(queries).sigmoid(),
            GateParams::Fixed(g) => Tensor::from_vec(vec![*g], [1]),
        };
        let scores = &gate * &additive + (1.0 - &gate) * &dot;
        let weights = masked_softmax_in(module, &scores, mask, self.fill);
        self.weights.store(&weights);
        let kept = if gate.rank() == 3 {
            gate.squeeze(-1)
        } else {
            gate
        };
        self.gate_values.store(&kept);
        self.dropout.forward(&weights).bmm(values)
    }

    /// The gate of the last forward pass (detached): `[1]` for a scalar or fixed gate,
    /// `[B, Q]` per query; `None` before the first call. 1 means all additive, 0 all dot
    /// product.
    pub fn last_gate(&self) -> Option<Tensor> {
        self.gate_values.get()
    }
}

/// The sizes of a checked config: query, key, additive and dot sizes.
struct Sizes {
    q: usize,
    k: usize,
    ha: usize,
    hd: usize,
}

#[track_caller]
fn check_config(module: &str, c: &HybridGatedAttentionConfig) -> Sizes {
    check::positive(module, "query_size", c.query_size);
    check::positive(module, "key_size", c.key_size);
    check::positive(module, "additive_hiddens", c.additive_hiddens);
    check::positive(module, "dot_hiddens", c.dot_hiddens);
    check::probability(module, "dropout", c.dropout);
    check::fill(module, c.fill);
    if let Gate::Fixed(g) = c.gate {
        check::ensure((0.0..=1.0).contains(&g), module, || {
            format!(
                "Gate::Fixed takes a gate in [0, 1] (1: all additive, 0: all dot product), found {g}"
            )
        });
    }
    Sizes {
        q: c.query_size,
        k: c.key_size,
        ha: c.additive_hiddens,
        hd: c.dot_hiddens,
    }
}

impl Module for HybridGatedAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut params = [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            prefixed("w_v", &self.w_v),
            prefixed("W_q_dot", &self.w_q_dot),
            prefixed("W_k_dot", &self.w_k_dot),
        ]
        .concat();
        match &self.gate {
            GateParams::Scalar(logit) => {
                params.push(("gate_logit".into(), logit.clone()))
            }
            GateParams::PerQuery(layer) => params.extend(prefixed("gate", layer)),
            GateParams::Fixed(_) => {}
        }
        params
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}

impl AttentionWeights for HybridGatedAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
