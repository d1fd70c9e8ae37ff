// ANCHOR: all
//! Reference solutions to the chapter 12 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::prelude::*;
use chapter09::DecoderAttention;

// ANCHOR: self_attention_multiply_adds
/// Exercise 1. The multiply-adds of self-attention over `n` tokens of `d` features
/// (hidden size `h = d`, values of `d` features): every token is a query against all
/// `n` tokens as keys. With `projections`, `W_q` and `W_k` (`d × d` each) are applied
/// once to each token; then every query–key pair costs `d` for its score and `d` for
/// its share of the weighted sum. The same count for additive and dot-product scores.
pub fn self_attention_multiply_adds(n: u64, d: u64, projections: bool) -> u64 {
    let projected = if projections { 2 * n * d * d } else { 0 };
    projected + 2 * n * n * d
}
// ANCHOR_END: self_attention_multiply_adds

// ANCHOR: bilinear
/// Exercise 2. Luong's "general" scoring for the decoder: `score(s, hⱼ) = s · (W hⱼ)`
/// with one matrix `W: [query_size, key_size]`, so that the state and the encoder's
/// outputs may have different sizes; the weights are the masked softmax of the scores
/// and the context their weighted sum of the outputs.
#[derive(Debug)]
pub struct Bilinear {
    weight: Tensor,
}

impl Bilinear {
    /// The scoring with the given `W: [query_size, key_size]`, a fresh parameter.
    pub fn from_weight(weight: &Tensor) -> Bilinear {
        Bilinear {
            weight: engine::nn::parameter(weight),
        }
    }
}

impl Module for Bilinear {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("W".to_string(), self.weight.clone())]
    }
}

impl DecoderAttention for Bilinear {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        // W hⱼ for every output: [B, S, key_size] × [query_size, key_size]ᵀ.
        let keys = enc_outputs.matmul_t(&self.weight); //     [B, S, query_size]
        let scores = query.unsqueeze(1).matmul_t(&keys); //   [B, 1, S]
        let weights = masked_softmax(&scores, mask, Fill::Safe);
        let context = weights.matmul(enc_outputs); //         [B, 1, key_size]
        (context.squeeze(1), weights.squeeze(1))
    }
}
// ANCHOR_END: bilinear

// ANCHOR: mixed_weights
/// Exercise 3. The hybrid's weights by hand: for scores `additive` and `dot` of shape
/// `[B, K]` and a gate `g`, the softmax over the first `lens[b]` keys of each row of
/// `g · additive + (1 − g) · dot`, with 0 on the keys past the length.
pub fn mixed_weights(
    additive: &Tensor,
    dot: &Tensor,
    g: f32,
    lens: &[usize],
) -> Tensor {
    let scores = additive * g + dot * (1.0 - g);
    let k = scores.size(-1);
    let mut weights = Vec::with_capacity(scores.numel());
    for (row, &len) in scores.to_vec().chunks(k).zip(lens) {
        let largest = row[..len].iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
        let exps: Vec<f32> =
            row[..len].iter().map(|&x| (x - largest).exp()).collect();
        let sum: f32 = exps.iter().sum();
        weights.extend(exps.iter().map(|e| e / sum));
        weights.extend(std::iter::repeat_n(0.0, k - len));
    }
    Tensor::from_vec(weights, scores.shape())
}
// ANCHOR_END: mixed_weights
// ANCHOR_END: all
