//! The comparison: chapter 9's model trained in each [`Mode`] from the same seed
//! with the same budget, and the vanished gradients counted along the f32 run.
//!
//! Everything here but the timing of a [`Run`] is computed by the engine, whose
//! results are the same bits on every CPU and thread count.

use std::time::Instant;

use chapter09::TrainConfig;

use crate::training::{MixedTrainer, Mode, SMALL_LOSS};
use crate::underflow::{self, LayerCount};

// ANCHOR: budget
/// The seed of the split, the batch order and the weights of every run.
pub const SEED: u64 = 1;

/// Optimizer steps per run.
pub const STEPS: usize = 400;

/// The held-out set is scored, and the f32 run's gradients counted, every this many
/// steps.
pub const EVAL_EVERY: usize = 100;

/// Chapter 9's run (its data, its model of `E = 32` and `H = 64`, batches of 64,
/// Adam at 5e-3 falling to 5e-4, clipping at 1), shortened to [`STEPS`] steps with
/// a warmup of 50: chapter 12's budget.
pub fn train_config() -> TrainConfig {
    TrainConfig {
        seed: SEED,
        steps: STEPS,
        warmup: 50,
        ..TrainConfig::chapter()
    }
}
// ANCHOR_END: budget

// ANCHOR: settings
/// What a comparison trains: its length, how often it scores, and the factor its
/// gradients are shrunk by ([`MixedTrainer::with_loss_factor`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// The stem of its files in `data/` (`compare` → `compare.tsv`, `compare.txt`).
    pub file: &'static str,
    /// Optimizer steps per run.
    pub steps: usize,
    /// The held-out set is scored, and the f32 run's gradients counted, every this
    /// many steps.
    pub eval_every: usize,
    /// What the loss, Adam's `ε` and the clipping norm are multiplied by.
    pub loss_factor: f32,
}

/// Section 6's first comparison: chapter 9's run as it is.
pub const CHAPTER9: Setting = Setting {
    file: "compare",
    steps: STEPS,
    eval_every: EVAL_EVERY,
    loss_factor: 1.0,
};

/// Section 6's second comparison: the same model, data and seed with every gradient
/// [`SMALL_LOSS`] times as large, over 200 steps.
pub const SMALL: Setting = Setting {
    file: "small",
    steps: 200,
    eval_every: 50,
    loss_factor: SMALL_LOSS,
};
// ANCHOR_END: settings

impl Setting {
    /// [`train_config`] with this setting's length (the clipping norm is scaled by
    /// the trainer, [`MixedTrainer::with_loss_factor`]).
    pub fn config(&self) -> TrainConfig {
        TrainConfig {
            steps: self.steps,
            ..train_config()
        }
    }
}

/// One run in one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The mode.
    pub mode: Mode,
    /// The loss of every step.
    pub losses: Vec<f32>,
    /// `(steps taken, held-out exact match)` every [`EVAL_EVERY`] steps.
    pub held_out: Vec<(usize, f32)>,
    /// The loss scale of every step.
    pub scales: Vec<f32>,
    /// The steps the scaler skipped.
    pub skipped: Vec<usize>,
    /// Wall seconds of the training steps: one machine's, never compared.
    pub train_seconds: f64,
}

impl Run {
    /// The held-out exact match at the end.
    pub fn accuracy(&self) -> f32 {
        self.held_out.last().map_or(0.0, |&(_, a)| a)
    }
}

/// Trains chapter 9's model in `mode` with [`train_config`]. For the f32 run, also
/// counts the vanished gradients ([`underflow::count`]) every [`EVAL_EVERY`] steps,
/// before the step (and once more after the last), on the run's own weights and
/// batch.
pub fn run(mode: Mode) -> (Run, Vec<(usize, Vec<LayerCount>)>) {
    run_in(&CHAPTER9, mode)
}

/// [`run`] in `setting`: its length, its scoring interval and its gradients' factor
/// (in the counts too, [`underflow::count_at`]).
pub fn run_in(setting: &Setting, mode: Mode) -> (Run, Vec<(usize, Vec<LayerCount>)>) {
    let config = setting.config();
    let factor = setting.loss_factor;
    let mut mixed = if factor == 1.0 {
        MixedTrainer::new(config, mode)
    } else {
        MixedTrainer::with_loss_factor(config, mode, factor)
    };
    let every = setting.eval_every;
    let (mut scales, mut skipped, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let mut train_seconds = 0.0;
    while mixed.trainer.step <= config.steps {
        let step = mixed.trainer.step;
        if step.is_multiple_of(every) {
            if step > 0 {
                mixed.trainer.evaluate();
            }
            if mode == Mode::F32 {
                counts.push((step, underflow::count_at(&mut mixed.trainer, factor)));
            }
        }
        if step == config.steps {
            break;
        }
        let start = Instant::now();
        let outcome = mixed.step();
        train_seconds += start.elapsed().as_secs_f64();
        scales.push(outcome.scale);
        if !outcome.stepped {
            skipped.push(step);
        }
    }
    let run = Run {
        mode,
        losses: mixed.trainer.history.losses.clone(),
        held_out: mixed.trainer.history.held_out.clone(),
        scales,
        skipped,
        train_seconds,
    };
    (run, counts)
}
