//! The scorings the chapter compares, each as the attention of chapter 9's decoder:
//! the decoder's state `[B, H]` is one query per example, the encoder's outputs
//! `[B, S, H]` are the keys and the values.

use attention::prelude::*;
use chapter09::{DecoderAttention, Seq2Seq, Seq2SeqConfig};
use engine::nn::prefixed;

/// The size of the additive space of [`Scoring::Hybrid`], small as the article's
/// hybrid has it.
pub const HYBRID_ADDITIVE_HIDDENS: usize = 16;

/// The number of heads of [`Scoring::MultiHead`].
pub const NUM_HEADS: usize = 4;

/// Mixed into a run's seed to draw the attention's weights apart from the rest of the
/// model's (see [`Scoring::model`]).
pub const ATTENTION_SEED: u64 = 0xA77E_4710;

// ANCHOR: projected_dot
/// Dot-product attention on projections of the state and of the encoder's outputs:
/// `score(s, hⱼ) = (W_q s) · (W_k hⱼ) · scale`, with `scale` 1 (unscaled) or `1/√d`
/// (scaled). The projections make it comparable with additive attention, which has
/// its own `W_q` and `W_k`; the parameter-free form of chapter 9 is `W_q = W_k = I`.
#[derive(Debug)]
pub struct ProjectedDotProduct {
    w_q: Linear,
    w_k: Linear,
    attention: DotProductAttention,
}

impl ProjectedDotProduct {
    /// Projections from `query_size` and `key_size` features to `d`, and the scores
    /// multiplied by `scale` (`None`: `1/√d`).
    pub fn new(
        query_size: usize,
        key_size: usize,
        d: usize,
        scale: Option<f32>,
    ) -> ProjectedDotProduct {
        let projection = |from| LinearConfig {
            in_features: from,
            out_features: d,
            bias: false,
        };
        ProjectedDotProduct {
            w_q: Linear::new(projection(query_size)),
            w_k: Linear::new(projection(key_size)),
            attention: DotProductAttention::new(DotProductAttentionConfig {
                scale,
                ..Default::default()
            }),
        }
    }
}

impl DecoderAttention for ProjectedDotProduct {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let q = self.w_q.forward(&query.unsqueeze(1)); // [B, 1, d]
        let k = self.w_k.forward(enc_outputs); //         [B, S, d]
        let context = self.attention.forward(&q, &k, enc_outputs, mask); // [B, 1, H]
        let weights = self.attention.last_attention_weights().expect("just set");
        (context.squeeze(1), weights.squeeze(1))
    }
}
// ANCHOR_END: projected_dot

impl Module for ProjectedDotProduct {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [prefixed("W_q", &self.w_q), prefixed("W_k", &self.w_k)].concat()
    }

    fn set_training(&mut self, training: bool) {
        self.attention.set_training(training);
    }
}

// ANCHOR: multi_head
/// d2l's multi-head attention with the state as its one query: each head scores
/// projections of `H / heads` features, and `W_o` mixes the heads' contexts. The
/// weights the decoder reports are the mean over the heads.
#[derive(Debug)]
pub struct MultiHead(pub MultiHeadAttention);

impl DecoderAttention for MultiHead {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let q = query.unsqueeze(1); //                                  [B, 1, H]
        let context = self.0.forward(&q, enc_outputs, enc_outputs, mask); // [B, 1, H]
        // [B, heads, 1, S]
        let weights = self.0.last_attention_weights().expect("just set");
        (context.squeeze(1), weights.mean_dim(1).squeeze(1))
    }
}
// ANCHOR_END: multi_head

impl Module for MultiHead {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        self.0.list_parameters()
    }

    fn set_training(&mut self, training: bool) {
        self.0.set_training(training);
    }
}

// ANCHOR: hybrid
/// The attention library's [`HybridGatedAttention`] with the state as its one query:
/// additive scores in a small space, scaled dot products in a larger one, mixed by
/// the gate `g` before one softmax.
#[derive(Debug)]
pub struct Hybrid(pub HybridGatedAttention);

impl DecoderAttention for Hybrid {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let q = query.unsqueeze(1);
        let context = self.0.forward(&q, enc_outputs, enc_outputs, mask);
        let weights = self.0.last_attention_weights().expect("just set");
        (context.squeeze(1), weights.squeeze(1))
    }
}
// ANCHOR_END: hybrid

impl Module for Hybrid {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        self.0.list_parameters()
    }

    fn set_training(&mut self, training: bool) {
        self.0.set_training(training);
    }
}

impl Hybrid {
    /// The gate `g` now ([`gate_value`]).
    pub fn gate(&self) -> Option<f32> {
        gate_value(&self.0)
    }
}

/// The gate `g` of a hybrid module now: the sigmoid of its learned logit for
/// [`Gate::Scalar`] (1: all additive, 0: all dot product), the fixed value of
/// [`Gate::Fixed`] once the module has run; `None` for a gate per query, which has no
/// single value.
pub fn gate_value(module: &HybridGatedAttention) -> Option<f32> {
    let parameters = module.list_parameters();
    let named = |n: &str| parameters.iter().find(|(name, _)| name == n);
    match (named("gate_logit"), named("gate.weight")) {
        (Some((_, logit)), _) => Some(no_grad(|| logit.sigmoid().item())),
        (None, Some(_)) => None,
        (None, None) => module.last_gate().map(|g| g.item()),
    }
}

// ANCHOR: scoring
/// The five scorings of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// `w · tanh(W_q s + W_k hⱼ)`, `h = H` (chapters 5 and 9).
    Additive,
    /// `(W_q s) · (W_k hⱼ)`, `d = H`, not scaled.
    DotProduct,
    /// `(W_q s) · (W_k hⱼ) / √d`, `d = H` (chapter 6).
    ScaledDotProduct,
    /// [`NUM_HEADS`] heads of `H / NUM_HEADS` features, then `W_o` (chapter 7).
    MultiHead,
    /// Additive in [`HYBRID_ADDITIVE_HIDDENS`] features, scaled dot product in `H`,
    /// one learned gate.
    Hybrid,
}

impl Scoring {
    /// Every scoring, in the order of the chapter's tables.
    pub const ALL: [Scoring; 5] = [
        Scoring::Additive,
        Scoring::DotProduct,
        Scoring::ScaledDotProduct,
        Scoring::MultiHead,
        Scoring::Hybrid,
    ];

    /// The name the tables and figures give it.
    pub fn name(self) -> &'static str {
        match self {
            Scoring::Additive => "additive",
            Scoring::DotProduct => "dot product",
            Scoring::ScaledDotProduct => "scaled dot product",
            Scoring::MultiHead => "multi-head",
            Scoring::Hybrid => "hybrid gated",
        }
    }

    /// The decoder attention of this scoring for queries of `query_size` features
    /// and keys of `key_size`, with the model size `h` (the projections' size, and
    /// the size of the output of multi-head attention); its parameters are drawn
    /// from the engine's generator.
    pub fn attention(self, query_size: usize, key_size: usize, h: usize) -> Scorer {
        let (q, k) = (query_size, key_size);
        match self {
            Scoring::Additive => {
                Scorer::Additive(AdditiveAttention::new(AdditiveAttentionConfig {
                    query_size: q,
                    key_size: k,
                    num_hiddens: h,
                    ..Default::default()
                }))
            }
            Scoring::DotProduct => {
                Scorer::DotProduct(ProjectedDotProduct::new(q, k, h, Some(1.0)))
            }
            Scoring::ScaledDotProduct => {
                Scorer::DotProduct(ProjectedDotProduct::new(q, k, h, None))
            }
            Scoring::MultiHead => Scorer::MultiHead(MultiHead(
                MultiHeadAttention::new(MultiHeadAttentionConfig {
                    num_hiddens: h,
                    num_heads: NUM_HEADS,
                    query_size: Some(q),
                    key_size: Some(k),
                    value_size: Some(k),
                    ..Default::default()
                }),
            )),
            Scoring::Hybrid => Scorer::Hybrid(Hybrid(HybridGatedAttention::new(
                HybridGatedAttentionConfig {
                    query_size: q,
                    key_size: k,
                    additive_hiddens: HYBRID_ADDITIVE_HIDDENS,
                    dot_hiddens: h,
                    gate: Gate::Scalar,
                    ..Default::default()
                },
            ))),
        }
    }

    /// Chapter 9's model with this scoring in its decoder, every weight drawn from
    /// `seed`: the attention's from a generator of its own (seeded with `seed` and
    /// a constant), then the encoder's and the rest of the decoder's from `seed`
    /// itself, so that one seed starts every scoring from the same encoder and
    /// decoder.
    pub fn model(self, config: Seq2SeqConfig, seed: u64) -> Seq2Seq<Scorer> {
        let h = config.num_hiddens;
        engine::manual_seed(seed ^ ATTENTION_SEED);
        let attention = self.attention(h, h, h);
        engine::manual_seed(seed);
        Seq2Seq::new(config, attention)
    }
}
// ANCHOR_END: scoring

impl Scoring {
    /// The key of the recorded data (`data/compare.tsv`).
    pub fn key(self) -> &'static str {
        match self {
            Scoring::Additive => "additive",
            Scoring::DotProduct => "dot-product",
            Scoring::ScaledDotProduct => "scaled-dot-product",
            Scoring::MultiHead => "multi-head",
            Scoring::Hybrid => "hybrid",
        }
    }

    /// The scoring whose [`key`](Scoring::key) is `key`.
    pub fn from_key(key: &str) -> Option<Scoring> {
        Scoring::ALL.into_iter().find(|s| s.key() == key)
    }
}

/// Any of the scorings, so that one training loop runs them all: each call goes to
/// the module inside.
#[derive(Debug)]
pub enum Scorer {
    /// [`Scoring::Additive`]: chapter 9's `impl DecoderAttention for
    /// AdditiveAttention`.
    Additive(AdditiveAttention),
    /// [`Scoring::DotProduct`] or [`Scoring::ScaledDotProduct`].
    DotProduct(ProjectedDotProduct),
    /// [`Scoring::MultiHead`].
    MultiHead(MultiHead),
    /// [`Scoring::Hybrid`].
    Hybrid(Hybrid),
}

impl Scorer {
    /// The module inside, as the decoder's attention.
    fn inner(&self) -> &dyn DecoderAttention {
        match self {
            Scorer::Additive(a) => a,
            Scorer::DotProduct(a) => a,
            Scorer::MultiHead(a) => a,
            Scorer::Hybrid(a) => a,
        }
    }

    /// The module inside, to switch its training mode.
    fn inner_mut(&mut self) -> &mut dyn DecoderAttention {
        match self {
            Scorer::Additive(a) => a,
            Scorer::DotProduct(a) => a,
            Scorer::MultiHead(a) => a,
            Scorer::Hybrid(a) => a,
        }
    }

    /// The hybrid's gate now ([`Hybrid::gate`]); `None` for the other scorings.
    pub fn gate(&self) -> Option<f32> {
        match self {
            Scorer::Hybrid(h) => h.gate(),
            _ => None,
        }
    }
}

impl DecoderAttention for Scorer {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        self.inner().attend(query, enc_outputs, mask)
    }
}

impl Module for Scorer {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        self.inner().list_parameters()
    }

    fn set_training(&mut self, training: bool) {
        self.inner_mut().set_training(training);
    }
}
