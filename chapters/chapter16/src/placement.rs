//! Post-norm against pre-norm in a deeper model: the gradient each layer receives at
//! initialisation, and training without warmup.

use attention::prelude::*;

use crate::corpus::{Corpus, batch};
use crate::lm::{CharLm, LmConfig};
use crate::lm_train::{LmTrainConfig, LmTrainer};
use chapter09::SplitMix64;

// ANCHOR: deep
/// The model of the comparison: eight layers of width 64, deeper than it is wide,
/// where the LayerNorm's placement matters most.
pub fn deep_model(vocab: usize, norm_first: bool) -> LmConfig {
    LmConfig {
        vocab,
        num_hiddens: 64,
        num_heads: 4,
        ffn_num_hiddens: 256,
        num_layers: 8,
        block_size: 64,
        dropout: 0.0,
        norm_first,
    }
}
// ANCHOR_END: deep

// ANCHOR: layer_norms
/// The norm of the gradient of each layer's parameters (all of them together), for
/// one batch of 16 sequences at initialisation, layer 0 first.
pub fn gradient_norms_at_init(
    corpus: &Corpus,
    config: LmConfig,
    seed: u64,
) -> Vec<f32> {
    engine::manual_seed(seed);
    let model = CharLm::new(config);
    let (x, y) = batch(
        &corpus.train,
        config.block_size,
        16,
        &mut SplitMix64::new(seed),
    );
    model.loss(&x, &y).backward();
    model
        .layers()
        .iter()
        .map(|layer| {
            let squares: f32 = layer
                .parameters()
                .iter()
                .map(|p| p.grad().expect("a gradient").square().sum().item())
                .sum();
            squares.sqrt()
        })
        .collect()
}
// ANCHOR_END: layer_norms

// ANCHOR: run
/// A run of the deep model at a constant learning rate `lr` after `warmup` steps of
/// linear warmup (0: none), clipped at 1 as every run of the book is.
pub fn placement_run(
    corpus: &Corpus,
    norm_first: bool,
    lr: f32,
    warmup: usize,
    steps: usize,
) -> LmTrainConfig {
    LmTrainConfig {
        model: deep_model(corpus.vocab.len(), norm_first),
        seed: 0,
        batch_size: 16,
        steps,
        lr,
        warmup,
        final_lr: lr,
        clip: 1.0,
        eval_every: steps,
        eval_batches: 4,
    }
}
// ANCHOR_END: run

/// Trains `config` on `corpus`; the losses of every step.
pub fn training_curve(corpus: &Corpus, config: LmTrainConfig) -> Vec<f32> {
    let mut trainer = LmTrainer::new(config, corpus.clone());
    trainer.train_until(config.steps, |_, _| {});
    trainer.history.losses
}

/// The learning rate of the comparison's runs.
pub const PLACEMENT_LR: f32 = 1e-2;
/// Steps in each run of the comparison.
pub const PLACEMENT_STEPS: usize = 300;
/// The warmup of the third run.
pub const PLACEMENT_WARMUP: usize = 100;

/// One recorded run of the comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementRun {
    /// Pre-norm or post-norm.
    pub norm_first: bool,
    /// Steps of warmup (0: none).
    pub warmup: usize,
    /// The loss of every step.
    pub losses: Vec<f32>,
}

impl PlacementRun {
    /// `post-norm` or `pre-norm`, with its warmup if any.
    pub fn label(&self) -> String {
        let name = if self.norm_first {
            "pre-norm"
        } else {
            "post-norm"
        };
        if self.warmup == 0 {
            name.to_string()
        } else {
            format!("{name}, warmup {}", self.warmup)
        }
    }

    /// The run's settings.
    pub fn config(&self, corpus: &Corpus) -> LmTrainConfig {
        placement_run(
            corpus,
            self.norm_first,
            PLACEMENT_LR,
            self.warmup,
            PLACEMENT_STEPS,
        )
    }
}

/// The comparison's three runs, as the `placement` example records them in
/// `data/placement.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementRecord {
    /// Post-norm and pre-norm without warmup, then post-norm with warmup.
    pub runs: Vec<PlacementRun>,
}

/// Where the comparison is recorded.
pub const PLACEMENT_FILE: &str = "data/placement.tsv";

impl PlacementRecord {
    /// The three runs' settings, without their losses.
    pub fn plan() -> Vec<PlacementRun> {
        [(false, 0), (true, 0), (false, PLACEMENT_WARMUP)]
            .into_iter()
            .map(|(norm_first, warmup)| PlacementRun {
                norm_first,
                warmup,
                losses: Vec::new(),
            })
            .collect()
    }

    /// Trains the three runs (about three minutes in a release build).
    pub fn train(
        corpus: &Corpus,
        mut on_run: impl FnMut(&PlacementRun),
    ) -> PlacementRecord {
        let runs = Self::plan()
            .into_iter()
            .map(|mut run| {
                run.losses = training_curve(corpus, run.config(corpus));
                on_run(&run);
                run
            })
            .collect();
        PlacementRecord { runs }
    }

    /// A header of the runs' labels, then one row per step: its number and each run's
    /// loss, tab-separated, with 9 significant digits (every f32 exactly).
    pub fn to_tsv(&self) -> String {
        let mut text = String::from("step");
        for run in &self.runs {
            text.push('\t');
            text.push_str(&run.label());
        }
        text.push('\n');
        for step in 0..self.runs[0].losses.len() {
            text.push_str(&step.to_string());
            for run in &self.runs {
                text.push_str(&format!("\t{:.8e}", run.losses[step]));
            }
            text.push('\n');
        }
        text
    }

    /// Reads what [`to_tsv`](Self::to_tsv) wrote, for the runs of [`plan`](Self::plan).
    ///
    /// # Panics
    /// When the header is not the plan's labels or a value is not a number.
    pub fn from_tsv(text: &str) -> PlacementRecord {
        let mut runs = Self::plan();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().expect("a header").split('\t').collect();
        let labels: Vec<String> = runs.iter().map(PlacementRun::label).collect();
        assert_eq!(header[1..], labels, "the runs of {PLACEMENT_FILE}");
        for line in lines {
            for (run, value) in runs.iter_mut().zip(line.split('\t').skip(1)) {
                run.losses.push(value.parse().expect("a loss"));
            }
        }
        PlacementRecord { runs }
    }

    /// The recorded comparison, `data/placement.tsv`.
    pub fn recorded() -> PlacementRecord {
        Self::from_tsv(include_str!("../data/placement.tsv"))
    }

    /// The runs' losses at a few steps, and the mean of the last 50.
    pub fn summary(&self) -> String {
        let steps = [0, 25, 50, 100, 150, 200, 250, PLACEMENT_STEPS - 1];
        let mut text = format!(
            "training loss, lr {PLACEMENT_LR}, {PLACEMENT_STEPS} steps:\n{:<24}",
            "step"
        );
        for s in steps {
            text.push_str(&format!(" {s:>5}"));
        }
        text.push_str("  last 50");
        for run in &self.runs {
            text.push_str(&format!("\n{:<24}", run.label()));
            for s in steps {
                text.push_str(&format!(" {:>5.2}", run.losses[s]));
            }
            let tail = &run.losses[run.losses.len() - 50..];
            text.push_str(&format!("  {:>7.3}", tail.iter().sum::<f32>() / 50.0));
        }
        text
    }
}
