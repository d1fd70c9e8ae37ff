// ANCHOR: all
//! Reference solutions to the chapter 9 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::prelude::*;

use crate::model::DecoderAttention;

// ANCHOR: scaled_dot_product
/// Exercise 1. Scaled dot-product attention for the decoder, in place of additive
/// attention: the scores are `q · kⱼ / √H` for the state `q: [B, H]` and each encoder
/// output `kⱼ`, masked by `mask`, and the context is the weighted sum of the outputs.
/// It has no parameters: the encoder and the decoder must learn states whose dot
/// products align, where additive attention learns `W_q`, `W_k` and `w_v` to do it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledDotProduct;

impl Module for ScaledDotProduct {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }
}

impl DecoderAttention for ScaledDotProduct {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        // [B, 1, H] against [B, S, H]: scores [B, 1, S], context [B, 1, H].
        let (context, weights) = scaled_dot_product_attention(
            &query.unsqueeze(1),
            enc_outputs,
            enc_outputs,
            mask,
        );
        (context.squeeze(1), weights.squeeze(1))
    }
}
// ANCHOR_END: scaled_dot_product

// ANCHOR: beam_search
/// Exercise 2. Beam search: keep the `beam` most probable prefixes at each step,
/// where `step(prefix)` gives the log-probabilities of the next token (one per
/// vocabulary entry). A prefix ends when it predicts `eos` or holds `max_len` tokens.
/// Returns the ended sequence (without `eos`) of the highest total log-probability.
pub fn beam_search(
    step: &dyn Fn(&[usize]) -> Vec<f32>,
    beam: usize,
    eos: usize,
    max_len: usize,
) -> Vec<usize> {
    let mut alive: Vec<(Vec<usize>, f32)> = vec![(Vec::new(), 0.0)];
    let mut ended: Vec<(Vec<usize>, f32)> = Vec::new();
    while !alive.is_empty() {
        let mut candidates = Vec::new();
        for (prefix, score) in &alive {
            for (token, log_p) in step(prefix).into_iter().enumerate() {
                let mut next = prefix.clone();
                next.push(token);
                candidates.push((next, score + log_p));
            }
        }
        // The best first; ties keep the earlier (smaller) token.
        candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
        candidates.truncate(beam.max(1));
        alive.clear();
        for (mut seq, score) in candidates {
            if seq.last() == Some(&eos) {
                seq.pop();
                ended.push((seq, score));
            } else if seq.len() == max_len {
                ended.push((seq, score));
            } else {
                alive.push((seq, score));
            }
        }
    }
    ended
        .into_iter()
        .fold((Vec::new(), f32::NEG_INFINITY), |best, c| {
            if c.1 > best.1 { c } else { best }
        })
        .0
}
// ANCHOR_END: beam_search

// ANCHOR: smoothed_cross_entropy
/// Exercise 3. The masked cross-entropy with label smoothing: the target of each real
/// token is `(1 − epsilon)` on the right class plus `epsilon / V` on every class, so
/// the loss of a token is `−(1 − ε) ln p_target − (ε / V) Σ_v ln p_v`, averaged over
/// the real tokens (`t < lens[b]`) of `logits: [B, T, V]`, `targets: [B, T]`.
pub fn smoothed_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    lens: &Tensor,
    epsilon: f32,
) -> Tensor {
    let (b, t) = (targets.size(0), targets.size(1));
    let log_p = logits.log_softmax(-1); // [B, T, V]
    // [B, T]: −ln p_target
    let nll = logits.cross_entropy(targets, Reduction::None);
    // [B, T]: −(1/V) Σ ln p_v
    let uniform = -log_p.mean_dim(-1);
    let per_token = nll * (1.0 - epsilon) + uniform * epsilon;
    let keep = Mask::valid_lens(lens)
        .keep_for("smoothed_cross_entropy", &[b, 1, t])
        .expect("a valid-lengths mask")
        .reshape([b, t]);
    (per_token * &keep).sum() / keep.sum()
}
// ANCHOR_END: smoothed_cross_entropy
// ANCHOR_END: all
