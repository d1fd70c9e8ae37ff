//! The single-query form a sequence-to-sequence decoder uses, written out one engine
//! op at a time.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;
use engine::nn::{Linear, StateDict};

use lesson::Trace;

/// Bahdanau attention for one query per example, step by step: the same computation
/// as [`attention::BahdanauAttention`], with the shape of every intermediate tensor
/// recorded.
///
/// | argument | shape |
/// |---|---|
/// | `query` | `[B, q_size]` (the decoder's state at this step) |
/// | `keys` | `[B, K, k_size]` (the encoder's outputs) |
/// | `values` | `[B, K, dv]` |
/// | context | `[B, dv]` |
/// | weights | `[B, K]` |
#[derive(Debug)]
pub struct BahdanauByHand {
    w_q: Linear,
    w_k: Linear,
    v: Tensor,
    w_o: Linear,
}

// ANCHOR: decoder_from_state
impl BahdanauByHand {
    /// The layers, from a state with the library module's names: `W_q.weight`,
    /// `W_q.bias`, `W_k.weight`, `W_k.bias`, `v: [h]`, `W_o.weight`, `W_o.bias`.
    ///
    /// # Panics
    /// When the state lacks one of them.
    pub fn from_state_dict(state: &StateDict) -> BahdanauByHand {
        let get = |name: &str| {
            state
                .get(name)
                .unwrap_or_else(|| panic!("the state has no {name}"))
        };
        let linear = |prefix: &str| {
            let weight = get(&format!("{prefix}.weight"));
            Linear::from_weights(weight, Some(get(&format!("{prefix}.bias"))))
        };
        BahdanauByHand {
            w_q: linear("W_q"),
            w_k: linear("W_k"),
            v: get("v").clone(),
            w_o: linear("W_o"),
        }
    }
}
// ANCHOR_END: decoder_from_state

impl BahdanauByHand {
    // ANCHOR: decoder_forward
    /// One decoder step: scores the query against every key with `vᵀ tanh(W_q q + W_k
    /// k)` (both projections with a bias), pools the values with the masked softmax
    /// of the scores, projects the pooled vector with `W_o`, and returns `(context,
    /// weights)`.
    pub fn forward(
        &self,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
        trace: &mut Trace,
    ) -> (Tensor, Tensor) {
        trace.record("query", "[B, q_size]", query);
        trace.record("keys", "[B, K, k_size]", keys);
        trace.record("values", "[B, K, dv]", values);

        // 1. Project both into the hidden space; the query gets an axis for the keys.
        let q = self.w_q.forward(query).unsqueeze(1);
        trace.record("W_q(query).unsqueeze(1)", "[B, 1, h]", &q);
        let k = self.w_k.forward(keys);
        trace.record("k = W_k(keys)", "[B, K, h]", &k);

        // 2. One query: the pairs tensor is [B, K, h], with no Q axis.
        let features = (&q + &k).tanh();
        trace.record("tanh(q + k)", "[B, K, h]", &features);

        // 3. The learned score vector v: [h], as a column [h, 1].
        let scores = features.matmul(&self.v.unsqueeze(1)).squeeze(-1);
        trace.record("scores", "[B, K]", &scores);

        // 4. The masked softmax works on [B, Q, K] scores: here Q = 1.
        let weights = masked_softmax(&scores.unsqueeze(1), mask, Fill::Safe);
        trace.record("weights", "[B, 1, K]", &weights);

        // 5. Pool the values, then project the pooled vector with W_o.
        let pooled = weights.bmm(values).squeeze(1);
        trace.record("weights.bmm(values)", "[B, dv]", &pooled);
        let context = self.w_o.forward(&pooled);
        trace.record("context = W_o(pooled)", "[B, dv]", &context);
        (context, weights.squeeze(1))
    }
    // ANCHOR_END: decoder_forward
}
