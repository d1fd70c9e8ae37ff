//! Low-rank attention (Linformer): the `n` keys and values are projected along the
//! sequence to `k` mixtures, `E K` and `F V`, and every query attends to those.

use engine::Tensor;
use engine::nn::{LoadError, Module, StateDict, StateReader, init, parameter};

use crate::check;
use crate::dot_product::attention_weights;
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::weights::{AttentionWeights, WeightsSlot};

/// Linformer attention with given projections: `softmax(Q (E K)ᵀ · scale) (F V)`, with the
/// scale `1/√d`. The projections mix the *positions*, not the features: row `r` of `E K` is
/// `Σⱼ E[r, j] · K[j]`, a weighted sum of the `n` keys, so the scores are `[B, Q, k]`
/// instead of `[B, Q, n]`, linear in `n` for a fixed `k`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, d]` (usually `Q = n`, self-attention) |
/// | `keys` | `[B, n, d]` |
/// | `values` | `[B, n, dv]` |
/// | `e` | `[k, n]`, applied to the keys |
/// | `f` | `[k, n]`, applied to the values |
/// | output | `[B, Q, dv]` |
///
/// With `k = n` and `E = F = I` it is full attention. `e` and `f` are ordinary tensors, so
/// gradients reach them when they require one; [`LowRankAttention`] holds them as learned
/// parameters. One `E` and one `F` serve every row of the batch (and every head, when the
/// heads are folded into `B`): Linformer's "headwise sharing".
///
/// ```
/// use attention::{low_rank_attention, scaled_dot_product_attention, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let (q, k, v) = (Tensor::randn([2, 6, 4]), Tensor::randn([2, 6, 4]), Tensor::randn([2, 6, 3]));
/// // k = n with identity projections: the keys and values are left as they are.
/// let eye = Tensor::ones([6, 6]).tril(0).triu(0);
/// let out = low_rank_attention(&q, &k, &v, &eye, &eye);
/// let (full, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
/// assert!((&out - &full).abs().max().item() < 1e-5);
///
/// // k = 2: every query attends to two averages of the positions.
/// let halves = Tensor::from_vec(
///     vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
///     [2, 6],
/// ) / 3.0;
/// assert_eq!(low_rank_attention(&q, &k, &v, &halves, &halves).shape(), &[2, 6, 3]);
/// ```
#[track_caller]
pub fn low_rank_attention(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    e: &Tensor,
    f: &Tensor,
) -> Tensor {
    let module = "low_rank_attention";
    check_inputs(module, queries, keys, values);
    check_projections(module, e, f, keys.shape()[1]);
    let (out, _) = attend(module, queries, keys, values, (e, f), None);
    out
}

/// Checks queries `[B, Q, d]`, keys `[B, n, d]` and values `[B, n, dv]`.
#[track_caller]
fn check_inputs(module: &str, queries: &Tensor, keys: &Tensor, values: &Tensor) {
    check::rank(module, "queries", queries, 3, "[B, Q, d]");
    let expected = check::Expected {
        query_rank: 3,
        query_size: queries.shape()[2],
        key_size: queries.shape()[2],
        value_size: None,
    };
    check::inputs(module, queries, keys, values, expected);
}

/// Checks that `e` and `f` are both `[k, n]` for `n` keys.
#[track_caller]
fn check_projections(module: &str, e: &Tensor, f: &Tensor, n: usize) {
    for (name, p) in [("e", e), ("f", f)] {
        check::ensure(p.rank() == 2 && p.shape()[1] == n, module, || {
            format!(
                "the projection {name} must have shape [k, n] = [k, {n}] for {n} keys (it mixes the n positions into k), found {:?}; hint: E is applied as E · K, the PyTorch layout of a Linear(n, k) weight",
                p.shape()
            )
        });
    }
    check::ensure(e.shape() == f.shape(), module, || {
        format!(
            "the projections e {:?} and f {:?} must have the same shape [k, n]: E K and F V are the k keys and their k values",
            e.shape(),
            f.shape()
        )
    });
}

/// `(softmax(Q (E K)ᵀ · scale) (F V), weights)` for checked arguments.
#[track_caller]
fn attend(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    (e, f): (&Tensor, &Tensor),
    scale: Option<f32>,
) -> (Tensor, Tensor) {
    // [k, n] × [B, n, d] → [B, k, d]: the batch dimension broadcasts.
    let keys = e.matmul(keys);
    let values = f.matmul(values);
    let weights = attention_weights(
        module,
        queries,
        &keys,
        &values,
        &Mask::none(),
        Fill::Safe,
        scale,
    );
    (weights.matmul(&values), weights)
}

/// The settings of a [`LowRankAttention`] module.
///
/// ```
/// use attention::LowRankAttentionConfig;
/// let config = LowRankAttentionConfig { seq_len: 512, proj_len: 64, ..Default::default() };
/// assert_eq!(config.scale, None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LowRankAttentionConfig {
    /// The longest sequence, `n`: the number of columns of `E` and `F` (no default: must
    /// be set). Linformer fixes the length when it builds the layer.
    pub seq_len: usize,
    /// The number of mixtures the keys and values are projected to, `k` (no default: must
    /// be set). Linformer's experiments keep `k` in the low hundreds while `n` grows to
    /// thousands.
    pub proj_len: usize,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
}

/// Linformer's attention as a module, with the projections `E` and `F` as learned
/// parameters: `output = softmax(Q (E K)ᵀ · scale) (F V)`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, d]` |
/// | `keys` | `[B, n, d]`, `n ≤ seq_len` |
/// | `values` | `[B, n, dv]` |
/// | output | `[B, Q, dv]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, Q, proj_len]`: over the mixtures, not the positions |
///
/// Parameters: `E` and `F`, each `[proj_len, seq_len]`. A sequence shorter than `seq_len`
/// uses the first `n` columns, which is what padding it with zeros to `seq_len` would
/// give (`E [K; 0] = E[:, ..n] K`). There is no mask: a padded key would still be mixed
/// into every projection, so zero the padding's keys and values before the call.
///
/// ```
/// use attention::{AttentionWeights, LowRankAttention, LowRankAttentionConfig};
/// use engine::nn::Module;
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let layer = LowRankAttention::new(LowRankAttentionConfig {
///     seq_len: 16,
///     proj_len: 4,
///     ..Default::default()
/// });
/// assert_eq!(layer.num_parameters(), 2 * 4 * 16); // E and F
/// let x = Tensor::randn([3, 16, 8]);
/// assert_eq!(layer.forward(&x, &x, &x).shape(), &[3, 16, 8]);
/// assert_eq!(layer.last_attention_weights().unwrap().shape(), &[3, 16, 4]);
/// ```
#[derive(Debug)]
pub struct LowRankAttention {
    e: Tensor,
    f: Tensor,
    scale: Option<f32>,
    weights: WeightsSlot,
}

impl LowRankAttention {
    /// A module whose `E` and `F` are drawn from this thread's seeded generator
    /// ([`engine::manual_seed`]) as PyTorch initialises a `Linear(seq_len, proj_len)`
    /// weight, `U(−1/√seq_len, 1/√seq_len)`: each mixture starts as a small random
    /// combination of the positions.
    #[track_caller]
    pub fn new(config: LowRankAttentionConfig) -> Self {
        Self::check_config("LowRankAttention::new", &config);
        let bound = 1.0 / (config.seq_len as f32).sqrt();
        let shape = [config.proj_len, config.seq_len];
        let e = init::uniform(shape, -bound, bound);
        let f = init::uniform(shape, -bound, bound);
        Self::from_parts(&e, &f, config)
    }

    /// A module whose `E` and `F` are copies of the tensors named `"E"` and `"F"` in
    /// `state`, each `[proj_len, seq_len]`; every problem is reported at once. The copies
    /// are the module's own parameters; the state's tensors are never shared or changed.
    #[track_caller]
    pub fn from_state_dict(
        config: LowRankAttentionConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        Self::check_config("LowRankAttention::from_state_dict", &config);
        let shape = [config.proj_len, config.seq_len];
        let mut reader = StateReader::new(state);
        let e = reader.tensor("E", &shape);
        let f = reader.tensor("F", &shape);
        reader.finish()?;
        Ok(Self::from_parts(&e, &f, config))
    }

    #[track_caller]
    fn check_config(module: &str, config: &LowRankAttentionConfig) {
        check::positive(module, "seq_len", config.seq_len);
        check::positive(module, "proj_len", config.proj_len);
        check::scale(module, config.scale);
    }

    fn from_parts(e: &Tensor, f: &Tensor, config: LowRankAttentionConfig) -> Self {
        LowRankAttention {
            e: parameter(e),
            f: parameter(f),
            scale: config.scale,
            weights: WeightsSlot::default(),
        }
    }

    /// The projection of the keys, `E`: `[proj_len, seq_len]`.
    pub fn e(&self) -> &Tensor {
        &self.e
    }

    /// The projection of the values, `F`: `[proj_len, seq_len]`.
    pub fn f(&self) -> &Tensor {
        &self.f
    }

    /// The longest sequence the module takes, `seq_len`.
    pub fn seq_len(&self) -> usize {
        self.e.shape()[1]
    }

    /// The number of mixtures, `proj_len`.
    pub fn proj_len(&self) -> usize {
        self.e.shape()[0]
    }

    /// Attends `queries` to the `proj_len` mixtures of `keys`, returning the weighted sum
    /// of the mixtures of `values`.
    #[track_caller]
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
    ) -> Tensor {
        let module = "LowRankAttention";
        check_inputs(module, queries, keys, values);
        let n = keys.shape()[1];
        check::ensure(n <= self.seq_len(), module, || {
            format!(
                "keys {:?} hold {n} positions but the projections E and F {:?} were made for at most seq_len = {}; hint: build the module with a larger seq_len, or cut the sequence",
                keys.shape(),
                self.e.shape(),
                self.seq_len()
            )
        });
        let (e, f) = if n == self.seq_len() {
            (self.e.clone(), self.f.clone())
        } else {
            (self.e.narrow(1, 0, n), self.f.narrow(1, 0, n))
        };
        let (out, weights) =
            attend(module, queries, keys, values, (&e, &f), self.scale);
        self.weights.store(&weights);
        out
    }
}

impl Module for LowRankAttention {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("E".into(), self.e.clone()), ("F".into(), self.f.clone())]
    }
}

impl AttentionWeights for LowRankAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
