//! A second solution to each chapter 12 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::prelude::*;
use chapter09::DecoderAttention;

/// Exercise 1, counted per token: each token pays `2d²` for its projections (when there
/// are any), then as a query `n` pairs of `d + d`.
pub fn self_attention_multiply_adds(n: u64, d: u64, projections: bool) -> u64 {
    let per_token_projections = if projections { d * d + d * d } else { 0 };
    let per_query_pairs = n * (d + d);
    n * (per_token_projections + per_query_pairs)
}

/// Exercise 2, with `W` applied to the state instead of the outputs:
/// `s · (W h) = (sᵀ W) · h`, so one `[B, key_size]` product serves every output.
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
        let sw = query.matmul(&self.weight); // [B, key_size]
        // [B, S, key_size] × [B, key_size, 1] → [B, S, 1] → [B, 1, S]
        let scores = enc_outputs.bmm(&sw.unsqueeze(2)).transpose(1, 2);
        let weights = masked_softmax(&scores, mask, Fill::Safe).squeeze(1); // [B, S]
        let context = (weights.unsqueeze(2) * enc_outputs).sum_dim(1); //      [B, key_size]
        (context, weights)
    }
}

/// Exercise 3, with tensor ops: the mixed scores `dot + g · (additive − dot)` through
/// the library's masked softmax under a valid-lengths mask.
pub fn mixed_weights(
    additive: &Tensor,
    dot: &Tensor,
    g: f32,
    lens: &[usize],
) -> Tensor {
    let scores = dot + (additive - dot) * g; // [B, K]
    let lens =
        Tensor::from_vec(lens.iter().map(|&l| l as f32).collect(), [lens.len()]);
    masked_softmax(&scores.unsqueeze(1), &Mask::valid_lens(&lens), Fill::Safe)
        .squeeze(1)
}
