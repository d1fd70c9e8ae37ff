//! Your solutions to the chapter 12 exercises. Replace each `todo!()` with your code,
//! then check it with `cargo test -p chapter12 --features exercises` (the same tests
//! the reference solutions pass). The page's "Exercises" section explains each one.

use attention::prelude::*;
use chapter09::DecoderAttention;

/// Exercise 1. The multiply-adds of self-attention over `n` tokens of `d` features
/// (hidden size `h = d`, values of `d` features): every token is a query against all
/// `n` tokens as keys. With `projections`, `W_q` and `W_k` (`d × d` each) are applied
/// once to each token; then every query–key pair costs `d` for its score and `d` for
/// its share of the weighted sum. The same count for additive and dot-product scores.
pub fn self_attention_multiply_adds(n: u64, d: u64, projections: bool) -> u64 {
    let _ = (n, d, projections);
    todo!(
        "exercise 1: the projections once per token, then n · n pairs of 2 · d each"
    )
}

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
        let _ = (&self.weight, query, enc_outputs, mask);
        todo!(
            "exercise 2: W hⱼ with matmul_t, one query [B, 1, q], masked_softmax, bmm"
        )
    }
}

/// Exercise 3. The hybrid's weights by hand: for scores `additive` and `dot` of shape
/// `[B, K]` and a gate `g`, the softmax over the first `lens[b]` keys of each row of
/// `g · additive + (1 − g) · dot`, with 0 on the keys past the length.
pub fn mixed_weights(
    additive: &Tensor,
    dot: &Tensor,
    g: f32,
    lens: &[usize],
) -> Tensor {
    let _ = (additive, dot, g, lens);
    todo!("exercise 3: mix the scores, then a softmax over each row's real keys")
}
