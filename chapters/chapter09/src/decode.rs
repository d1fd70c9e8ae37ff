//! Greedy decoding, exact-match accuracy, and the alignment a decoding attended
//! along.

use attention::prelude::*;

use crate::data::{Batch, Vocab};
use crate::model::{DecoderAttention, Seq2Seq};

/// One decoded example.
#[derive(Clone, Debug, PartialEq)]
pub struct Translation {
    /// The number that was given, in words.
    pub number: u32,
    /// The predicted target ids, up to and without `<eos>`.
    pub ids: Vec<usize>,
    /// The attention weights of each decoding step over the source tokens (with
    /// `<eos>`): one row per predicted token, plus one for the step that predicted
    /// `<eos>` (none if decoding stopped at the length limit).
    pub weights: Vec<Vec<f32>>,
}

impl Translation {
    /// The predicted digits as a string (`"342"`).
    pub fn text(&self, tgt_vocab: &Vocab) -> String {
        tgt_vocab.decode(&self.ids, "")
    }

    /// The source position each step attended to most, in order.
    pub fn focus(&self) -> Vec<usize> {
        self.weights
            .iter()
            .map(|row| {
                Tensor::from_vec(row.clone(), [row.len()]).argmax(0).item() as usize
            })
            .collect()
    }

    /// True when the alignment never moves back: each step's most attended source
    /// position is at or after the previous step's. A diagonal-like alignment is
    /// monotonic.
    pub fn is_monotonic(&self) -> bool {
        self.focus().windows(2).all(|w| w[0] <= w[1])
    }

    /// True when the prediction is the number's digits exactly.
    pub fn is_exact(&self, tgt_vocab: &Vocab) -> bool {
        self.text(tgt_vocab) == self.number.to_string()
    }
}

// ANCHOR: greedy
/// Greedy decoding of a batch of numbers: each step feeds the most likely token of
/// the previous step back in, starting from `<bos>`, until every example has produced
/// `<eos>` or `max_len` tokens. Runs without building a graph.
pub fn greedy_decode<A: DecoderAttention>(
    model: &Seq2Seq<A>,
    numbers: &[u32],
    src_vocab: &Vocab,
    tgt_vocab: &Vocab,
    max_len: usize,
) -> Vec<Translation> {
    let batch = Batch::new(numbers, src_vocab, tgt_vocab);
    let b = batch.len();
    no_grad(|| {
        let (enc_outputs, mut state) =
            model.encoder.forward(&batch.src, &batch.src_lens);
        let mask = Mask::valid_lens(&batch.src_lens);
        let lens: Vec<usize> = batch
            .src_lens
            .to_vec()
            .iter()
            .map(|&l| l as usize)
            .collect();
        let mut input = Tensor::full([b], Vocab::BOS_ID as f32);
        let mut out: Vec<Translation> = numbers
            .iter()
            .map(|&number| Translation {
                number,
                ids: Vec::new(),
                weights: Vec::new(),
            })
            .collect();
        let mut done = vec![false; b];
        for _ in 0..=max_len {
            let (next, weights) =
                model.decoder.step(&input, &state, &enc_outputs, &mask);
            state = next;
            let logits = model.decoder.logits(&state); // [B, V]
            let best_ids = logits.argmax(-1); // [B], as torch.argmax(logits, dim=-1)
            let best: Vec<usize> =
                best_ids.to_vec().iter().map(|&i| i as usize).collect();
            let weights = weights.to_vec(); // [B, S]
            let s = weights.len() / b;
            for i in 0..b {
                if done[i] {
                    continue;
                }
                let row = weights[i * s..i * s + lens[i]].to_vec();
                if best[i] == Vocab::EOS_ID {
                    out[i].weights.push(row);
                    done[i] = true;
                } else if out[i].ids.len() == max_len {
                    done[i] = true; // the length limit: no <eos> was predicted
                } else {
                    out[i].weights.push(row);
                    out[i].ids.push(best[i]);
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
            // Ids are f32 tensors, so the choice is the next input as it is.
            input = best_ids;
        }
        out
    })
}
// ANCHOR_END: greedy

// ANCHOR: accuracy
/// The fraction of `numbers` whose greedy decoding is exactly right, decoded in
/// batches of `batch_size`, with the translations.
pub fn exact_match<A: DecoderAttention>(
    model: &Seq2Seq<A>,
    numbers: &[u32],
    src_vocab: &Vocab,
    tgt_vocab: &Vocab,
    batch_size: usize,
) -> (f32, Vec<Translation>) {
    let mut all = Vec::with_capacity(numbers.len());
    for chunk in numbers.chunks(batch_size.max(1)) {
        // A number below one million has at most 6 digits; allow one more.
        all.extend(greedy_decode(model, chunk, src_vocab, tgt_vocab, 7));
    }
    let right = all.iter().filter(|t| t.is_exact(tgt_vocab)).count();
    (right as f32 / numbers.len().max(1) as f32, all)
}
// ANCHOR_END: accuracy
