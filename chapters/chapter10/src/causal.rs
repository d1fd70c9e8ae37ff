//! Pitfall 7: the causal mask forgotten in a decoder.
//!
//! A decoder-only model is trained to predict token `t + 1` from tokens `0..=t`, all
//! positions at once. Without the causal mask, position `t` can attend to position
//! `t + 1` and copy the answer: the training loss falls far below what any honest
//! model can reach, and generation, where token `t + 1` does not exist yet, collapses.
//!
//! The task makes both visible. A sequence is [`HALF`] random tokens followed by the
//! same tokens again. The first half is unpredictable (a causal model can do no better
//! than `ln(VOCAB − 1)` there); the second half is a copy, which a causal model learns
//! to read from [`HALF`] positions back. [`Run`] records the training loss, the loss
//! on a held-out batch, and the share of tokens right when the second half is
//! generated token by token from the first.

use attention::{Mask, MultiHeadAttention, MultiHeadAttentionConfig};
use engine::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig, Module};
use engine::optim::{Adam, AdamConfig, Optimizer};
use engine::{Reduction, Tensor, no_grad};

/// Token ids `1..VOCAB` are drawn; id 0 is never used, so the chance level of a guess
/// is `1 / (VOCAB − 1)`.
pub const VOCAB: usize = 9;
/// The length of the random half; a sequence is twice as long.
pub const HALF: usize = 6;
/// The positions the model reads: a sequence without its last token.
pub const INPUT_LEN: usize = 2 * HALF - 1;
/// The model width.
pub const WIDTH: usize = 32;
/// Sequences per training step.
pub const BATCH: usize = 32;
/// Sequences in the held-out batch.
pub const HELD_OUT: usize = 64;

/// The id after `id` in `1..VOCAB`, `VOCAB − 1` wrapping round to 1.
pub fn successor(id: f32) -> f32 {
    id % (VOCAB as f32 - 1.0) + 1.0
}

/// `batch` sequences of `2 · HALF` tokens, `[batch, 2 · HALF]`: `HALF` random ids in
/// `1..VOCAB`, then the same ids again. Drawn from this thread's seeded generator.
pub fn draw(batch: usize) -> Tensor {
    let first: Vec<f32> = Tensor::rand([batch, HALF], 1.0, VOCAB as f32)
        .to_vec()
        .iter()
        .map(|f| f.floor().min(VOCAB as f32 - 1.0))
        .collect();
    let second: Vec<f32> = first.iter().map(|&x| successor(x)).collect();
    let first = Tensor::from_vec(first, [batch, HALF]);
    let second = Tensor::from_vec(second, [batch, HALF]);
    Tensor::concat(&[&first, &second], 1)
}

// ANCHOR: decoder
/// A one-layer decoder: token and position embeddings, one head of self-attention, a
/// linear read-out to the vocabulary. `causal` says whether the attention gets the
/// causal mask; `false` is the bug.
pub struct Decoder {
    tokens: Embedding,
    positions: Embedding,
    attention: MultiHeadAttention,
    out: Linear,
    /// Whether the self-attention is masked in causal order.
    pub causal: bool,
}

impl Decoder {
    /// A decoder with fresh parameters from this thread's seeded generator.
    pub fn new(causal: bool) -> Decoder {
        let embedding = |n| {
            Embedding::new(EmbeddingConfig {
                num_embeddings: n,
                embedding_dim: WIDTH,
            })
        };
        Decoder {
            tokens: embedding(VOCAB),
            positions: embedding(INPUT_LEN),
            attention: MultiHeadAttention::new(MultiHeadAttentionConfig {
                num_hiddens: WIDTH,
                num_heads: 1,
                ..Default::default()
            }),
            out: Linear::new(LinearConfig {
                in_features: WIDTH,
                out_features: VOCAB,
                ..Default::default()
            }),
            causal,
        }
    }

    /// The logits `[B, T, VOCAB]` of ids `[B, T]`: position `t`'s guess at token
    /// `t + 1`.
    pub fn forward(&self, ids: &Tensor) -> Tensor {
        let t = ids.size(1);
        let at = Tensor::arange(t).unsqueeze(0); //               [1, T]
        let x = self.tokens.forward(ids) + self.positions.forward(&at); // [B, T, d]
        let mask = if self.causal {
            Mask::causal() // the fix: position t sees 0..=t
        } else {
            Mask::none() //   the bug: position t sees t + 1 too
        };
        let y = self.attention.forward(&x, &x, &x, &mask);
        self.out.forward(&y) //                                         [B, T, V]
    }

    /// Every parameter, for the optimizer.
    pub fn parameters(&self) -> Vec<Tensor> {
        let mut params = self.tokens.parameters();
        params.extend(self.positions.parameters());
        params.extend(self.attention.parameters());
        params.extend(self.out.parameters());
        params
    }
}
// ANCHOR_END: decoder

/// The mean cross-entropy of predicting `sequences[:, 1..]` from `sequences[:, ..-1]`,
/// every position at once (teacher forcing).
pub fn loss(model: &Decoder, sequences: &Tensor) -> Tensor {
    let inputs = sequences.narrow(1, 0, INPUT_LEN);
    let targets = sequences.narrow(1, 1, INPUT_LEN);
    model
        .forward(&inputs)
        .cross_entropy(&targets, Reduction::Mean)
}

/// The mean loss of the predictions within the random half and of those of the
/// successor half, on `sequences`.
pub fn halves(model: &Decoder, sequences: &Tensor) -> [f32; 2] {
    no_grad(|| {
        let inputs = sequences.narrow(1, 0, INPUT_LEN);
        let targets = sequences.narrow(1, 1, INPUT_LEN);
        let each = model
            .forward(&inputs)
            .cross_entropy(&targets, Reduction::None); //     [B, INPUT_LEN]
        [
            each.narrow(1, 0, HALF - 1).mean().item(),
            each.narrow(1, HALF - 1, HALF).mean().item(),
        ]
    })
}

// ANCHOR: generate
/// Generates the second half of each sequence from its first half, one token at a
/// time, each chosen greedily from the last position's logits; returns the share of
/// generated tokens equal to the first half's (the right copy).
pub fn generation_accuracy(model: &Decoder, sequences: &Tensor) -> f32 {
    no_grad(|| {
        let mut ids = sequences.narrow(1, 0, HALF); //   the prompt: [B, HALF]
        for _ in 0..HALF {
            let t = ids.size(1);
            let next = model.forward(&ids).narrow(1, t - 1, 1).argmax(-1); // [B, 1]
            ids = Tensor::concat(&[&ids, &next], 1);
        }
        let generated = ids.narrow(1, HALF, HALF);
        let right = generated.eq_mask(&sequences.narrow(1, HALF, HALF));
        right.mean().item()
    })
}
// ANCHOR_END: generate

// ANCHOR: leak_check
/// The test that catches the forgotten mask: changing the token at each position `j`
/// must leave the logits of every position before `j` exactly as they were. Returns
/// the positions whose logits changed when a later token did, as `(earlier, changed)`
/// pairs; empty for a causal model.
pub fn future_leaks(model: &Decoder, ids: &Tensor) -> Vec<(usize, usize)> {
    no_grad(|| {
        let before = model.forward(ids);
        let t = ids.size(1);
        let mut leaks = Vec::new();
        let original = ids.to_vec();
        for j in 1..t {
            // Replace token j by the next id (VOCAB − 1 wraps round to 1) in every
            // example at once.
            let mut changed = original.clone();
            for row in changed.chunks_mut(t) {
                row[j] = successor(row[j]);
            }
            let after = model.forward(&Tensor::from_vec(changed, ids.shape()));
            for i in 0..j {
                let a = before.narrow(1, i, 1).to_vec();
                let b = after.narrow(1, i, 1).to_vec();
                if a != b {
                    leaks.push((i, j));
                }
            }
        }
        leaks
    })
}
// ANCHOR_END: leak_check

/// What a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The training loss at each step.
    pub losses: Vec<f32>,
    /// The held-out loss of the predictions of the random half (positions
    /// `0..HALF − 1`, which predict tokens `1..HALF`) and of the successor half (the
    /// rest).
    pub held_out_halves: [f32; 2],
    /// The share of second-half tokens right when generated from the first half.
    pub generation: f32,
    /// How many (earlier, changed) position pairs of the held-out batch leak.
    pub leaks: usize,
}

impl Run {
    /// The mean training loss of the last `n` steps.
    pub fn final_loss(&self, n: usize) -> f32 {
        let tail = &self.losses[self.losses.len() - n..];
        tail.iter().sum::<f32>() / n as f32
    }
}

// ANCHOR: train
/// Trains a decoder with or without the causal mask for `steps` Adam steps from
/// `seed`, and measures it.
pub fn train(causal: bool, steps: usize, seed: u64) -> Run {
    engine::manual_seed(seed);
    let held_out = draw(HELD_OUT);
    let model = Decoder::new(causal);
    let mut opt = Adam::new(
        model.parameters(),
        AdamConfig {
            lr: 0.01,
            ..Default::default()
        },
    );
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let loss = loss(&model, &draw(BATCH));
        losses.push(loss.item());
        loss.backward();
        opt.step();
        opt.zero_grad();
    }
    Run {
        losses,
        held_out_halves: halves(&model, &held_out),
        generation: generation_accuracy(&model, &held_out),
        leaks: future_leaks(&model, &held_out.narrow(1, 0, INPUT_LEN)).len(),
    }
}
// ANCHOR_END: train

/// The seeds the table trains from.
pub const SEEDS: [u64; 3] = [1, 2, 3];
/// The Adam steps of each run.
pub const STEPS: usize = 300;

/// The table of pitfall 7: the decoder trained with and without the causal mask from
/// each of [`SEEDS`], [`STEPS`] steps each. Every number is the engine's, the same
/// bits on every CPU, so `--check` can compare it with `data/causal.txt`.
pub fn table() -> String {
    use std::fmt::Write;
    let mut out = String::new();
    writeln!(
        out,
        "== 7. the causal mask forgotten: a one-layer decoder, {STEPS} Adam steps"
    )
    .unwrap();
    writeln!(
        out,
        "{:<17} {:>4} {:>9} {:>20} {:>10} {:>8}",
        "", "", "training", "held-out loss", "generated", "leaking"
    )
    .unwrap();
    writeln!(
        out,
        "{:<17} {:>4} {:>9} {:>9} {:>10} {:>10} {:>8}",
        "", "seed", "loss", "random", "successor", "right", "pairs"
    )
    .unwrap();
    for (name, causal) in [("causal mask", true), ("no mask (the bug)", false)] {
        for seed in SEEDS {
            let run = train(causal, STEPS, seed);
            writeln!(
                out,
                "{name:<17} {seed:>4} {:>9.4} {:>9.4} {:>10.4} {:>10.3} {:>8}",
                run.final_loss(20),
                run.held_out_halves[0],
                run.held_out_halves[1],
                run.generation,
                run.leaks
            )
            .unwrap();
        }
    }
    let footer = format!(
        "the lowest loss on the random half without seeing the future: ln {} = {:.4}; \
         a guess is right {:.3} of the time. Training loss: the mean of the last 20 \
         steps, over both halves; leaking pairs: of the {} pairs i < j of positions, \
         those whose output at i changed when token j did.",
        VOCAB - 1,
        ((VOCAB - 1) as f32).ln(),
        1.0 / (VOCAB - 1) as f32,
        INPUT_LEN * (INPUT_LEN - 1) / 2
    );
    writeln!(out, "{}", lesson::wrap(&footer, lesson::COLUMNS)).unwrap();
    out
}
