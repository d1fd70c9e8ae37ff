//! Training: the masked loss, an Adam whose state can be saved, the learning-rate
//! schedule and the loop.

use attention::prelude::*;
use engine::optim::{
    AdamConfig, LinearWarmup, check_learning_rate, check_parameters, clip_grad_norm,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::data::{Batch, Split, SplitMix64, Vocab, split};
use crate::decode::{Translation, exact_match};
use crate::model::{DecoderAttention, Seq2Seq, Seq2SeqConfig};

// ANCHOR: masked_loss
/// The cross-entropy of `logits: [B, T, V]` against `targets: [B, T]`, averaged over
/// the real tokens only: position `t` of example `b` counts when `t < lens[b]` (d2l's
/// `MaskedSoftmaxCELoss`). Padding positions neither add to the loss nor to the
/// count. With no real token at all (every length 0) the loss is 0 and so is its
/// gradient, as in d2l, not the NaN of 0 / 0.
pub fn masked_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    lens: &Tensor,
) -> Tensor {
    let (b, t) = (targets.size(0), targets.size(1));
    let per_token = logits.cross_entropy(targets, Reduction::None); // [B, T]
    // The same valid-lengths mask attention uses, read as a 0/1 tensor.
    let keep = Mask::valid_lens(lens)
        .keep_for("masked_cross_entropy", &[b, 1, t])
        .expect("a valid-lengths mask")
        .reshape([b, t])
        .to(&per_token.device());
    // The count, a constant of the batch, taken as at least 1: with no real token the
    // masked sum is exactly 0, and 0 / 1 = 0 where 0 / 0 would be NaN.
    let count = keep.sum().item().max(1.0);
    (per_token * &keep).sum() / count
}
// ANCHOR_END: masked_loss

// ANCHOR: resumable_adam
/// Adam with PyTorch's update, exactly as [`engine::optim::Adam`] computes it, with
/// its state in the open so that a checkpoint can store it: for each parameter, its
/// own update count `t` and the running averages `m` (of the gradient) and `v` (of
/// its square).
///
/// Resuming a run without `m` and `v` restarts them at zero: the first steps after
/// the restart then take Adam's full-size early steps again (the bias correction
/// divides by `1 − β₁ᵗ` with a small `t`), a jolt an uninterrupted run never had.
#[derive(Debug)]
pub struct ResumableAdam {
    params: Vec<Tensor>,
    config: AdamConfig,
    /// Per parameter: `(t, m, v)`.
    state: Vec<(i32, Tensor, Tensor)>,
}

impl ResumableAdam {
    /// An optimizer for `params` with zero moments. It refuses the parameter lists
    /// the engine's optimizers refuse (empty, a tensor that does not require a
    /// gradient, a result of an op, a tensor listed twice) and the hyper-parameters
    /// `Adam::new` refuses, with the same messages.
    #[track_caller]
    pub fn new(params: Vec<Tensor>, config: AdamConfig) -> ResumableAdam {
        check_parameters("ResumableAdam::new", &params);
        config.check("ResumableAdam::new");
        let state = params
            .iter()
            .map(|p| (0, p.zeros_like(), p.zeros_like()))
            .collect();
        ResumableAdam {
            params,
            config,
            state,
        }
    }

    /// Per parameter, in order: its update count `t` and its moments `m`, `v`.
    pub fn state(&self) -> &[(i32, Tensor, Tensor)] {
        &self.state
    }

    /// Replaces the state (as read from a checkpoint).
    ///
    /// # Panics
    /// When the count or a shape differs from the parameters'.
    pub fn set_state(&mut self, state: Vec<(i32, Tensor, Tensor)>) {
        assert_eq!(
            state.len(),
            self.params.len(),
            "set_state: one entry per parameter"
        );
        for (p, (_, m, v)) in self.params.iter().zip(&state) {
            assert!(
                m.shape() == p.shape() && v.shape() == p.shape(),
                "set_state: moments of shape {:?} and {:?} for a parameter of \
                 shape {:?}",
                m.shape(),
                v.shape(),
                p.shape()
            );
        }
        self.state = state;
    }
}

impl Optimizer for ResumableAdam {
    fn step(&mut self) {
        let c = self.config;
        let (b1, b2) = c.betas;
        no_grad(|| {
            for (p, (t, m, v)) in self.params.iter().zip(&mut self.state) {
                let Ok(mut g) = p.grad() else { continue };
                *t += 1;
                let value = p.detach();
                if c.weight_decay != 0.0 {
                    g = &g + &value * c.weight_decay;
                }
                *m = &*m * b1 + &g * (1.0 - b1);
                *v = &*v * b2 + g.square() * (1.0 - b2);
                let correction1 = 1.0 - b1.powi(*t);
                let correction2 = 1.0 - b2.powi(*t);
                let denom = v.sqrt() / correction2.sqrt() + c.eps;
                let update = &*m / denom * (c.lr / correction1);
                p.assign(&(value - update));
            }
        });
    }

    fn parameters(&self) -> &[Tensor] {
        &self.params
    }

    fn lr(&self) -> f32 {
        self.config.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f32) {
        check_learning_rate("ResumableAdam::set_lr", lr);
        self.config.lr = lr;
    }
}
// ANCHOR_END: resumable_adam

/// How many held-out numbers are decoded at once when scoring.
pub const EVAL_BATCH: usize = 500;

// ANCHOR: train_config
/// Everything that decides a training run: the data, the model's sizes and the
/// optimisation. The same config and seed give the same run, number for number.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Seeds the split, the batch order and the model's initial weights.
    pub seed: u64,
    /// Numbers are drawn from `0..max_number`.
    pub max_number: u32,
    /// How many numbers to train on.
    pub train_size: usize,
    /// How many other numbers to hold out for scoring.
    pub held_out: usize,
    /// Examples per batch.
    pub batch_size: usize,
    /// Optimizer steps in the whole run.
    pub steps: usize,
    /// The learning rate at the end of the warmup, the highest of the run.
    pub lr: f32,
    /// Steps over which the learning rate rises linearly from 0.
    pub warmup: usize,
    /// The learning rate of the last step: after the warmup the rate falls from `lr`
    /// to `final_lr` along a half cosine (`final_lr = lr` keeps it constant).
    pub final_lr: f32,
    /// The largest gradient norm; larger gradients are scaled down to it.
    pub clip: f32,
    /// The size of the token embeddings.
    pub embed_size: usize,
    /// The size of the GRU states and of the attention's hidden space.
    pub num_hiddens: usize,
}
// ANCHOR_END: train_config

impl TrainConfig {
    // ANCHOR: chapter_config
    /// The run of the chapter (`cargo run --release -p chapter09 --example train`):
    /// numbers below one million, 20,000 of them to train on, 1,000 others held out.
    pub fn chapter() -> TrainConfig {
        TrainConfig {
            seed: 0,
            max_number: 1_000_000,
            train_size: 20_000,
            held_out: 1_000,
            batch_size: 64,
            steps: 1_000,
            lr: 5e-3,
            warmup: 100,
            final_lr: 5e-4,
            clip: 1.0,
            embed_size: 32,
            num_hiddens: 64,
        }
    }
    // ANCHOR_END: chapter_config

    /// A run small enough for a test in debug mode: a smaller model on numbers below
    /// one thousand.
    pub fn short() -> TrainConfig {
        TrainConfig {
            seed: 0,
            max_number: 1_000,
            train_size: 800,
            held_out: 100,
            batch_size: 32,
            steps: 60,
            lr: 1e-2,
            warmup: 10,
            final_lr: 1e-2,
            clip: 1.0,
            embed_size: 16,
            num_hiddens: 32,
        }
    }

    /// Whether a run can be built from this config: the sizes of the model and of a
    /// batch at least 1, the training and held-out numbers fitting below `max_number`
    /// (at most one million), and the learning rates and the clipping norm finite and
    /// ≥ 0. The error names the first field that is wrong, with its value.
    ///
    /// ```
    /// use chapter09::TrainConfig;
    /// assert_eq!(TrainConfig::chapter().validate(), Ok(()));
    /// let broken = TrainConfig { embed_size: 0, ..TrainConfig::chapter() };
    /// assert_eq!(
    ///     broken.validate(),
    ///     Err("embed_size is 0, the model needs at least 1".to_string())
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        let at_least_one = [
            ("embed_size", self.embed_size, "the model"),
            ("num_hiddens", self.num_hiddens, "the model"),
            ("batch_size", self.batch_size, "a batch"),
            ("train_size", self.train_size, "training"),
        ];
        for (name, value, what) in at_least_one {
            if value == 0 {
                return Err(format!("{name} is 0, {what} needs at least 1"));
            }
        }
        if self.max_number > 1_000_000 {
            return Err(format!(
                "max_number is {}, the task's numbers are below one million",
                self.max_number
            ));
        }
        if self.train_size.saturating_add(self.held_out) > self.max_number as usize {
            return Err(format!(
                "train_size {} and held_out {} do not fit in 0..{} (max_number)",
                self.train_size, self.held_out, self.max_number
            ));
        }
        for (name, value) in [
            ("lr", self.lr),
            ("final_lr", self.final_lr),
            ("clip", self.clip),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} is {value}, it must be finite and ≥ 0"));
            }
        }
        Ok(())
    }

    /// The model's sizes for this run's vocabularies.
    pub fn model(&self) -> Seq2SeqConfig {
        Seq2SeqConfig {
            src_vocab: Vocab::source().len(),
            tgt_vocab: Vocab::target().len(),
            embed_size: self.embed_size,
            num_hiddens: self.num_hiddens,
        }
    }

    /// Batches in one pass over the training set (the last, incomplete one is dropped
    /// so that every step sees `batch_size` examples).
    pub fn batches_per_epoch(&self) -> usize {
        (self.train_size / self.batch_size).max(1)
    }

    // ANCHOR: schedule
    /// The learning rate of step `step` (from 0): the engine's linear warmup from 0
    /// to `lr` over `warmup` steps, then a half cosine from `lr` down to `final_lr`
    /// at the last step.
    pub fn lr_at(&self, step: usize) -> f32 {
        if step < self.warmup {
            return LinearWarmup::new(self.lr, self.warmup).lr_at(step);
        }
        let span = self.steps.saturating_sub(self.warmup).max(1);
        let progress = ((step - self.warmup) as f32 / span as f32).min(1.0);
        // `libm`'s cosine gives the same bits on every platform, so the same run
        // everywhere.
        // From 1 at the end of the warmup to 0 at the last step.
        let cosine = 0.5 * (1.0 + libm::cosf(std::f32::consts::PI * progress));
        self.final_lr + (self.lr - self.final_lr) * cosine
    }
    // ANCHOR_END: schedule
}

// ANCHOR: progress
/// A progress bar for `steps` steps, drawn on standard error, and only when standard
/// error is a terminal: indicatif hides a bar whose terminal target is not a terminal
/// (or is `TERM=dumb`), so logs, pipes and test runs stay clean.
pub fn progress_bar(steps: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(steps as u64),
        ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:32} {pos}/{len} steps  {msg}  [{elapsed} < {eta}]",
        )
        .expect("a valid template"),
    );
    bar
}
// ANCHOR_END: progress

/// What one training step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// The step's number, from 0.
    pub step: usize,
    /// The masked loss of the step's batch, before the update.
    pub loss: f32,
    /// The gradient norm before clipping.
    pub grad_norm: f32,
    /// The learning rate the step used.
    pub lr: f32,
}

/// What a run has done so far: the loss of every step, and the held-out exact-match
/// accuracy at each evaluation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The loss of each step, in order.
    pub losses: Vec<f32>,
    /// `(steps taken, held-out exact-match accuracy)` at each evaluation.
    pub held_out: Vec<(usize, f32)>,
}

// ANCHOR: trainer
/// A training run in progress: the model, the optimizer, and where the run is.
/// Everything a checkpoint must hold to continue it exactly is here.
#[derive(Debug)]
pub struct Trainer<A = AdditiveAttention> {
    /// The settings of the run.
    pub config: TrainConfig,
    /// The model being trained.
    pub model: Seq2Seq<A>,
    /// The optimizer, whose moments are part of the run's state.
    pub optimizer: ResumableAdam,
    /// The number of steps taken so far.
    pub step: usize,
    /// The losses and evaluations so far.
    pub history: History,
    /// The training and held-out numbers.
    pub split: Split,
    /// The source vocabulary.
    pub src_vocab: Vocab,
    /// The target vocabulary.
    pub tgt_vocab: Vocab,
    /// The batch order of the current epoch: `(epoch, shuffled training numbers)`.
    order: Option<(usize, Vec<u32>)>,
}

impl Trainer<AdditiveAttention> {
    /// A fresh run of d2l's model with additive attention.
    pub fn additive(config: TrainConfig) -> Trainer<AdditiveAttention> {
        Trainer::new(config, Seq2Seq::additive)
    }
}

impl<A: DecoderAttention> Trainer<A> {
    /// A fresh run: the split from the seed, then the model, built by `build` right
    /// after seeding the engine's generator with the same seed.
    pub fn new(
        config: TrainConfig,
        build: impl FnOnce(Seq2SeqConfig) -> Seq2Seq<A>,
    ) -> Self {
        let split = split(
            config.max_number,
            config.train_size,
            config.held_out,
            config.seed,
        );
        engine::manual_seed(config.seed);
        let model = build(config.model());
        let optimizer = ResumableAdam::new(model.parameters(), AdamConfig::default());
        Trainer {
            config,
            model,
            optimizer,
            step: 0,
            history: History::default(),
            split,
            src_vocab: Vocab::source(),
            tgt_vocab: Vocab::target(),
            order: None,
        }
    }

    // ANCHOR_END: trainer

    /// Moves the run to `device`: the model's parameters and the optimizer's moments.
    /// Batches stay on the CPU (they are token ids and lengths, which the ops read
    /// there).
    pub fn to_device(&mut self, device: &engine::Device) {
        self.model.to_device(device);
        let moved = self
            .optimizer
            .state()
            .iter()
            .map(|(t, m, v)| (*t, m.to(device), v.to(device)))
            .collect();
        self.optimizer.set_state(moved);
    }

    // ANCHOR: batch_order
    /// The numbers of the batch of step `step`: the training set is shuffled once per
    /// epoch by a generator seeded with the run's seed and the epoch, so the batch of
    /// a step does not depend on how the run got there (straight, or resumed).
    pub fn batch_numbers(&mut self, step: usize) -> Vec<u32> {
        let per_epoch = self.config.batches_per_epoch();
        let (epoch, index) = (step / per_epoch, step % per_epoch);
        if self.order.as_ref().is_none_or(|(e, _)| *e != epoch) {
            let mut numbers = self.split.train.clone();
            let seed = self.config.seed
                ^ (epoch as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
            SplitMix64::new(seed).shuffle(&mut numbers);
            self.order = Some((epoch, numbers));
        }
        let (_, numbers) = self.order.as_ref().expect("set above");
        let size = self.config.batch_size.min(numbers.len());
        numbers[index * size..(index + 1) * size].to_vec()
    }

    // ANCHOR_END: batch_order
    // ANCHOR: train_step
    /// One step: forward with teacher forcing, masked loss, backward, clipping, the
    /// scheduled learning rate, Adam.
    pub fn train_step(&mut self) -> StepReport {
        let step = self.step;
        let numbers = self.batch_numbers(step);
        let batch = Batch::new(&numbers, &self.src_vocab, &self.tgt_vocab);
        let logits =
            self.model
                .forward(&batch.src, &batch.src_lens, &batch.dec_input);
        let loss = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
        self.optimizer.zero_grad();
        loss.backward();
        let grad_norm = clip_grad_norm(self.optimizer.parameters(), self.config.clip);
        let lr = self.config.lr_at(step);
        self.optimizer.set_lr(lr);
        self.optimizer.step();
        let loss = loss.item();
        self.history.losses.push(loss);
        self.step += 1;
        StepReport {
            step,
            loss,
            grad_norm,
            lr,
        }
    }

    // ANCHOR_END: train_step

    /// Scores the model on the held-out numbers (greedy decoding, exact match),
    /// records the accuracy in the history, and returns it with the translations.
    pub fn evaluate(&mut self) -> (f32, Vec<Translation>) {
        let (accuracy, translations) = exact_match(
            &self.model,
            &self.split.held_out,
            &self.src_vocab,
            &self.tgt_vocab,
            EVAL_BATCH,
        );
        self.history.held_out.push((self.step, accuracy));
        (accuracy, translations)
    }

    /// Trains until `step` steps have been taken in all (none if already there),
    /// calling `on_step` after each.
    pub fn train_until(&mut self, step: usize, mut on_step: impl FnMut(&StepReport)) {
        while self.step < step {
            let report = self.train_step();
            on_step(&report);
        }
    }
}
