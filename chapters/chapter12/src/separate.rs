//! Harder variants of chapter 9's task, where the scorings may stop tying, and a fair
//! way to compare them there: each scoring's learning rate is chosen on a validation
//! split from a small grid, then the scoring is trained at that rate from three other
//! seeds and scored on a test split it never saw, nor was tuned on.
//!
//! Like [`compare`](crate::compare), everything here but the training time is
//! computed by the engine, so every loss, gradient norm and accuracy is the same
//! bits on every machine and kernel path.

use std::fmt::Write;
use std::time::Instant;

use attention::prelude::*;
use chapter09::{
    Batch, TrainConfig, Trainer, Vocab, greedy_decode, masked_cross_entropy,
    target_tokens,
};
use engine::optim::clip_grad_norm;

use crate::scorings::{Scorer, Scoring};

// ANCHOR: tasks
/// A variant of chapter 9's task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// The digits in reverse order: `three hundred and forty two` → `2 4 3`, with a
    /// model of half chapter 9's size ([`REVERSED_HIDDENS`]). The alignment runs
    /// backwards through the words, and the first digit to write is the last word
    /// read: a harder alignment than chapter 9's almost monotonic one.
    Reversed,
    /// Chapter 9's task with only [`SMALL_TRAIN`] training numbers, seen over and
    /// over: the setting in which a more expressive scoring would overfit.
    Small,
}

/// The model size `H` of [`Task::Reversed`]: half of chapter 9's 64, so that the
/// model is short of capacity and the scoring has work to do.
pub const REVERSED_HIDDENS: usize = 32;

/// Training numbers of [`Task::Small`].
pub const SMALL_TRAIN: usize = 300;

/// Numbers held out for choosing the learning rate.
pub const VALIDATION: usize = 500;

/// Numbers held out for the reported accuracy, disjoint from the validation numbers.
pub const TEST: usize = 1000;

/// The peak learning rates every scoring is tried at.
pub const RATES: [f32; 3] = [5e-3, 1e-2, 2e-2];

/// The seed whose run at each rate chooses the rate (on its validation numbers).
pub const TUNING_SEED: u64 = 0;

/// The seeds every scoring is then trained from at its chosen rate.
pub const SEEDS: [u64; 3] = [1, 2, 3];

/// Optimizer steps per run.
pub const STEPS: usize = 300;

/// Warmup steps per run.
pub const WARMUP: usize = 30;

impl Task {
    /// Both variants, in the order of the tables.
    pub const ALL: [Task; 2] = [Task::Reversed, Task::Small];

    /// The settings of a run: chapter 9's model (`E = 32`, and `H = 64`, or
    /// [`REVERSED_HIDDENS`] for [`Task::Reversed`]) and data, batches of 64,
    /// [`STEPS`] steps of Adam at `lr` after [`WARMUP`] warmup steps, falling to
    /// `lr / 10` along a half cosine, clipping at 1; [`VALIDATION`] + [`TEST`]
    /// numbers held out.
    pub fn config(self, seed: u64, lr: f32) -> TrainConfig {
        TrainConfig {
            seed,
            train_size: match self {
                Task::Reversed => 20_000,
                Task::Small => SMALL_TRAIN,
            },
            held_out: VALIDATION + TEST,
            steps: STEPS,
            warmup: WARMUP,
            num_hiddens: match self {
                Task::Reversed => REVERSED_HIDDENS,
                Task::Small => 64,
            },
            lr,
            final_lr: lr / 10.0,
            ..TrainConfig::chapter()
        }
    }

    /// The target ids of `n`, ending with `<eos>`.
    pub fn target(self, n: u32, tgt_vocab: &Vocab) -> Vec<usize> {
        let mut ids = tgt_vocab.encode(&target_tokens(n));
        if self == Task::Reversed {
            ids.reverse();
        }
        ids.push(Vocab::EOS_ID);
        ids
    }

    /// The batch of `numbers` for this task: chapter 9's, with each target's digits
    /// reversed for [`Task::Reversed`] (and the decoder's input, the target shifted
    /// right, with them).
    pub fn batch(
        self,
        numbers: &[u32],
        src_vocab: &Vocab,
        tgt_vocab: &Vocab,
    ) -> Batch {
        let mut batch = Batch::new(numbers, src_vocab, tgt_vocab);
        if self == Task::Reversed {
            let t = batch.tgt.size(1);
            let mut tgt = batch.tgt.to_vec();
            let mut input = batch.dec_input.to_vec();
            for (b, &n) in numbers.iter().enumerate() {
                let ids = self.target(n, tgt_vocab);
                for (j, &id) in ids.iter().enumerate() {
                    tgt[b * t + j] = id as f32;
                    if j + 1 < ids.len() {
                        input[b * t + j + 1] = id as f32;
                    }
                }
            }
            batch.tgt = Tensor::from_vec(tgt, [numbers.len(), t]);
            batch.dec_input = Tensor::from_vec(input, [numbers.len(), t]);
        }
        batch
    }
}
// ANCHOR_END: tasks

impl Task {
    /// The name the tables give it.
    pub fn name(self) -> &'static str {
        match self {
            Task::Reversed => "reversed digits, H = 32",
            Task::Small => "300 training numbers, H = 64",
        }
    }

    /// The key of the recorded data (`data/separate.tsv`).
    pub fn key(self) -> &'static str {
        match self {
            Task::Reversed => "reversed",
            Task::Small => "small",
        }
    }

    /// The task whose [`key`](Task::key) is `key`.
    pub fn from_key(key: &str) -> Option<Task> {
        Task::ALL.into_iter().find(|t| t.key() == key)
    }
}

/// One run of one scoring on one task from one seed at one rate.
#[derive(Clone, Debug, PartialEq)]
pub struct SepRun {
    /// The task.
    pub task: Task,
    /// The scoring.
    pub scoring: Scoring,
    /// The seed of the split, the batch order and the weights.
    pub seed: u64,
    /// The peak learning rate.
    pub lr: f32,
    /// The loss of every step.
    pub losses: Vec<f32>,
    /// The gradient norm of every step, before clipping.
    pub grad_norms: Vec<f32>,
    /// Exact match on the [`VALIDATION`] numbers at the end.
    pub validation: f32,
    /// Exact match on the [`TEST`] numbers at the end.
    pub test: f32,
    /// Exact match on the training numbers at the end (at most [`TEST`] of them).
    pub train: f32,
    /// Wall seconds of the training steps: one machine's, never compared bit for bit.
    pub train_seconds: f64,
}

impl SepRun {
    /// Steps per second of training (one machine's).
    pub fn steps_per_second(&self) -> f64 {
        self.losses.len() as f64 / self.train_seconds
    }

    // ANCHOR: stability
    /// The steps after the warmup whose gradient norm exceeded the clipping norm, 1.
    pub fn clipped_steps(&self) -> usize {
        self.grad_norms[WARMUP..]
            .iter()
            .filter(|&&g| g > 1.0)
            .count()
    }

    /// The largest gradient norm after the warmup.
    pub fn largest_grad_norm(&self) -> f32 {
        self.grad_norms[WARMUP..].iter().fold(0.0, |a, &g| a.max(g))
    }

    /// Loss spikes: the steps after the warmup whose loss is more than twice the mean
    /// loss of the 10 steps before it, and more than 0.1.
    pub fn spikes(&self) -> usize {
        (WARMUP.max(10)..self.losses.len())
            .filter(|&i| {
                let before = self.losses[i - 10..i].iter().sum::<f32>() / 10.0;
                self.losses[i] > 2.0 * before && self.losses[i] > 0.1
            })
            .count()
    }
    // ANCHOR_END: stability
}

/// The fraction of `numbers` that `model` decodes greedily to exactly `task`'s
/// target.
pub fn exact_match(
    task: Task,
    model: &chapter09::Seq2Seq<Scorer>,
    numbers: &[u32],
) -> f32 {
    let (src_vocab, tgt_vocab) = (Vocab::source(), Vocab::target());
    let mut right = 0;
    for chunk in numbers.chunks(chapter09::EVAL_BATCH) {
        for t in greedy_decode(model, chunk, &src_vocab, &tgt_vocab, 7) {
            let mut want = task.target(t.number, &tgt_vocab);
            want.pop();
            right += usize::from(t.ids == want);
        }
    }
    right as f32 / numbers.len().max(1) as f32
}

// ANCHOR: run
/// Trains `scoring` on `task` from `seed` at the peak rate `lr` ([`Task::config`]),
/// and scores it at the end on the validation numbers, and, when `full`, on the test
/// numbers and the training numbers too (otherwise those are 0).
pub fn run(task: Task, scoring: Scoring, seed: u64, lr: f32, full: bool) -> SepRun {
    run_with(task, scoring, task.config(seed, lr), full)
}

/// [`run`] with any settings: the validation numbers are the first [`VALIDATION`] of
/// the held-out numbers (all of them if there are fewer), the test numbers the rest.
pub fn run_with(
    task: Task,
    scoring: Scoring,
    config: TrainConfig,
    full: bool,
) -> SepRun {
    let seed = config.seed;
    let mut trainer = Trainer::new(config, |c| scoring.model(c, seed));
    let held_out = &trainer.split.held_out;
    let (validation, test) = held_out.split_at(VALIDATION.min(held_out.len()));
    let (validation, test) = (validation.to_vec(), test.to_vec());
    let (mut losses, mut grad_norms) = (Vec::new(), Vec::new());
    let mut train_seconds = 0.0;
    for step in 0..config.steps {
        let start = Instant::now();
        // Chapter 9's training step, with the task's batch.
        let numbers = trainer.batch_numbers(step);
        let batch = task.batch(&numbers, &trainer.src_vocab, &trainer.tgt_vocab);
        let logits =
            trainer
                .model
                .forward(&batch.src, &batch.src_lens, &batch.dec_input);
        let loss = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
        trainer.optimizer.zero_grad();
        loss.backward();
        grad_norms.push(clip_grad_norm(trainer.optimizer.parameters(), config.clip));
        trainer.optimizer.set_lr(config.lr_at(step));
        trainer.optimizer.step();
        losses.push(loss.item());
        train_seconds += start.elapsed().as_secs_f64();
    }
    let score = |numbers: &[u32]| exact_match(task, &trainer.model, numbers);
    let validation = score(&validation);
    let (test, train) = if full {
        let train = &trainer.split.train[..trainer.split.train.len().min(TEST)];
        (score(&test), score(train))
    } else {
        (0.0, 0.0)
    };
    SepRun {
        task,
        scoring,
        seed,
        lr: config.lr,
        losses,
        grad_norms,
        validation,
        test,
        train,
        train_seconds,
    }
}
// ANCHOR_END: run

// ANCHOR: chosen
/// The rate whose tuning run scored best on validation: the first of [`RATES`] among
/// equals (so the smallest).
pub fn chosen_rate(tuning: &[SepRun]) -> f32 {
    let mut best = &tuning[0];
    for r in &tuning[1..] {
        if r.validation > best.validation {
            best = r;
        }
    }
    best.lr
}
// ANCHOR_END: chosen

/// Everything the separating runs measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SepRecord {
    /// Where the times were taken: [`lesson::cpu_name`] and the kernel path.
    pub machine: String,
    /// The tuning runs: each task, each scoring, each of [`RATES`], from
    /// [`TUNING_SEED`], scored on validation only.
    pub tuning: Vec<SepRun>,
    /// The runs at each scoring's chosen rate: each task, each scoring, each of
    /// [`SEEDS`].
    pub runs: Vec<SepRun>,
}

/// The recorded data, as committed.
pub const RECORDED_TSV: &str = include_str!("../data/separate.tsv");

/// The recorded tables, as committed: what the `separate` example prints.
pub const RECORDED_TABLES: &str = include_str!("../data/separate.txt");

/// The `(min, max)` of some numbers.
fn range<T: Copy + PartialOrd>(xs: impl IntoIterator<Item = T>) -> (T, T) {
    let mut it = xs.into_iter();
    let first = it.next().expect("at least one number");
    it.fold((first, first), |(lo, hi), x| {
        (if x < lo { x } else { lo }, if x > hi { x } else { hi })
    })
}

/// Floats as Rust writes them by default: the shortest text that reads back as the
/// same bits.
fn floats<T: std::fmt::Display>(xs: &[T]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("\t")
}

impl SepRecord {
    /// The recorded runs (`data/separate.tsv`).
    ///
    /// # Panics
    /// When the committed file does not parse: the crate ships it.
    pub fn recorded() -> SepRecord {
        SepRecord::parse(RECORDED_TSV)
            .unwrap_or_else(|e| panic!("data/separate.tsv: {e}"))
    }

    /// The tuning runs of `scoring` on `task`, in the order of [`RATES`].
    pub fn tuning_of(&self, task: Task, scoring: Scoring) -> Vec<&SepRun> {
        self.tuning
            .iter()
            .filter(|r| r.task == task && r.scoring == scoring)
            .collect()
    }

    /// The runs of `scoring` on `task` at its chosen rate, in seed order.
    pub fn runs_of(&self, task: Task, scoring: Scoring) -> Vec<&SepRun> {
        self.runs
            .iter()
            .filter(|r| r.task == task && r.scoring == scoring)
            .collect()
    }

    /// The rate chosen for `scoring` on `task` by its tuning runs.
    pub fn chosen(&self, task: Task, scoring: Scoring) -> f32 {
        let tuning: Vec<SepRun> =
            self.tuning_of(task, scoring).into_iter().cloned().collect();
        chosen_rate(&tuning)
    }

    /// The `(min, max)` test exact match of `scoring` on `task` over the seeds.
    pub fn test_range(&self, task: Task, scoring: Scoring) -> (f32, f32) {
        range(self.runs_of(task, scoring).iter().map(|r| r.test))
    }

    /// The `(min, max)` steps per second of `scoring` on `task` over all its runs
    /// (tuning and chosen rate): one machine's.
    pub fn speed_range(&self, task: Task, scoring: Scoring) -> (f64, f64) {
        let tuning = self.tuning_of(task, scoring);
        let runs = self.runs_of(task, scoring);
        range(tuning.iter().chain(&runs).map(|r| r.steps_per_second()))
    }

    /// The record as the lines of `data/separate.tsv`.
    pub fn to_tsv(&self) -> String {
        let mut out = String::from(
            "# The separating runs of chapter 12, written by\n\
             #   cargo run --release -p chapter12 --example separate -- --record\n\
             # Every number is the engine's and the same on every machine, except \
             the\n# seconds, which are the machine's named below.\n",
        );
        writeln!(out, "machine\t{}", self.machine).unwrap();
        for (kind, runs) in [("tuning", &self.tuning), ("run", &self.runs)] {
            for r in runs {
                writeln!(
                    out,
                    "{kind}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    r.task.key(),
                    r.scoring.key(),
                    r.seed,
                    r.lr,
                    r.validation,
                    r.test,
                    r.train,
                    r.train_seconds
                )
                .unwrap();
                writeln!(out, "losses\t{}", floats(&r.losses)).unwrap();
                writeln!(out, "grad_norms\t{}", floats(&r.grad_norms)).unwrap();
            }
        }
        out
    }

    /// Reads the lines [`to_tsv`](SepRecord::to_tsv) writes.
    pub fn parse(text: &str) -> Result<SepRecord, String> {
        fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
            s.parse().map_err(|_| format!("not a number: {s:?}"))
        }
        let mut record = SepRecord {
            machine: String::new(),
            tuning: Vec::new(),
            runs: Vec::new(),
        };
        let mut tuning_last = false;
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[0] {
                "machine" => record.machine = fields[1..].join("\t"),
                kind @ ("tuning" | "run") if fields.len() == 9 => {
                    let run = SepRun {
                        task: Task::from_key(fields[1])
                            .ok_or_else(|| format!("no task {:?}", fields[1]))?,
                        scoring: Scoring::from_key(fields[2])
                            .ok_or_else(|| format!("no scoring {:?}", fields[2]))?,
                        seed: number(fields[3])?,
                        lr: number(fields[4])?,
                        validation: number(fields[5])?,
                        test: number(fields[6])?,
                        train: number(fields[7])?,
                        train_seconds: number(fields[8])?,
                        losses: Vec::new(),
                        grad_norms: Vec::new(),
                    };
                    tuning_last = kind == "tuning";
                    if tuning_last {
                        record.tuning.push(run);
                    } else {
                        record.runs.push(run);
                    }
                }
                "losses" | "grad_norms" => {
                    let values = fields[1..]
                        .iter()
                        .map(|s| number(s))
                        .collect::<Result<Vec<f32>, _>>()?;
                    let list = if tuning_last {
                        &mut record.tuning
                    } else {
                        &mut record.runs
                    };
                    let run = list
                        .last_mut()
                        .ok_or_else(|| format!("{} before any run", fields[0]))?;
                    if fields[0] == "losses" {
                        run.losses = values;
                    } else {
                        run.grad_norms = values;
                    }
                }
                _ => return Err(format!("cannot read {:?}", fields.join(" "))),
            }
        }
        Ok(record)
    }
}

/// The pairs of scorings whose ranges do not overlap, the higher first (`a > b`: the
/// smallest of `a` above the largest of `b`), and the pairs whose ranges do.
fn apart<T: Copy + PartialOrd>(
    ranges: &[(Scoring, (T, T))],
) -> (Vec<String>, Vec<String>) {
    let (mut separate, mut overlap) = (Vec::new(), Vec::new());
    for (i, &(a, ra)) in ranges.iter().enumerate() {
        for &(b, rb) in &ranges[i + 1..] {
            if ra.0 > rb.1 {
                separate.push(format!("{} > {}", a.name(), b.name()));
            } else if rb.0 > ra.1 {
                separate.push(format!("{} > {}", b.name(), a.name()));
            } else {
                overlap.push(format!("{} ~ {}", a.name(), b.name()));
            }
        }
    }
    (separate, overlap)
}

/// `items` joined by `, ` and wrapped at 86 columns, each line after the first
/// indented by two spaces; `none` when empty.
fn listed(head: &str, items: &[String]) -> String {
    let mut out = String::from(head);
    let mut line_len = head.len();
    if items.is_empty() {
        out.push_str(" none");
        return out + "\n";
    }
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!(" {item},")
        } else {
            format!(" {item}")
        };
        if line_len + piece.chars().count() > 86 {
            out.push_str("\n ");
            line_len = 1;
        }
        line_len += piece.chars().count();
        out.push_str(&piece);
    }
    out + "\n"
}

impl SepRecord {
    /// The tuning table of `task`: the validation exact match of each scoring at each
    /// rate, and the rate chosen.
    pub fn tuning_table(&self, task: Task) -> String {
        let mut out = format!(
            "{}: validation exact match ({VALIDATION} numbers) of seed \
             {TUNING_SEED},\n  {STEPS} steps of 64 at each peak rate\n",
            task.name()
        );
        write!(out, "{:<19}", "scoring").unwrap();
        for lr in RATES {
            write!(out, "{:>8}", lr.to_string()).unwrap();
        }
        writeln!(out, "  chosen").unwrap();
        for scoring in Scoring::ALL {
            write!(out, "{:<19}", scoring.name()).unwrap();
            for r in self.tuning_of(task, scoring) {
                write!(out, "{:>8.3}", r.validation).unwrap();
            }
            writeln!(out, "  {}", self.chosen(task, scoring)).unwrap();
        }
        out
    }

    /// The result table of `task`: test and training exact match over the seeds at
    /// each scoring's chosen rate, what each run's gradients and losses did after the
    /// warmup, and which scorings' test ranges do not overlap.
    pub fn result_table(&self, task: Task) -> String {
        let mut out = format!(
            "{}: seeds {SEEDS:?} at each scoring's chosen rate;\n  test: {TEST} \
             numbers; after the {WARMUP} warmup steps of each run: steps clipped\n  \
             (gradient norm above 1), the largest norm, loss spikes\n",
            task.name()
        );
        out.push_str(
            "                           test exact match    train  clipped  \
             largest  loss\nscoring              rate   mean    min    max   mean    \
             steps     norm  spikes\n",
        );
        let mut ranges = Vec::new();
        for scoring in Scoring::ALL {
            let runs = self.runs_of(task, scoring);
            let n = runs.len() as f32;
            let mean =
                |f: fn(&SepRun) -> f32| runs.iter().map(|r| f(r)).sum::<f32>() / n;
            let (lo, hi) = self.test_range(task, scoring);
            let (c_lo, c_hi) = range(runs.iter().map(|r| r.clipped_steps()));
            let largest = runs
                .iter()
                .map(|r| r.largest_grad_norm())
                .fold(0.0, f32::max);
            let spikes: usize = runs.iter().map(|r| r.spikes()).sum();
            writeln!(
                out,
                "{:<19}{:>7}  {:.3}  {lo:.3}  {hi:.3}  {:.3}  {:>7}  {largest:>7.2}  \
                 {spikes:>6}",
                scoring.name(),
                self.chosen(task, scoring).to_string(),
                mean(|r| r.test),
                mean(|r| r.train),
                format!("{c_lo}-{c_hi}"),
            )
            .unwrap();
            ranges.push((scoring, (lo, hi)));
        }
        let (separate, overlap) = apart(&ranges);
        out.push_str(&listed("test ranges apart:", &separate));
        out.push_str(&listed("overlapping:", &overlap));
        out
    }

    /// Steps per second of each scoring on each task, as the range over its six runs,
    /// the pairs whose ranges do not overlap, and the machine.
    pub fn speed_table(&self) -> String {
        let mut out = format!(
            "training steps per second, min-max over each scoring's {} runs per \
             task\n",
            RATES.len() + SEEDS.len()
        );
        write!(out, "{:<19}", "scoring").unwrap();
        for task in Task::ALL {
            write!(out, "  {:>26}", task.name()).unwrap();
        }
        out.push('\n');
        for scoring in Scoring::ALL {
            write!(out, "{:<19}", scoring.name()).unwrap();
            for task in Task::ALL {
                let (lo, hi) = self.speed_range(task, scoring);
                write!(out, "  {:>26}", format!("{lo:.1}-{hi:.1}")).unwrap();
            }
            out.push('\n');
        }
        for task in Task::ALL {
            let ranges: Vec<_> = Scoring::ALL
                .iter()
                .map(|&s| (s, self.speed_range(task, s)))
                .collect();
            let (separate, _) = apart(&ranges);
            out.push_str(&listed(
                &format!("faster, ranges apart ({}):", task.key()),
                &separate,
            ));
        }
        writeln!(
            out,
            "times: {};\n  one machine's runs, under load from other programs; not \
             compared by --check",
            self.machine
        )
        .unwrap();
        out
    }

    /// Every table, as `data/separate.txt` holds them, separated by blank lines.
    pub fn tables(&self) -> String {
        let mut parts = Vec::new();
        for task in Task::ALL {
            parts.push(self.tuning_table(task));
            parts.push(self.result_table(task));
        }
        parts.push(self.speed_table());
        parts.join("\n")
    }

    /// The first difference between `runs` and this record's runs of the same task,
    /// scoring, seed and rate (one of each), in anything but the time, or `Ok` when
    /// every one agrees to the last bit.
    pub fn check(&self, runs: &[SepRun]) -> Result<(), String> {
        for now in runs {
            let name = format!(
                "{} on {} from seed {} at {}",
                now.scoring.name(),
                now.task.key(),
                now.seed,
                now.lr
            );
            let then = self
                .tuning
                .iter()
                .chain(&self.runs)
                .find(|r| {
                    (r.task, r.scoring, r.seed, r.lr.to_bits())
                        == (now.task, now.scoring, now.seed, now.lr.to_bits())
                })
                .ok_or_else(|| format!("{name}: not recorded"))?;
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            if let Some(step) = (0..now.losses.len().max(then.losses.len()))
                .find(|&s| bits(&now.losses).get(s) != bits(&then.losses).get(s))
            {
                return Err(format!(
                    "{name}: the loss of step {step} is {:?} now and {:?} recorded",
                    now.losses.get(step),
                    then.losses.get(step)
                ));
            }
            if bits(&now.grad_norms) != bits(&then.grad_norms) {
                return Err(format!("{name}: the gradient norms differ"));
            }
            let scores =
                |r: &SepRun| [r.validation, r.test, r.train].map(f32::to_bits);
            if scores(now) != scores(then) {
                return Err(format!(
                    "{name}: validation, test, train {:?} now, {:?} recorded",
                    [now.validation, now.test, now.train],
                    [then.validation, then.test, then.train]
                ));
            }
        }
        Ok(())
    }
}

impl SepRecord {
    /// This record's results with `timed`'s times and machine: a fresh run printed
    /// with the recorded times gives the recorded tables exactly when everything else
    /// agrees.
    pub fn with_times_of(&self, timed: &SepRecord) -> SepRecord {
        let mut out = self.clone();
        out.machine = timed.machine.clone();
        for (run, t) in out.tuning.iter_mut().zip(&timed.tuning) {
            run.train_seconds = t.train_seconds;
        }
        for (run, t) in out.runs.iter_mut().zip(&timed.runs) {
            run.train_seconds = t.train_seconds;
        }
        out
    }
}
