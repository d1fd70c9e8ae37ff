//! The first article's multi-head additive attention beside d2l's multi-head scaled
//! dot-product attention on the same inputs; their parameter counts against formulas;
//! and the number of heads against the size of each head, with the model width fixed.

use attention::prelude::*;

/// The sizes both multi-head modules are built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The size of a query.
    pub query_size: usize,
    /// The size of a key.
    pub key_size: usize,
    /// The size of a value.
    pub value_size: usize,
    /// The total hidden size `n`, shared out among the heads.
    pub num_hiddens: usize,
    /// The number of heads `H`; each gets `n / H` hidden features.
    pub num_heads: usize,
}

// ANCHOR: parameter_formulas
/// The parameters of d2l's `MultiHeadAttention`, by hand: `W_q`, `W_k` and `W_v`
/// project to `n` features (`q·n + k·n + v·n`), `W_o` is `n × n`, and each of the
/// four has `n` biases when `bias` is set. The number of heads does not appear: heads
/// are slices of the same four matrices.
pub fn scaled_parameter_formula(s: Sizes, bias: bool) -> usize {
    let n = s.num_hiddens;
    let biases = if bias { 4 * n } else { 0 };
    (s.query_size + s.key_size + s.value_size) * n + n * n + biases
}

/// The parameters of the first article's `MultiHeadAdditiveAttention`, by hand: every
/// head `i` has its own `W_q` (`q·h + h`), `W_k` (`k·h + h`), score vector `v` (`h`)
/// and output projection `W_o` (`v·v + v`), with `h = n / H`; the concatenated
/// contexts, `H·v` features, are projected back to `v` (`H·v·v + v`).
pub fn additive_parameter_formula(s: Sizes) -> usize {
    let (q, k, v) = (s.query_size, s.key_size, s.value_size);
    let h = s.num_hiddens / s.num_heads;
    let per_head = (q * h + h) + (k * h + h) + h + (v * v + v);
    s.num_heads * per_head + (s.num_heads * v * v + v)
}
// ANCHOR_END: parameter_formulas

/// What [`SideBySide::run`] returns: both modules' outputs and weights.
#[derive(Clone, Debug)]
pub struct BothForms {
    /// d2l's output, `[B, 1, num_hiddens]`.
    pub scaled_output: Tensor,
    /// d2l's weights, `[B, H, 1, K]`.
    pub scaled_weights: Tensor,
    /// The additive context, `[B, value_size]`.
    pub additive_output: Tensor,
    /// The additive weights, `[B, H, K]`.
    pub additive_weights: Tensor,
}

// ANCHOR: side_by_side
/// Both multi-head modules, built with the same sizes and run on the same inputs: one
/// query per example (a decoder step), `K` keys and values, and valid lengths.
#[derive(Debug)]
pub struct SideBySide {
    /// d2l's multi-head scaled dot-product attention.
    pub scaled: MultiHeadAttention,
    /// The first article's multi-head additive attention.
    pub additive: MultiHeadAdditiveAttention,
}

impl SideBySide {
    /// Seeded modules of the given sizes (d2l's without biases, as d2l builds it).
    pub fn new(s: Sizes) -> SideBySide {
        manual_seed(7);
        let mut scaled = MultiHeadAttention::new(MultiHeadAttentionConfig {
            num_hiddens: s.num_hiddens,
            num_heads: s.num_heads,
            query_size: Some(s.query_size),
            key_size: Some(s.key_size),
            value_size: Some(s.value_size),
            ..Default::default()
        });
        scaled.eval();
        let additive =
            MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
                query_size: s.query_size,
                key_size: s.key_size,
                value_size: s.value_size,
                num_hiddens: s.num_hiddens,
                num_heads: s.num_heads,
                ..Default::default()
            });
        SideBySide { scaled, additive }
    }

    /// Runs both on `query: [B, query_size]`, `keys: [B, K, key_size]`, `values: [B,
    /// K, value_size]` and one valid length per example. d2l's module takes queries
    /// `[B, Q, query_size]`, so the query gains an axis of size 1.
    pub fn run(
        &self,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        lens: &Tensor,
    ) -> BothForms {
        let mask = Mask::valid_lens(lens);
        let scaled_output =
            self.scaled
                .forward(&query.unsqueeze(1), keys, values, &mask);
        let scaled_weights =
            self.scaled.last_attention_weights().expect("ran forward");
        let (additive_output, additive_weights) =
            self.additive.forward(query, keys, values, &mask);
        BothForms {
            scaled_output,
            scaled_weights,
            additive_output,
            additive_weights,
        }
    }
}
// ANCHOR_END: side_by_side

/// One row of [`head_count_study`]: the same model width cut into `num_heads` heads.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadCountRow {
    /// `H`.
    pub num_heads: usize,
    /// `d = num_hiddens / H`.
    pub head_size: usize,
    /// The parameters of d2l's module, counted by `num_parameters()`.
    pub scaled_parameters: usize,
    /// The parameters of the additive module of the same sizes, counted.
    pub additive_parameters: usize,
    /// How many attention weights one forward pass makes: `B·H·Q·K`.
    pub weights: usize,
    /// The multiply-adds of `Q Kᵀ` over all heads: `B·H·Q·K·d`.
    pub score_multiply_adds: usize,
    /// The largest difference between this module's output and the one-head module's,
    /// both with the *same* parameter values.
    pub difference_from_one_head: f32,
}

// ANCHOR: head_count_study
/// d2l's multi-head attention of width `num_hiddens` cut into each of `heads`, all
/// with the same parameter values (those of a seeded one-head module, loaded by
/// name), on the same self-attention input `[batch, tokens, num_hiddens]`.
pub fn head_count_study(
    batch: usize,
    tokens: usize,
    num_hiddens: usize,
    heads: &[usize],
) -> Vec<HeadCountRow> {
    manual_seed(12);
    let x = Tensor::randn([batch, tokens, num_hiddens]);
    let config = |num_heads| MultiHeadAttentionConfig {
        num_hiddens,
        num_heads,
        ..Default::default()
    };
    let one_head = MultiHeadAttention::new(config(1));
    let reference = one_head.forward(&x, &x, &x, &Mask::none());
    let state = one_head.state_dict();
    heads
        .iter()
        .map(|&num_heads| {
            let mha = MultiHeadAttention::from_state_dict(config(num_heads), &state)
                .expect("same sizes, same names");
            let output = mha.forward(&x, &x, &x, &Mask::none());
            let weights = mha.last_attention_weights().expect("ran forward");
            let head_size = num_hiddens / num_heads;
            let additive =
                MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
                    query_size: num_hiddens,
                    key_size: num_hiddens,
                    value_size: num_hiddens,
                    num_hiddens,
                    num_heads,
                    ..Default::default()
                });
            HeadCountRow {
                num_heads,
                head_size,
                scaled_parameters: mha.num_parameters(),
                additive_parameters: additive.num_parameters(),
                weights: weights.numel(),
                score_multiply_adds: weights.numel() * head_size,
                difference_from_one_head: largest_difference(&output, &reference),
            }
        })
        .collect()
}
// ANCHOR_END: head_count_study

/// The largest absolute difference between two tensors of the same shape.
///
/// # Panics
/// When the shapes differ.
pub fn largest_difference(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape(), "largest_difference: shapes differ");
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
