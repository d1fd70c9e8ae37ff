//! The training recipe of "Attention Is All You Need" (Vaswani et al., 2017) measured
//! on a small character model: the inverse-square-root warmup (§5.3), label smoothing
//! (§5.4) and one matrix shared by the embedding and the layer before the softmax
//! (§3.4), each added alone to the chapter's recipe, then all three together, over
//! three seeds.

use attention::prelude::*;
use chapter09::ResumableAdam;
use engine::optim::{AdamConfig, clip_grad_norm};

use crate::corpus::{Corpus, eval_batches};
use crate::lm::{CharLm, LmConfig};
use crate::lm_train::{LmHistory, LmTrainConfig, LmTrainer};

// ANCHOR: inverse_sqrt
/// The learning rate of §5.3 at `step` (counted from 0 here, from 1 in the paper):
/// `d_model^-0.5 · min(s^-0.5, s · warmup^-1.5)` with `s = step + 1`. It rises
/// linearly for `warmup` steps to `(d_model · warmup)^-0.5`, then falls as `1/√s`.
pub fn inverse_sqrt_lr(d_model: usize, warmup: usize, step: usize) -> f32 {
    let s = (step + 1) as f32;
    let w = warmup as f32;
    let rising = s / (w * w.sqrt());
    let falling = 1.0 / s.sqrt();
    rising.min(falling) / (d_model as f32).sqrt()
}
// ANCHOR_END: inverse_sqrt

// ANCHOR: smoothed
/// The cross-entropy against smoothed targets (§5.4): the one-hot target mixed with
/// the uniform distribution over the `K` classes, `q = (1 - ε) · onehot + ε / K`, so
/// the loss of a row is `(1 - ε) · (−log p_target) + ε · mean_k(−log p_k)`. Logits
/// `[..., K]`, targets `[...]`, the mean over rows; `ε = 0` is
/// [`Tensor::cross_entropy`].
///
/// The gradient with respect to a row's logits is `(softmax − q) / rows`: even a
/// perfect prediction is pulled back from probability 1, which is the point.
pub fn smoothed_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    epsilon: f32,
) -> Tensor {
    let nll = logits.cross_entropy(targets, Reduction::Mean);
    if epsilon == 0.0 {
        return nll;
    }
    // mean over rows of mean over classes of −log p: the uniform part.
    let uniform = -logits.log_softmax(-1).mean();
    nll * (1.0 - epsilon) + uniform * epsilon
}
// ANCHOR_END: smoothed

/// A small example of [`smoothed_cross_entropy`]: two rows of three logits and their
/// targets. The tour prints its smoothed loss, and a test compares that with what
/// PyTorch's `F.cross_entropy(logits, targets, label_smoothing=0.1)` gives on them
/// (recorded in `tests/golden/claims/ch16.json`).
pub const LABEL_SMOOTHING_EXAMPLE: ([[f32; 3]; 2], [usize; 2]) =
    ([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]], [0, 1]);

/// [`smoothed_cross_entropy`] with [`EPSILON`] on [`LABEL_SMOOTHING_EXAMPLE`].
pub fn label_smoothing_example() -> f32 {
    let (logits, targets) = LABEL_SMOOTHING_EXAMPLE;
    let logits = Tensor::from_vec(logits.concat(), [2, 3]);
    let targets = Tensor::from_vec(targets.iter().map(|&t| t as f32).collect(), [2]);
    smoothed_cross_entropy(&logits, &targets, EPSILON).item()
}

// ANCHOR: recipe
/// What a run takes from the paper, on top of the chapter's recipe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recipe {
    /// §5.3's schedule ([`inverse_sqrt_lr`]) instead of the chapter's warmup and
    /// cosine.
    pub inverse_sqrt: bool,
    /// §5.4's `ε_ls` (0: plain cross-entropy).
    pub label_smoothing: f32,
    /// §3.4's one matrix for the embedding and the output layer ([`CharLm::tied`]).
    pub tied: bool,
}

/// The paper's `ε_ls`.
pub const EPSILON: f32 = 0.1;

impl Recipe {
    /// The runs of the comparison: the chapter's recipe, each of the paper's three
    /// alone, and all three.
    pub fn all() -> [Recipe; 5] {
        let base = Recipe {
            inverse_sqrt: false,
            label_smoothing: 0.0,
            tied: false,
        };
        [
            base,
            Recipe {
                inverse_sqrt: true,
                ..base
            },
            Recipe {
                label_smoothing: EPSILON,
                ..base
            },
            Recipe { tied: true, ..base },
            Recipe {
                inverse_sqrt: true,
                label_smoothing: EPSILON,
                tied: true,
            },
        ]
    }

    /// A short name for tables.
    pub fn label(&self) -> &'static str {
        match (self.inverse_sqrt, self.label_smoothing > 0.0, self.tied) {
            (false, false, false) => "chapter's recipe",
            (true, false, false) => "+ inverse-sqrt warmup",
            (false, true, false) => "+ label smoothing 0.1",
            (false, false, true) => "+ tied embeddings",
            (true, true, true) => "all three",
            _ => "other",
        }
    }
}
// ANCHOR_END: recipe

// ANCHOR: small
/// The model of the comparison: the chapter's character model narrowed to width 32,
/// two layers and a context of 32, so that fifteen runs replay in under a minute.
pub fn small_model(vocab: usize) -> LmConfig {
    LmConfig {
        vocab,
        num_hiddens: 32,
        num_heads: 4,
        ffn_num_hiddens: 128,
        num_layers: 2,
        block_size: 32,
        dropout: 0.1,
        norm_first: true,
    }
}

/// Steps in each run.
pub const RECIPE_STEPS: usize = 200;
/// The seeds of each recipe.
pub const RECIPE_SEEDS: [u64; 3] = [0, 1, 2];

/// A run's settings: the chapter's run (`LmTrainConfig::chapter`) with the small
/// model, 200 steps, and its warmup shortened in proportion (50 of 1,500 steps: 6 of
/// 200, rounded down). The inverse-square-root schedule warms up over the same 6
/// steps.
pub fn run_config(vocab: usize, seed: u64) -> LmTrainConfig {
    let chapter = LmTrainConfig::chapter(vocab);
    LmTrainConfig {
        model: small_model(vocab),
        seed,
        steps: RECIPE_STEPS,
        warmup: chapter.warmup * RECIPE_STEPS / chapter.steps,
        eval_every: RECIPE_STEPS,
        ..chapter
    }
}
// ANCHOR_END: small

/// A fresh run of `recipe`: the engine seeded, then the model built (tied or not).
pub fn trainer(recipe: &Recipe, config: LmTrainConfig, corpus: Corpus) -> LmTrainer {
    engine::manual_seed(config.seed);
    let model = if recipe.tied {
        CharLm::tied(config.model)
    } else {
        CharLm::new(config.model)
    };
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

// ANCHOR: step
/// One step of `recipe`: [`LmTrainer::train_step`] with the recipe's loss and
/// learning rate. Returns the (smoothed, if the recipe smooths) training loss.
pub fn recipe_step(trainer: &mut LmTrainer, recipe: &Recipe) -> f32 {
    let c = trainer.config;
    let (inputs, targets) = trainer.batch_of(trainer.step);
    engine::manual_seed(trainer.step_seeds(trainer.step).1);
    let logits = trainer.model.forward(&inputs);
    let loss = smoothed_cross_entropy(&logits, &targets, recipe.label_smoothing);
    trainer.optimizer.zero_grad();
    loss.backward();
    let norm = clip_grad_norm(trainer.optimizer.parameters(), c.clip);
    let lr = if recipe.inverse_sqrt {
        inverse_sqrt_lr(c.model.num_hiddens, c.warmup, trainer.step)
    } else {
        c.lr_at(trainer.step)
    };
    trainer.optimizer.set_lr(lr);
    trainer.optimizer.step();
    let loss = loss.item();
    trainer.history.losses.push(loss);
    trainer.history.grad_norms.push(norm);
    trainer.step += 1;
    loss
}
// ANCHOR_END: step

/// The mean over the run's fixed validation batches (8, as the chapter's run has; the
/// same for every run) of the plain cross-entropy and of the smoothed one with
/// [`EPSILON`], in evaluation mode.
pub fn validation(trainer: &mut LmTrainer) -> (f32, f32) {
    let c = trainer.config;
    trainer.model.eval();
    let batches = eval_batches(
        &trainer.corpus.val,
        c.model.block_size,
        c.batch_size,
        c.eval_batches,
        1,
    );
    let (mut plain, mut smoothed) = (0.0f32, 0.0f32);
    no_grad(|| {
        for (x, y) in &batches {
            let logits = trainer.model.forward(x);
            plain += smoothed_cross_entropy(&logits, y, 0.0).item();
            smoothed += smoothed_cross_entropy(&logits, y, EPSILON).item();
        }
    });
    trainer.model.train();
    let n = batches.len() as f32;
    (plain / n, smoothed / n)
}

/// One recorded run of the comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct RecipeRun {
    /// What the run takes from the paper.
    pub recipe: Recipe,
    /// Seeds the weights, the batches and dropout.
    pub seed: u64,
    /// The model's parameter count.
    pub parameters: usize,
    /// The validation cross-entropy at the end, nats per character.
    pub val: f32,
    /// The validation loss against targets smoothed with `ε = 0.1`, at the end.
    pub val_smoothed: f32,
    /// The training loss of every step (smoothed for the runs that smooth).
    pub losses: Vec<f32>,
}

impl RecipeRun {
    /// Trains `recipe` with `seed` on `corpus` (two or three seconds in a release
    /// build).
    pub fn train(recipe: Recipe, seed: u64, corpus: &Corpus) -> RecipeRun {
        let config = run_config(corpus.vocab.len(), seed);
        let mut t = trainer(&recipe, config, corpus.clone());
        while t.step < config.steps {
            recipe_step(&mut t, &recipe);
        }
        let (val, val_smoothed) = validation(&mut t);
        RecipeRun {
            recipe,
            seed,
            parameters: t.model.num_parameters(),
            val,
            val_smoothed,
            losses: t.history.losses,
        }
    }
}

/// Where the comparison is recorded.
pub const RECIPE_FILE: &str = "data/recipe.tsv";

/// Every run of the comparison, as the `recipe` example records them.
#[derive(Clone, Debug, PartialEq)]
pub struct RecipeRecord {
    /// For each recipe of [`Recipe::all`], one run per seed of [`RECIPE_SEEDS`].
    pub runs: Vec<RecipeRun>,
}

impl RecipeRecord {
    /// Trains every run, calling `on_run` after each (under a minute in a release
    /// build on two cores).
    pub fn train(
        corpus: &Corpus,
        mut on_run: impl FnMut(&RecipeRun),
    ) -> RecipeRecord {
        let mut runs = Vec::new();
        for recipe in Recipe::all() {
            for seed in RECIPE_SEEDS {
                let run = RecipeRun::train(recipe, seed, corpus);
                on_run(&run);
                runs.push(run);
            }
        }
        RecipeRecord { runs }
    }

    /// One line per run: its label, seed, parameter count, the two validation losses
    /// and every step's loss, tab-separated, the losses with 9 significant digits
    /// (every f32 exactly).
    pub fn to_tsv(&self) -> String {
        let mut text =
            String::from("recipe\tseed\tparameters\tval\tval_smoothed\tlosses\n");
        for run in &self.runs {
            text.push_str(&format!(
                "{}\t{}\t{}\t{:.8e}\t{:.8e}",
                run.recipe.label(),
                run.seed,
                run.parameters,
                run.val,
                run.val_smoothed
            ));
            for loss in &run.losses {
                text.push_str(&format!("\t{loss:.8e}"));
            }
            text.push('\n');
        }
        text
    }

    /// Reads what [`to_tsv`](Self::to_tsv) wrote.
    ///
    /// # Panics
    /// When a line names a recipe not in [`Recipe::all`] or a field is not a number.
    pub fn from_tsv(text: &str) -> RecipeRecord {
        let runs = text
            .lines()
            .skip(1)
            .map(|line| {
                let f: Vec<&str> = line.split('\t').collect();
                let recipe = Recipe::all()
                    .into_iter()
                    .find(|r| r.label() == f[0])
                    .unwrap_or_else(|| {
                        panic!("{RECIPE_FILE}: unknown recipe {:?}", f[0])
                    });
                let number = |s: &str| s.parse::<f32>().expect("a loss");
                RecipeRun {
                    recipe,
                    seed: f[1].parse().expect("a seed"),
                    parameters: f[2].parse().expect("a count"),
                    val: number(f[3]),
                    val_smoothed: number(f[4]),
                    losses: f[5..].iter().map(|s| number(s)).collect(),
                }
            })
            .collect();
        RecipeRecord { runs }
    }

    /// The recorded comparison, `data/recipe.tsv`.
    pub fn recorded() -> RecipeRecord {
        Self::from_tsv(include_str!("../data/recipe.tsv"))
    }

    /// The runs of `recipe`, in seed order.
    pub fn runs_of(&self, recipe: &Recipe) -> Vec<&RecipeRun> {
        self.runs.iter().filter(|r| r.recipe == *recipe).collect()
    }

    /// The table the page quotes: per recipe, the parameter count, each seed's
    /// validation cross-entropy, and the range over the seeds of the validation loss
    /// against smoothed targets.
    pub fn table(&self) -> String {
        let mut text = format!(
            "validation cross-entropy after {RECIPE_STEPS} steps (nats per character), \
             each seed;\nsmoothed: the loss against targets smoothed with eps {EPSILON}, \
             min-max over the seeds\n{:<22} {:>6}",
            "", "params"
        );
        for seed in RECIPE_SEEDS {
            text.push_str(&format!("  seed {seed}"));
        }
        text.push_str("     smoothed");
        for recipe in Recipe::all() {
            let runs = self.runs_of(&recipe);
            text.push_str(&format!(
                "\n{:<22} {:>6}",
                recipe.label(),
                runs[0].parameters
            ));
            for run in &runs {
                text.push_str(&format!("  {:>6.3}", run.val));
            }
            let smoothed: Vec<f32> = runs.iter().map(|r| r.val_smoothed).collect();
            let lo = smoothed.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = smoothed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            text.push_str(&format!("  {lo:.3}-{hi:.3}"));
        }
        text
    }
}
