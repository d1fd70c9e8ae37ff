//! Your solutions to the chapter 9 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter09 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use attention::prelude::*;

use crate::model::DecoderAttention;

/// Exercise 1. Scaled dot-product attention for the decoder, in place of additive
/// attention: the scores are `q · kⱼ / √H` for the state `q: [B, H]` and each encoder
/// output `kⱼ`, masked by `mask`, and the context is the weighted sum of the outputs.
/// It has no parameters.
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
        let _ = (query, enc_outputs, mask);
        todo!(
            "exercise 1: one query per example, [B, 1, H], through scaled_dot_product_attention"
        )
    }
}

/// Exercise 2. Beam search: keep the `beam` most probable prefixes at each step, where
/// `step(prefix)` gives the log-probabilities of the next token (one per vocabulary
/// entry). A prefix ends when it predicts `eos` or holds `max_len` tokens. Returns the
/// ended sequence (without `eos`) of the highest total log-probability.
pub fn beam_search(
    step: &dyn Fn(&[usize]) -> Vec<f32>,
    beam: usize,
    eos: usize,
    max_len: usize,
) -> Vec<usize> {
    let _ = (step, beam, eos, max_len);
    todo!(
        "exercise 2: extend every kept prefix by every token, keep the best `beam`, set aside the ended ones"
    )
}

/// Exercise 3. The masked cross-entropy with label smoothing: the target of each real
/// token is `(1 − epsilon)` on the right class plus `epsilon / V` on every class, so the
/// loss of a token is `−(1 − ε) ln p_target − (ε / V) Σ_v ln p_v`, averaged over the real
/// tokens (`t < lens[b]`) of `logits: [B, T, V]`, `targets: [B, T]`.
pub fn smoothed_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    lens: &Tensor,
    epsilon: f32,
) -> Tensor {
    let _ = (logits, targets, lens, epsilon);
    todo!(
        "exercise 3: log_softmax, pick the target's entry, add the mean over classes, mask, average"
    )
}
