//! The additive decoder's cache: the keys' projection `W_k k` depends on the source
//! sentence only, not on the decoding step, so greedy decoding can compute it once per
//! sentence and reuse it at every step, with the mask of the valid lengths.

use attention::prelude::*;

use crate::data::{Batch, Vocab};
use crate::decode::Translation;
use crate::model::{Decoder, Seq2Seq, Seq2SeqConfig};

/// The three weights of an [`AdditiveAttention`] module, read by name from its
/// parameters (the module keeps its layers private): `W_q.weight: [h, H]`,
/// `W_k.weight: [h, H]` and `w_v.weight: [1, h]`.
fn weights(attention: &AdditiveAttention) -> [Tensor; 3] {
    let parameters = attention.list_parameters();
    let find = |name: &str| {
        parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| panic!("AdditiveAttention has a parameter {name}"))
    };
    [find("W_q.weight"), find("W_k.weight"), find("w_v.weight")]
}

// ANCHOR: cache
/// What additive attention needs from the source, computed once per batch of source
/// sentences: the projected keys `W_k k: [B, S, h]`, the values (the encoder's
/// outputs `[B, S, H]`) and the mask of the valid lengths.
#[derive(Clone, Debug)]
pub struct AdditiveCache {
    /// `W_k k`: the encoder's outputs projected into the attention's hidden space,
    /// `[B, S, h]`.
    pub keys: Tensor,
    /// The encoder's outputs, `[B, S, H]`: the values.
    pub values: Tensor,
    /// [`Mask::valid_lens`] of the source lengths.
    pub mask: Mask,
}

impl AdditiveCache {
    /// Projects the keys once: `enc_outputs · W_kᵀ`, the product
    /// [`AdditiveAttention`] computes at every call.
    pub fn new(
        attention: &AdditiveAttention,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> AdditiveCache {
        let [_, w_k, _] = weights(attention);
        AdditiveCache {
            keys: enc_outputs.matmul_t(&w_k), // [B, S, H] · [h, H]ᵀ → [B, S, h]
            values: enc_outputs.clone(),
            mask: mask.clone(),
        }
    }
}

/// One step of additive attention against keys already projected: the context
/// `[B, H]` and the weights `[B, S]`, both in the graph (the module's
/// `last_attention_weights` are detached; a penalty on the weights needs them
/// attached). The same ops, in the same order, as [`AdditiveAttention::forward`]
/// with its defaults (fused scores, `tanh`, the safe fill, no dropout), so the same
/// bits.
pub fn attend_projected(
    attention: &AdditiveAttention,
    query: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    mask: &Mask,
) -> (Tensor, Tensor) {
    let [w_q, _, w_v] = weights(attention);
    let query = query.unsqueeze(1).matmul_t(&w_q); // [B, 1, h]
    let scores = query.additive_scores_with(keys, &w_v.squeeze(0), Activation::Tanh);
    let weights = masked_softmax(&scores, mask, Fill::Safe); // [B, 1, S]
    let context = weights.bmm(values); // [B, 1, H]
    (context.squeeze(1), weights.squeeze(1))
}

/// One decoder step that reads the cache instead of projecting the keys again: the
/// next state `[B, H]` and the attention weights `[B, S]`, as [`Decoder::step`].
pub fn cached_step(
    decoder: &Decoder<AdditiveAttention>,
    cache: &AdditiveCache,
    ids: &Tensor,
    state: &Tensor,
) -> (Tensor, Tensor) {
    let (context, weights) = attend_projected(
        decoder.attention(),
        state,
        &cache.keys,
        &cache.values,
        &cache.mask,
    );
    let embedded = decoder.embedding().forward(ids); //           [B, E]
    let input = Tensor::concat(&[&context, &embedded], -1); // [B, H + E]
    (decoder.rnn().forward(&input, state), weights)
}
// ANCHOR_END: cache

// ANCHOR: cached_greedy
/// [`greedy_decode`](crate::greedy_decode) with the keys projected once per batch
/// ([`AdditiveCache`]) instead of at every step. The same tokens and the same
/// weights, bit for bit.
pub fn cached_greedy_decode(
    model: &Seq2Seq<AdditiveAttention>,
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
        // Once per batch: W_k k and the mask, for every step below.
        let cache =
            AdditiveCache::new(model.decoder.attention(), &enc_outputs, &mask);
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
            let (next, weights) = cached_step(&model.decoder, &cache, &input, &state);
            state = next;
            let best_ids = model.decoder.logits(&state).argmax(-1); // [B]
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
                    done[i] = true;
                } else {
                    out[i].weights.push(row);
                    out[i].ids.push(best[i]);
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
            input = best_ids;
        }
        out
    })
}
// ANCHOR_END: cached_greedy

// ANCHOR: step_cost
/// The multiply-adds of one decoding step for one sentence of `s` source tokens
/// (with `<eos>`), op by op, counted by hand from the sizes: a product of a vector of
/// `n` by an `[m, n]` matrix is `m·n` multiply-adds. `h = H` in this chapter's model.
///
/// | op | multiply-adds |
/// |---|---|
/// | `W_k k`, every key (the cache removes it) | `s·h·H` |
/// | `W_q q` | `h·H` |
/// | scores `w_v · tanh(q̃ + k̃)` | `s·h` |
/// | context `Σ a·v` | `s·H` |
/// | GRU cell, input `[H + E]` and state `[H]` | `3H·(H + E) + 3H·H` |
/// | output layer | `V·H` |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepCost {
    /// `W_k k` for the `s` keys: the part the cache saves.
    pub keys: usize,
    /// Everything else of the step.
    pub rest: usize,
}

impl StepCost {
    /// The cost of one step of `config`'s model over `s` source tokens.
    pub fn of(config: &Seq2SeqConfig, s: usize) -> StepCost {
        let (e, h, v) = (config.embed_size, config.num_hiddens, config.tgt_vocab);
        let attention_h = h; // Seq2Seq::additive: num_hiddens = H
        StepCost {
            keys: s * attention_h * h,
            rest: attention_h * h
                + s * attention_h
                + s * h
                + 3 * h * (h + e)
                + 3 * h * h
                + v * h,
        }
    }

    /// Recomputing the keys at every step.
    pub fn recomputed(&self) -> usize {
        self.keys + self.rest
    }

    /// With the cache.
    pub fn cached(&self) -> usize {
        self.rest
    }
}
// ANCHOR_END: step_cost
