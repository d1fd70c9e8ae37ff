//! The comparison: every scoring trained on chapter 9's task from the same seeds,
//! with the same budget and schedule, and what each run is measured by.
//!
//! Everything here but the two timings of a [`Run`] is computed by the engine, whose
//! results are the same bits on every CPU and thread count, so a run gives the same
//! losses, accuracies, gates and bytes on every machine.

use std::collections::HashMap;
use std::time::Instant;

use attention::prelude::*;
use chapter09::{
    Batch, EVAL_BATCH, Seq2Seq, TrainConfig, Trainer, Vocab, exact_match,
    masked_cross_entropy,
};

use crate::scorings::{Scorer, Scoring};

// ANCHOR: budget
/// The seeds every scoring is trained from.
pub const SEEDS: [u64; 3] = [1, 2, 3];

/// Optimizer steps per run.
pub const STEPS: usize = 400;

/// The held-out set is scored every this many steps.
pub const EVAL_EVERY: usize = 100;

/// The settings of every run: chapter 9's run (its data, its model of `E = 32` and
/// `H = 64`, batches of 64, Adam at 5e-3 falling to 5e-4 along a half cosine,
/// clipping at 1), shortened to [`STEPS`] steps with a warmup of 50.
pub fn train_config(seed: u64) -> TrainConfig {
    TrainConfig {
        seed,
        steps: STEPS,
        warmup: 50,
        ..TrainConfig::chapter()
    }
}
// ANCHOR_END: budget

/// How many held-out numbers the hybrid's reading decodes under teacher forcing.
pub const READING_NUMBERS: usize = 256;

/// One training run of one scoring from one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The scoring.
    pub scoring: Scoring,
    /// The seed of the split, the batch order and the weights.
    pub seed: u64,
    /// The attention's parameters.
    pub attention_parameters: usize,
    /// The whole model's parameters.
    pub model_parameters: usize,
    /// The loss of every step.
    pub losses: Vec<f32>,
    /// `(steps taken, held-out exact match)` every [`EVAL_EVERY`] steps.
    pub held_out: Vec<(usize, f32)>,
    /// The hybrid's gate before training and after every step (empty for the other
    /// scorings).
    pub gates: Vec<f32>,
    /// The tokens the last evaluation decoded (digits and `<eos>`).
    pub decoded_tokens: usize,
    /// For the hybrid, what decides its trained weights; `None` for the others.
    pub reading: Option<Reading>,
    /// Wall seconds of the training steps (evaluations left out): one machine's,
    /// never compared.
    pub train_seconds: f64,
    /// Wall seconds of greedy decoding of the held-out set by the trained model, the
    /// fastest of three: one machine's, never compared.
    pub decode_seconds: f64,
}

impl Run {
    /// The held-out exact match at the end.
    pub fn accuracy(&self) -> f32 {
        self.held_out.last().map_or(0.0, |&(_, a)| a)
    }
}

/// Trains `scoring` from `seed` with [`train_config`], scoring the held-out set every
/// [`EVAL_EVERY`] steps; times the training steps, and the greedy decoding of the
/// held-out set by the trained model (the fastest of three).
pub fn run(scoring: Scoring, seed: u64) -> Run {
    // ANCHOR: run
    let config = train_config(seed);
    let mut trainer = Trainer::new(config, |c| scoring.model(c, seed));
    let gate = |t: &Trainer<Scorer>| t.model.decoder.attention().gate();
    let mut gates: Vec<f32> = gate(&trainer).into_iter().collect();
    let (mut train_seconds, mut decode_seconds, mut decoded_tokens) = (0.0, 0.0, 0);
    while trainer.step < config.steps {
        let start = Instant::now();
        trainer.train_step();
        train_seconds += start.elapsed().as_secs_f64();
        gates.extend(gate(&trainer));
        if trainer.step % EVAL_EVERY == 0 || trainer.step == config.steps {
            let start = Instant::now();
            let (_, translations) = trainer.evaluate();
            decode_seconds = start.elapsed().as_secs_f64();
            decoded_tokens = translations.iter().map(|t| t.weights.len()).sum();
        }
    }
    // Two more decodings of the held-out set, timed: the fastest of the three is the
    // least disturbed by other programs.
    for _ in 0..2 {
        let start = Instant::now();
        exact_match(
            &trainer.model,
            &trainer.split.held_out,
            &trainer.src_vocab,
            &trainer.tgt_vocab,
            EVAL_BATCH,
        );
        decode_seconds = decode_seconds.min(start.elapsed().as_secs_f64());
    }
    // ANCHOR_END: run
    let reading = match trainer.model.decoder.attention() {
        Scorer::Hybrid(_) => Some(reading(&trainer.model, &trainer.split.held_out)),
        _ => None,
    };
    Run {
        scoring,
        seed,
        attention_parameters: trainer.model.decoder.attention().num_parameters(),
        model_parameters: trainer.model.num_parameters(),
        losses: trainer.history.losses,
        held_out: trainer.history.held_out,
        gates,
        decoded_tokens,
        reading,
        train_seconds,
        decode_seconds,
    }
}

// ANCHOR: peak
/// The peak bytes the engine counts for one training step of `scoring`'s model on the
/// first batch of seed 1's run (forward, masked loss, backward), above what was live
/// before: the same batch for every scoring.
pub fn training_step_peak_bytes(scoring: Scoring) -> usize {
    let config = train_config(SEEDS[0]);
    let mut trainer = Trainer::new(config, |c| scoring.model(c, SEEDS[0]));
    let numbers = trainer.batch_numbers(0);
    let batch = Batch::new(&numbers, &trainer.src_vocab, &trainer.tgt_vocab);
    engine::memory::reset_peak();
    let before = engine::memory::live_bytes();
    let logits = trainer
        .model
        .forward(&batch.src, &batch.src_lens, &batch.dec_input);
    masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens).backward();
    engine::memory::peak_bytes() - before
}
// ANCHOR_END: peak

// ANCHOR: branch_scores
/// The hybrid's two scores for a batch of decoder states `query: [B, H]` against
/// `keys: [B, S, H]`, computed from its parameters as the module computes them
/// inside: `additive = w_v · tanh(W_q s + W_k hⱼ)` and `dot = (W_q_dot s) ·
/// (W_k_dot hⱼ) / √dot_hiddens`, both `[B, 1, S]`. The module's weights are the
/// masked softmax of `g · additive + (1 − g) · dot`.
pub fn branch_scores(
    module: &HybridGatedAttention,
    query: &Tensor,
    keys: &Tensor,
) -> (Tensor, Tensor) {
    let p: HashMap<String, Tensor> = module.list_parameters().into_iter().collect();
    let q = query.unsqueeze(1); // [B, 1, H]
    let additive = q.matmul_t(&p["W_q.weight"]).additive_scores(
        &keys.matmul_t(&p["W_k.weight"]),
        &p["w_v.weight"].squeeze(0),
    );
    let w_q_dot = &p["W_q_dot.weight"];
    let scale = 1.0 / (w_q_dot.size(0) as f32).sqrt();
    let dot = q
        .matmul_t(w_q_dot)
        .matmul_t(&keys.matmul_t(&p["W_k_dot.weight"]))
        * scale;
    (additive, dot)
}
// ANCHOR_END: branch_scores

/// What decides a trained hybrid's weights, over every decoding step of
/// [`READING_NUMBERS`] held-out numbers under teacher forcing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// The gate at the end of training.
    pub gate: f32,
    /// The mean, over queries, of the standard deviation over the real keys of
    /// `g · additive`: how much the additive branch moves the scores.
    pub additive_spread: f32,
    /// The same for `(1 − g) · dot`.
    pub dot_spread: f32,
    /// The share of queries whose most attended key is the additive branch's own top
    /// key.
    pub top_additive: f32,
    /// The share of queries whose most attended key is the dot branch's own top key.
    pub top_dot: f32,
}

// ANCHOR: reading
/// Reads a trained hybrid: runs the decoder under teacher forcing on the first
/// [`READING_NUMBERS`] of `held_out` and, at every step of every real target token,
/// splits the scores into `g · additive` and `(1 − g) · dot` ([`branch_scores`]).
///
/// # Panics
/// When the model's attention is not [`Scoring::Hybrid`].
pub fn reading(model: &Seq2Seq<Scorer>, held_out: &[u32]) -> Reading {
    let Scorer::Hybrid(hybrid) = model.decoder.attention() else {
        panic!("reading: the model's attention is not the hybrid");
    };
    let numbers = &held_out[..READING_NUMBERS.min(held_out.len())];
    let batch = Batch::new(numbers, &Vocab::source(), &Vocab::target());
    let lens: Vec<usize> = batch
        .src_lens
        .to_vec()
        .iter()
        .map(|&l| l as usize)
        .collect();
    let tgt_lens = batch.tgt_lens.to_vec();
    let g = hybrid.gate().expect("a scalar gate");
    let mut sums = Sums::default();
    no_grad(|| {
        let (enc_outputs, mut state) =
            model.encoder.forward(&batch.src, &batch.src_lens);
        let mask = Mask::valid_lens(&batch.src_lens);
        for t in 0..batch.dec_input.size(1) {
            let (additive, dot) = branch_scores(&hybrid.0, &state, &enc_outputs);
            let (a, d) = ((additive * g).to_vec(), (dot * (1.0 - g)).to_vec());
            let s = a.len() / numbers.len();
            for (b, &len) in lens.iter().enumerate() {
                if t < tgt_lens[b] as usize {
                    let row = b * s..b * s + len;
                    sums.add(&a[row.clone()], &d[row]);
                }
            }
            let ids = batch.dec_input.narrow(1, t, 1).squeeze(1);
            (state, _) = model.decoder.step(&ids, &state, &enc_outputs, &mask);
        }
    });
    sums.reading(g)
}
// ANCHOR_END: reading

/// Running sums of a [`Reading`].
#[derive(Default)]
struct Sums {
    rows: usize,
    additive_spread: f64,
    dot_spread: f64,
    top_additive: usize,
    top_dot: usize,
}

impl Sums {
    /// Adds one query's two contributions over its real keys.
    fn add(&mut self, a: &[f32], d: &[f32]) {
        let mixed: Vec<f32> = a.iter().zip(d).map(|(x, y)| x + y).collect();
        let top = argmax(&mixed);
        self.rows += 1;
        self.additive_spread += std(a);
        self.dot_spread += std(d);
        self.top_additive += usize::from(argmax(a) == top);
        self.top_dot += usize::from(argmax(d) == top);
    }

    fn reading(&self, gate: f32) -> Reading {
        let n = self.rows.max(1) as f64;
        Reading {
            gate,
            additive_spread: (self.additive_spread / n) as f32,
            dot_spread: (self.dot_spread / n) as f32,
            top_additive: (self.top_additive as f64 / n) as f32,
            top_dot: (self.top_dot as f64 / n) as f32,
        }
    }
}

/// The index of the largest value (the first of equal ones).
fn argmax(x: &[f32]) -> usize {
    (0..x.len()).fold(0, |best, i| if x[i] > x[best] { i } else { best })
}

/// The population standard deviation, in `f64`.
fn std(x: &[f32]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
    let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    var.sqrt()
}
