//! A second solution to each chapter 9 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::prelude::*;

use crate::model::DecoderAttention;

/// Exercise 1, by hand instead of through `scaled_dot_product_attention`: the scores
/// `Q Kᵀ / √H` as a batched product, the library's masked softmax, and the context as
/// the weights times the outputs, summed over the positions.
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
        let h = query.size(-1) as f32;
        // [B, S, H] × [B, H, 1] → [B, S, 1] → [B, 1, S]
        let scores = enc_outputs.bmm(&query.unsqueeze(2)).transpose(1, 2) / h.sqrt();
        let weights = masked_softmax(&scores, mask, Fill::Safe).squeeze(1); // [B, S]
        let context = (weights.unsqueeze(2) * enc_outputs).sum_dim(1); //      [B, H]
        (context, weights)
    }
}

/// Exercise 2, the other common bookkeeping: every candidate that predicts `eos` (or
/// reaches `max_len`) is set aside as ended, the `beam` best of the others stay alive,
/// and the search stops once no live prefix can beat the best ended one (a
/// log-probability only falls as a prefix grows).
pub fn beam_search(
    step: &dyn Fn(&[usize]) -> Vec<f32>,
    beam: usize,
    eos: usize,
    max_len: usize,
) -> Vec<usize> {
    let mut alive: Vec<(Vec<usize>, f32)> = vec![(Vec::new(), 0.0)];
    let mut best: Option<(Vec<usize>, f32)> = None;
    while !alive.is_empty() {
        let mut growing: Vec<(Vec<usize>, f32)> = Vec::new();
        for (prefix, score) in &alive {
            for (token, log_p) in step(prefix).into_iter().enumerate() {
                let total = score + log_p;
                let mut sequence = prefix.clone();
                let ended = if token == eos {
                    true
                } else {
                    sequence.push(token);
                    sequence.len() == max_len
                };
                if ended {
                    if best.as_ref().is_none_or(|(_, b)| total > *b) {
                        best = Some((sequence, total));
                    }
                } else {
                    growing.push((sequence, total));
                }
            }
        }
        // A stable sort keeps the earlier candidate first on a tie.
        growing.sort_by(|a, b| b.1.total_cmp(&a.1));
        growing.truncate(beam.max(1));
        if let (Some((_, ended)), Some((_, live))) = (&best, growing.first())
            && ended >= live
        {
            break;
        }
        alive = growing;
    }
    best.map(|(sequence, _)| sequence).unwrap_or_default()
}

/// Exercise 3, with the smoothed target distribution built explicitly (a one-hot of
/// each target, times `1 − ε`, plus `ε / V`) and the mask of real tokens built on the
/// host from `lens`.
pub fn smoothed_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    lens: &Tensor,
    epsilon: f32,
) -> Tensor {
    let (b, t, v) = (logits.size(0), logits.size(1), logits.size(2));
    let classes = Tensor::arange(v).reshape([1, 1, v]);
    let one_hot = targets.unsqueeze(2).eq_mask(&classes); // [B, T, V]
    let target = one_hot * (1.0 - epsilon) + epsilon / v as f32;
    let per_token = -(target * logits.log_softmax(-1)).sum_dim(-1); // [B, T]
    let real: Vec<f32> = lens
        .to_vec()
        .iter()
        .flat_map(|&len| {
            (0..t).map(move |i| if (i as f32) < len { 1.0 } else { 0.0 })
        })
        .collect();
    let count: f32 = real.iter().sum();
    (per_token * Tensor::from_vec(real, [b, t])).sum() / count
}
