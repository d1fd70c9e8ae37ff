//! Training the character model: batches drawn from the step number, chapter 9's
//! Adam and schedule, the validation loss, and safetensors checkpoints that resume
//! exactly.

use std::path::Path;

use attention::prelude::*;
use chapter09::{
    CheckpointError, ResumableAdam, SplitMix64, TrainConfig, unexpected_moments,
};
use engine::nn::LoadError;
use engine::optim::{AdamConfig, clip_grad_norm};
use serde::{Deserialize, Serialize};

use crate::corpus::{Corpus, batch, eval_batches};
use crate::lm::{CharLm, LmConfig};
use crate::store;

// ANCHOR: config
/// Everything that decides a language-model run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LmTrainConfig {
    /// The model's sizes.
    pub model: LmConfig,
    /// Seeds the weights and every batch.
    pub seed: u64,
    /// Sequences per batch, each `model.block_size` characters.
    pub batch_size: usize,
    /// Optimizer steps in the whole run.
    pub steps: usize,
    /// The highest learning rate, reached at the end of the warmup.
    pub lr: f32,
    /// Steps of linear warmup from 0 (0: none).
    pub warmup: usize,
    /// The learning rate of the last step, after a half cosine from `lr`.
    pub final_lr: f32,
    /// The largest gradient norm (`f32::INFINITY`: no clipping).
    pub clip: f32,
    /// Steps between two measurements of the validation loss.
    pub eval_every: usize,
    /// Batches the validation loss averages over (always the same ones).
    pub eval_batches: usize,
}
// ANCHOR_END: config

impl LmTrainConfig {
    // ANCHOR: chapter
    /// The chapter's run (`cargo run --release -p chapter16 --example lm`): four
    /// pre-norm layers of width 128 reading 64 characters, 1,500 steps of 16
    /// sequences, the learning rate warmed up to 2e-3 over 50 steps and falling to
    /// 2e-4, dropout 0.1. About five minutes on two cores.
    pub fn chapter(vocab: usize) -> LmTrainConfig {
        LmTrainConfig {
            model: LmConfig {
                vocab,
                num_hiddens: 128,
                num_heads: 4,
                ffn_num_hiddens: 512,
                num_layers: 4,
                block_size: 64,
                dropout: 0.1,
                norm_first: true,
            },
            seed: 0,
            batch_size: 16,
            steps: 1500,
            lr: 2e-3,
            warmup: 50,
            final_lr: 2e-4,
            clip: 1.0,
            eval_every: 100,
            eval_batches: 8,
        }
    }
    // ANCHOR_END: chapter

    /// The learning rate of `step`: chapter 9's schedule, linear warmup then a half
    /// cosine down to `final_lr`.
    pub fn lr_at(&self, step: usize) -> f32 {
        self.schedule().lr_at(step)
    }

    /// Chapter 9's config, holding only what its schedule reads.
    fn schedule(&self) -> TrainConfig {
        TrainConfig {
            steps: self.steps,
            lr: self.lr,
            warmup: self.warmup,
            final_lr: self.final_lr,
            ..TrainConfig::short()
        }
    }
}

/// What a run has recorded: the loss of every step, and the validation loss at each
/// measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LmHistory {
    /// The training loss of each step.
    pub losses: Vec<f32>,
    /// `(steps taken, validation loss)`.
    pub val: Vec<(usize, f32)>,
    /// The gradient norm of each step, before clipping.
    pub grad_norms: Vec<f32>,
}

// ANCHOR: trainer
/// A language-model run in progress.
#[derive(Debug)]
pub struct LmTrainer {
    /// The run's settings.
    pub config: LmTrainConfig,
    /// The model.
    pub model: CharLm,
    /// Adam with its state in the open (chapter 9's).
    pub optimizer: ResumableAdam,
    /// Steps taken.
    pub step: usize,
    /// What the run has recorded.
    pub history: LmHistory,
    /// The text, its vocabulary and its split.
    pub corpus: Corpus,
}

impl LmTrainer {
    /// A fresh run on `corpus`: the engine's generator is seeded, then the model
    /// built.
    pub fn new(config: LmTrainConfig, corpus: Corpus) -> LmTrainer {
        engine::manual_seed(config.seed);
        let model = CharLm::new(config.model);
        let optimizer = ResumableAdam::new(model.parameters(), AdamConfig::default());
        LmTrainer {
            config,
            model,
            optimizer,
            step: 0,
            history: LmHistory::default(),
            corpus,
        }
    }

    /// The two seeds of `step`: its batch's and its dropout's. They are drawn from a
    /// generator seeded with the run's seed plus the step, so that they depend on the
    /// step alone: a resumed run draws the batches and drops the units the straight
    /// one would have. (A PyTorch script that resumes exactly saves the generator's
    /// state, `torch.get_rng_state()`, in its checkpoint instead.)
    ///
    /// The generator's *output* seeds the step, not `seed + step` itself: SplitMix64
    /// walks its state in equal strides, so generators seeded `seed + step · stride`
    /// would give step k + 1 the draws of step k shifted by one, and consecutive
    /// batches would share all but one sequence.
    pub fn step_seeds(&self, step: usize) -> (u64, u64) {
        let mut rng = SplitMix64::new(self.config.seed.wrapping_add(step as u64));
        (rng.next_u64(), rng.next_u64())
    }

    /// The batch of `step`.
    pub fn batch_of(&self, step: usize) -> (Tensor, Tensor) {
        let (seed, _) = self.step_seeds(step);
        let (block, size) = (self.config.model.block_size, self.config.batch_size);
        batch(&self.corpus.train, block, size, &mut SplitMix64::new(seed))
    }

    /// One step: the loss of the step's batch, backward, clipping, the scheduled
    /// learning rate, Adam. Returns the loss.
    pub fn train_step(&mut self) -> f32 {
        let (inputs, targets) = self.batch_of(self.step);
        // Dropout draws from the engine's generator: seed it for this step.
        engine::manual_seed(self.step_seeds(self.step).1);
        let loss = self.model.loss(&inputs, &targets);
        self.optimizer.zero_grad();
        loss.backward();
        let norm = clip_grad_norm(self.optimizer.parameters(), self.config.clip);
        self.optimizer.set_lr(self.config.lr_at(self.step));
        self.optimizer.step();
        let loss = loss.item();
        self.history.losses.push(loss);
        self.history.grad_norms.push(norm);
        self.step += 1;
        if self.step.is_multiple_of(self.config.eval_every) {
            let val = self.validation_loss();
            self.history.val.push((self.step, val));
        }
        loss
    }
    // ANCHOR_END: trainer

    /// The mean loss over the run's fixed validation batches, in evaluation mode.
    pub fn validation_loss(&mut self) -> f32 {
        self.model.eval();
        let (block, size) = (self.config.model.block_size, self.config.batch_size);
        let batches =
            eval_batches(&self.corpus.val, block, size, self.config.eval_batches, 1);
        let total: f32 = no_grad(|| {
            batches
                .iter()
                .map(|(x, y)| self.model.loss(x, y).item())
                .sum()
        });
        self.model.train();
        total / batches.len() as f32
    }

    /// Trains until `step` steps in all, calling `on_step` with each step's number
    /// and loss.
    pub fn train_until(&mut self, step: usize, mut on_step: impl FnMut(usize, f32)) {
        while self.step < step {
            let loss = self.train_step();
            on_step(self.step, loss);
        }
    }
}

/// The metadata entry of a language-model checkpoint.
const INFO_KEY: &str = "chapter16";

/// What a language-model checkpoint holds besides its tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LmCheckpointInfo {
    /// The run's settings.
    pub config: LmTrainConfig,
    /// Steps taken when it was saved.
    pub step: usize,
    /// What the run had recorded.
    pub history: LmHistory,
    /// Adam's update count of each parameter, in parameter order.
    pub adam_steps: Vec<i32>,
}

// ANCHOR: save
/// Saves everything the run needs to continue exactly, in chapter 9's layout:
/// `model.{name}`, `adam.m.{name}`, `adam.v.{name}`, and the run's settings, step and
/// history as one JSON metadata entry. Written to a temporary file, then renamed.
pub fn save_lm_checkpoint(
    trainer: &LmTrainer,
    path: &Path,
) -> Result<(), CheckpointError> {
    let mut tensors = store::model_tensors(&trainer.model);
    let names = trainer.model.named_parameters().into_iter().map(|(n, _)| n);
    let mut adam_steps = Vec::new();
    for (name, (t, m, v)) in names.zip(trainer.optimizer.state()) {
        tensors.push((format!("adam.m.{name}"), m.clone()));
        tensors.push((format!("adam.v.{name}"), v.clone()));
        adam_steps.push(*t);
    }
    let info = LmCheckpointInfo {
        config: trainer.config,
        step: trainer.step,
        history: trainer.history.clone(),
        adam_steps,
    };
    let json = serde_json::to_string(&info).expect("the info serialises");
    store::write(path, &tensors, INFO_KEY, json)
}
// ANCHOR_END: save

// ANCHOR: resume
/// Reads a checkpoint written by [`save_lm_checkpoint`] and continues its run on
/// `corpus`: the model and Adam's state as saved, the step and the history.
pub fn resume_lm(path: &Path, corpus: Corpus) -> Result<LmTrainer, CheckpointError> {
    let corrupt = |reason: String| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let (tensors, json) = store::read(path, INFO_KEY)?;
    let info: LmCheckpointInfo = serde_json::from_str(&json)
        .map_err(|e| corrupt(format!("the `{INFO_KEY}` metadata entry: {e}")))?;
    // The model is built from the stored sizes before any tensor is checked
    // against it: sizes that no model has, or that the file's weights cannot
    // fill, are refused first.
    let model_config = format!("the `{INFO_KEY}` metadata entry's model");
    info.config
        .model
        .validate()
        .and_then(|()| fits_the_weights(&info.config.model, &tensors))
        .map_err(|e| corrupt(format!("{model_config}: {e}")))?;
    if info.config.model.vocab != corpus.vocab.len() {
        return Err(corrupt(format!(
            "{model_config} reads {} characters, the corpus has {}",
            info.config.model.vocab,
            corpus.vocab.len()
        )));
    }
    let mut trainer = LmTrainer::new(info.config, corpus);
    let does_not_fit = |problems: LoadError| CheckpointError::DoesNotFit {
        path: path.to_path_buf(),
        problems,
    };
    let model_state = tensors.with_prefix("model.");
    trainer
        .model
        .load_state_dict(&model_state)
        .map_err(does_not_fit)?;
    let params = trainer.model.named_parameters();
    if info.adam_steps.len() != params.len() {
        return Err(corrupt(format!(
            "Adam's counts are given for {} parameters, the model has {}",
            info.adam_steps.len(),
            params.len()
        )));
    }
    let mut problems = LoadError::default();
    let mut state = Vec::with_capacity(params.len());
    for ((name, p), &count) in params.iter().zip(&info.adam_steps) {
        let mut moment = |kind: &str| {
            let key = format!("adam.{kind}.{name}");
            match tensors.get(&key) {
                Some(t) if t.shape() == p.shape() => t.clone(),
                Some(t) => {
                    problems.mismatched.push((
                        key,
                        p.shape().to_vec(),
                        t.shape().to_vec(),
                    ));
                    p.zeros_like()
                }
                None => {
                    problems.missing.push(key);
                    p.zeros_like()
                }
            }
        };
        let (m, v) = (moment("m"), moment("v"));
        state.push((count, m, v));
    }
    // A moment of no parameter is refused, as a weight of no parameter is.
    problems.unexpected = unexpected_moments(&tensors, &params);
    if !problems.missing.is_empty()
        || !problems.mismatched.is_empty()
        || !problems.unexpected.is_empty()
    {
        return Err(does_not_fit(problems));
    }
    trainer.optimizer.set_state(state);
    trainer.step = info.step;
    trainer.history = info.history;
    Ok(trainer)
}
// ANCHOR_END: resume

/// Checks that the model `config` describes is no larger than the weights stored
/// under `model.`: its largest matrix holds no more numbers than all of them, nor do
/// the layers' largest matrices together, and there are no more layers than tensors.
/// A config that lies about the sizes is refused before a model of its sizes is
/// allocated; a file missing a tensor or two still reaches `load_state_dict`, whose
/// message names them.
fn fits_the_weights(config: &LmConfig, tensors: &StateDict) -> Result<(), String> {
    let c = config;
    let d = c.num_hiddens;
    let per_layer = d.checked_mul(d.max(c.ffn_num_hiddens));
    let largest = [
        c.vocab.checked_mul(d),
        c.block_size.checked_mul(d),
        per_layer,
        per_layer.and_then(|n| n.checked_mul(c.num_layers)),
    ]
    .into_iter()
    .try_fold(0, |m, n| n.map(|n| n.max(m)));
    let model = || tensors.iter().filter(|(n, _)| n.starts_with("model."));
    let (stored, count) = (model().map(|(_, t)| t.numel()).sum(), model().count());
    match largest {
        Some(n) if n <= stored && c.num_layers <= count => Ok(()),
        _ => Err(format!(
            "vocab {}, num_hiddens {d}, ffn_num_hiddens {}, block_size {} and \
             num_layers {} need at least {} numbers, and the file holds {stored} \
             weights in {count} tensors",
            c.vocab,
            c.ffn_num_hiddens,
            c.block_size,
            c.num_layers,
            largest.map_or("more than usize::MAX".to_string(), |n| n.to_string())
        )),
    }
}
