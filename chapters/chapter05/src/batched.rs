//! The batched form, d2l's `AdditiveAttention`, written out one engine op at a time.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;
use engine::nn::{Linear, StateDict};

use lesson::Trace;

/// d2l's additive attention, step by step: the same computation as
/// [`attention::AdditiveAttention`] (without dropout), with the shape of every
/// intermediate tensor recorded.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, q_size]` |
/// | `keys` | `[B, K, k_size]` |
/// | `values` | `[B, K, dv]` |
/// | output | `[B, Q, dv]` |
/// | weights | `[B, Q, K]` |
#[derive(Debug)]
pub struct AdditiveByHand {
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
}

// ANCHOR: batched_from_state
impl AdditiveByHand {
    /// The three bias-free projections, taken from a state with the library module's
    /// names: `W_q.weight: [h, q_size]`, `W_k.weight: [h, k_size]`, `w_v.weight: [1,
    /// h]`.
    ///
    /// # Panics
    /// When the state lacks one of them.
    pub fn from_state_dict(state: &StateDict) -> AdditiveByHand {
        let weight = |name: &str| {
            let w = state.get(name);
            Linear::from_weights(
                w.unwrap_or_else(|| panic!("the state has no {name}")),
                None,
            )
        };
        AdditiveByHand {
            w_q: weight("W_q.weight"),
            w_k: weight("W_k.weight"),
            w_v: weight("w_v.weight"),
        }
    }
}
// ANCHOR_END: batched_from_state

impl AdditiveByHand {
    // ANCHOR: batched_forward
    /// Scores every query against every key with `w_vᵀ tanh(W_q q + W_k k)`, turns
    /// the scores into weights with a masked softmax, and returns `(output,
    /// weights)`.
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
        trace: &mut Trace,
    ) -> (Tensor, Tensor) {
        trace.record("queries", "[B, Q, q_size]", queries);
        trace.record("keys", "[B, K, k_size]", keys);
        trace.record("values", "[B, K, dv]", values);

        // 1. Project queries and keys into one hidden space of size h: after this
        //    their original sizes no longer matter.
        let q = self.w_q.forward(queries);
        trace.record("q = W_q(queries)", "[B, Q, h]", &q);
        let k = self.w_k.forward(keys);
        trace.record("k = W_k(keys)", "[B, K, h]", &k);

        // 2. Give each a size-1 axis where the other has its count, so that
        //    broadcasting pairs every query with every key.
        let q = q.unsqueeze(2);
        trace.record("q.unsqueeze(2)", "[B, Q, 1, h]", &q);
        let k = k.unsqueeze(1);
        trace.record("k.unsqueeze(1)", "[B, 1, K, h]", &k);

        // 3. The sum for every (query, key) pair, through tanh: the [B, Q, K, h]
        //    tensor.
        let features = (&q + &k).tanh();
        trace.record("tanh(q + k)", "[B, Q, K, h]", &features);

        // 4. The score vector w_v turns each h-vector into one number.
        let scores = self.w_v.forward(&features);
        trace.record("w_v(features)", "[B, Q, K, 1]", &scores);
        let scores = scores.squeeze(-1);
        trace.record("scores", "[B, Q, K]", &scores);

        // 5. Weights over the keys: masked keys get exactly 0, each row sums to 1.
        let weights = masked_softmax(&scores, mask, Fill::Safe);
        trace.record("weights", "[B, Q, K]", &weights);

        // 6. Each query's weighted average of the values.
        let output = weights.bmm(values);
        trace.record("weights.bmm(values)", "[B, Q, dv]", &output);
        (output, weights)
    }
    // ANCHOR_END: batched_forward
}
