//! # Chapter 9: Training with attention
//!
//! The code of the ninth lesson (the page is
//! `book/src/ch09-training-with-attention.md`): d2l's encoder–decoder with additive
//! attention, trained end to end to turn numbers written in English into digits.
//!
//! 1. The data: [`number_to_words`], [`source_tokens`] and [`target_tokens`] make the
//!    pairs, [`Vocab`] numbers the tokens, [`split`] draws disjoint training and
//!    held-out sets from a seed, and [`Batch`] pads a batch and records its valid
//!    lengths.
//! 2. The model: [`Encoder`] (a GRU), [`Decoder`] (a GRU cell that reads the
//!    attention context with each token) and [`Seq2Seq`]; the decoder's attention is
//!    anything that implements [`DecoderAttention`], additive by default.
//! 3. Training: [`masked_cross_entropy`], [`ResumableAdam`] (Adam with its state in
//!    the open), the schedule of [`TrainConfig`], and [`Trainer`], with teacher
//!    forcing, gradient clipping and a learning-rate warmup; [`progress_bar`] for the
//!    example.
//! 4. Decoding: [`greedy_decode`] and [`exact_match`], which also return where each
//!    step attended.
//! 5. Checkpoints: [`save_checkpoint`], [`save_weights`] and [`Checkpoint`] (read,
//!    load, resume), in the safetensors format, with [`CheckpointError`] saying what
//!    is wrong.
//! 6. [`plots`]: the loss curves and the alignment heatmap, from the recorded runs in
//!    `trained/`.
//! 7. [`tour`]: everything the page prints (`cargo run -p chapter09`).
//!
//! The full run is an example, `cargo run --release -p chapter09 --example train`;
//! with `--record` it writes the models in `trained/` that the page reads.
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

mod cache;
mod checkpoint;
pub mod coverage;
mod data;
mod decode;
mod model;
pub mod plots;
mod train;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub use cache::{
    AdditiveCache, StepCost, attend_projected, cached_greedy_decode, cached_step,
};
pub use checkpoint::{
    Checkpoint, CheckpointError, CheckpointInfo, save_checkpoint, save_weights,
    unexpected_moments,
};
pub use data::{
    BOS, Batch, EOS, PAD, Split, SplitMix64, Vocab, number_to_words, source_tokens,
    split, target_tokens,
};
pub use decode::{Translation, exact_match, greedy_decode};
pub use model::{Decoder, DecoderAttention, Encoder, Seq2Seq, Seq2SeqConfig};
pub use train::{
    EVAL_BATCH, History, ResumableAdam, StepReport, TrainConfig, Trainer,
    masked_cross_entropy, progress_bar,
};

use attention::prelude::*;

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter09: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// A recorded run of the chapter:
/// `chapters/chapter09/trained/{attention}.safetensors` (`additive` or
/// `dot-product`), written by `cargo run --release -p chapter09 --example train --
/// --record`.
pub fn trained_path(attention: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("trained/{attention}.safetensors"))
}

/// Reads a recorded run (see [`trained_path`]).
///
/// # Panics
/// When the file is missing or unreadable: the crate ships it.
pub fn recorded(attention: &str) -> Checkpoint {
    Checkpoint::read(trained_path(attention)).unwrap_or_else(|e| panic!("{e}"))
}

/// The recorded additive model, loaded into a fresh [`Seq2Seq`] in evaluation mode.
pub fn trained_additive() -> (Seq2Seq, Checkpoint) {
    let checkpoint = recorded("additive");
    let mut model = Seq2Seq::additive(checkpoint.model_config());
    checkpoint
        .load_weights(&model)
        .unwrap_or_else(|e| panic!("{e}"));
    model.eval();
    (model, checkpoint)
}

/// The held-out numbers whose decodings the page draws: the first held-out number
/// with a teen in the thousands (`… seventeen thousand …`), and the first that ends
/// in `thousand and …` (zeros the words never say).
pub fn alignment_examples(held_out: &[u32]) -> [u32; 2] {
    let teen_thousands =
        |n: &u32| (10..20).contains(&(n / 1000 % 100)) && n % 1000 >= 100;
    let zeros = |n: &u32| *n >= 1000 && n % 1000 < 100 && n % 100 >= 20;
    let first = |f: &dyn Fn(&u32) -> bool| {
        *held_out
            .iter()
            .find(|n| f(n))
            .expect("the held-out set has one")
    };
    [first(&teen_thousands), first(&zeros)]
}

/// The greedy decodings the heatmap draws, from the recorded additive model.
pub fn alignment_translations() -> Vec<Translation> {
    let (model, checkpoint) = trained_additive();
    let c = checkpoint.info.config;
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let numbers = alignment_examples(&held_out);
    greedy_decode(&model, &numbers, &Vocab::source(), &Vocab::target(), 7)
}

/// The recorded run with the coverage loss (`examples/coverage.rs`), loaded into a
/// fresh [`Seq2Seq`] in evaluation mode.
pub fn trained_coverage() -> (Seq2Seq, Checkpoint) {
    let checkpoint = recorded("coverage");
    let mut model = Seq2Seq::additive(checkpoint.model_config());
    checkpoint
        .load_weights(&model)
        .unwrap_or_else(|e| panic!("{e}"));
    model.eval();
    (model, checkpoint)
}

/// The numbers of [`alignment_translations`] decoded by the recorded model and by the
/// recorded coverage run, alternately: the panels of `ch09-coverage.svg`.
pub fn coverage_translations() -> Vec<(&'static str, Translation)> {
    let ((before, checkpoint), (after, _)) = (trained_additive(), trained_coverage());
    let c = checkpoint.info.config;
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let numbers = alignment_examples(&held_out);
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let before = greedy_decode(&before, &numbers, &src, &tgt, 7);
    let after = greedy_decode(&after, &numbers, &src, &tgt, 7);
    before
        .into_iter()
        .zip(after)
        .flat_map(|(b, a)| [("without", b), ("coverage λ = 1", a)])
        .collect()
}

/// Every figure of the chapter, by file name, drawn from the recorded runs.
pub fn figures() -> [(&'static str, String); 3] {
    let (additive, dot) = (recorded("additive"), recorded("dot-product"));
    [
        (
            "ch09-loss.svg",
            plots::loss_chart(&[
                ("additive", &additive),
                ("scaled dot-product", &dot),
            ]),
        ),
        (
            "ch09-alignment.svg",
            plots::alignment_heatmap(&alignment_translations(), &Vocab::target()),
        ),
        (
            "ch09-coverage.svg",
            plots::compared_heatmap(&coverage_translations(), &Vocab::target()),
        ),
    ]
}

/// A directory of its own under the system's temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir()
            .join(format!("chapter09-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `message` with this directory written as `$TMP`, so that the page's text does
    /// not depend on the machine.
    fn anonymise(&self, message: &str) -> String {
        message.replace(&self.0.display().to_string(), "$TMP")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The size of a file, in KiB.
fn kib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1024.0)
}

/// One line of a shape trace: what, its shape, and the shape in letters.
fn shape_line(what: &str, t: &Tensor, letters: &str) -> String {
    format!("{what:<34} {:<14} {letters}", format!("{:?}", t.shape()))
}

/// `head`, then `items` separated by commas, as many to a line as fit the book's
/// column; a continuation line starts two spaces in.
fn listing(head: &str, items: &[String]) -> String {
    let mut text = head.to_string();
    let mut width = text.chars().count();
    for (i, item) in items.iter().enumerate() {
        let comma = if i + 1 < items.len() { "," } else { "" };
        let more = 1 + item.chars().count() + comma.len();
        if i > 0 && width + more > lesson::COLUMNS {
            text.push_str("\n ");
            width = 1;
        }
        text.push_str(&format!(" {item}{comma}"));
        width += more;
    }
    text
}

/// A weights matrix as a text table, rows and columns labelled, two decimals.
pub fn table(values: &[Vec<f32>], rows: &[String], cols: &[String]) -> String {
    let width = rows.iter().map(|r| r.chars().count()).max().unwrap_or(0);
    let cell = cols
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut text = format!("{:width$}", "");
    for c in cols {
        text.push_str(&format!(" {c:>cell$}"));
    }
    for (r, row) in rows.iter().zip(values) {
        text.push_str(&format!("\n{r:<width$}"));
        for v in row {
            text.push_str(&format!(" {v:>cell$.2}"));
        }
    }
    text
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter09`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    line("== 1. The task".into());
    // ANCHOR: tour_task
    for n in [342, 12, 40_005, 700_000, 919_919] {
        line(format!(
            "{n:>7}  {} -> {}",
            source_tokens(n).join(" "),
            target_tokens(n).join(" ")
        ));
    }
    let (src_vocab, tgt_vocab) = (Vocab::source(), Vocab::target());
    line(format!(
        "source vocabulary: {} tokens, target vocabulary: {} tokens",
        src_vocab.len(),
        tgt_vocab.len()
    ));
    line(format!(
        "longest source: {} words (and <eos>), e.g. 777777",
        source_tokens(777_777).len()
    ));
    let c = TrainConfig::chapter();
    let s = split(c.max_number, c.train_size, c.held_out, c.seed);
    let train: std::collections::HashSet<u32> = s.train.iter().copied().collect();
    let overlap = s.held_out.iter().filter(|n| train.contains(n)).count();
    line(format!(
        "split: {} training numbers, {} held out, {overlap} in both",
        s.train.len(),
        s.held_out.len()
    ));
    // ANCHOR_END: tour_task

    line("\n== 2. A batch".into());
    // ANCHOR: tour_batch
    let batch = Batch::new(&[342, 12, 40_005], &src_vocab, &tgt_vocab);
    line(batch.to_string().trim_end().to_string());
    let lens =
        |t: &Tensor| t.to_vec().iter().map(|&x| x as usize).collect::<Vec<_>>();
    line(format!(
        "src {:?}  src_lens {:?}",
        batch.src.shape(),
        lens(&batch.src_lens)
    ));
    line(format!(
        "dec_input {:?}  tgt {:?}  tgt_lens {:?}",
        batch.dec_input.shape(),
        batch.tgt.shape(),
        lens(&batch.tgt_lens)
    ));
    let row = |t: &Tensor, i: usize, vocab: &Vocab| {
        let v = t.narrow(0, i, 1).to_vec();
        vocab.decode(&v.iter().map(|&x| x as usize).collect::<Vec<_>>(), " ")
    };
    line(format!(
        "dec_input of 12: {}",
        row(&batch.dec_input, 1, &tgt_vocab)
    ));
    line(format!(
        "tgt of 12:       {}",
        row(&batch.tgt, 1, &tgt_vocab)
    ));
    // ANCHOR_END: tour_batch

    line("\n== 3. The model, shape by shape".into());
    // ANCHOR: tour_shapes
    engine::manual_seed(0);
    let model = Seq2Seq::additive(c.model());
    let (enc_outputs, state) = model.encoder.forward(&batch.src, &batch.src_lens);
    let mask = Mask::valid_lens(&batch.src_lens);
    let bos = Tensor::full([3], Vocab::BOS_ID as f32);
    let (context, weights) =
        model
            .decoder
            .attention()
            .attend(&state, &enc_outputs, &mask);
    let embedded = model.decoder.embedding().forward(&bos);
    let input = Tensor::concat(&[&context, &embedded], -1);
    let (next, _) = model.decoder.step(&bos, &state, &enc_outputs, &mask);
    let logits = model.forward(&batch.src, &batch.src_lens, &batch.dec_input);
    for (what, t, letters) in [
        ("src", &batch.src, "[B, S]"),
        (
            "encoder embedding",
            &model.encoder.embedding().forward(&batch.src),
            "[B, S, E]",
        ),
        ("enc_outputs (keys and values)", &enc_outputs, "[B, S, H]"),
        ("state at the last real token", &state, "[B, H]"),
        ("step 0: context", &context, "[B, H]"),
        ("step 0: attention weights", &weights, "[B, S]"),
        ("step 0: embedding of <bos>", &embedded, "[B, E]"),
        ("step 0: GRU input, context ‖ emb.", &input, "[B, H + E]"),
        ("step 0: next state", &next, "[B, H]"),
        ("teacher forcing: logits", &logits, "[B, T, V]"),
    ] {
        line(shape_line(what, t, letters));
    }
    line(format!("weights at step 0 (initialisation):\n{weights:.3}"));
    // ANCHOR_END: tour_shapes
    // ANCHOR: tour_parameters
    let decoder = &model.decoder;
    line(format!(
        "parameters: encoder {}, attention {}, decoder GRU {},",
        model.encoder.num_parameters(),
        decoder.attention().num_parameters(),
        decoder.rnn().num_parameters(),
    ));
    line(format!(
        "  decoder embedding and output {}, total {}",
        decoder.embedding().num_parameters() + decoder.dense().num_parameters(),
        model.num_parameters()
    ));
    // ANCHOR_END: tour_parameters

    line("\n== 4. The masked loss".into());
    // ANCHOR: tour_loss
    let loss = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
    let every_position = logits.cross_entropy(&batch.tgt, Reduction::Mean);
    line(format!(
        "masked loss {:.4}  (ln V = ln {} = {:.4}); counting the padding too: {:.4}",
        loss.item(),
        tgt_vocab.len(),
        libm::logf(tgt_vocab.len() as f32),
        every_position.item()
    ));
    // ANCHOR_END: tour_loss

    line("\n== 5. A short run, stopped and resumed".into());
    // ANCHOR: tour_short
    let short = TrainConfig::short();
    line(format!(
        "numbers below {}, {} training; E = {}, H = {};",
        short.max_number, short.train_size, short.embed_size, short.num_hiddens,
    ));
    line(format!(
        "  {} steps of {}, lr {} after {} warmup steps",
        short.steps, short.batch_size, short.lr, short.warmup
    ));
    let mut straight = Trainer::additive(short);
    straight.train_until(short.steps, |_| {});
    let losses = &straight.history.losses;
    for step in (0..short.steps).step_by(10).chain([short.steps - 1]) {
        line(format!(
            "step {step:>2}  lr {:.4}  loss {:.4}",
            short.lr_at(step),
            losses[step]
        ));
    }
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    let factor = mean(&losses[..5]) / mean(&losses[losses.len() - 5..]);
    line(format!(
        "mean of the first 5 losses / mean of the last 5: {factor:.2}"
    ));
    // ANCHOR_END: tour_short
    // ANCHOR: tour_resume
    let scratch = Scratch::new();
    let (full, weights_only) = (
        scratch.path("full.safetensors"),
        scratch.path("weights.safetensors"),
    );
    let mut first = Trainer::additive(short);
    first.train_until(30, |_| {});
    save_checkpoint(&first, &full).expect("a writable temporary directory");
    save_weights(&first, &weights_only).expect("a writable temporary directory");
    let mut resumed = Checkpoint::read(&full)
        .and_then(|c| c.resume(Seq2Seq::additive))
        .expect("the checkpoint just written");
    resumed.train_until(short.steps, |_| {});
    let loss_diff = losses
        .iter()
        .zip(&resumed.history.losses)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    let same_weights = straight
        .model
        .state_dict()
        .iter()
        .zip(resumed.model.state_dict().iter())
        .all(|((_, a), (_, b))| a.to_vec() == b.to_vec());
    line("resumed at step 30 from a full checkpoint:".into());
    line(format!(
        "  largest loss difference {}, same weights at step {}: {}",
        loss_diff, short.steps, same_weights
    ));
    // The same weights, but Adam starting again from zero moments.
    let mut restarted = Trainer::additive(short);
    Checkpoint::read(&weights_only)
        .and_then(|c| c.load_weights(&restarted.model))
        .expect("the weights just written");
    (restarted.step, restarted.history) = (30, first.history.clone());
    restarted.train_until(short.steps, |_| {});
    line("step  straight  zero moments".into());
    for step in [30, 31, 32, 33, 34, 40, 50, 59] {
        line(format!(
            "{step:>4}  {:>8.4}  {:>12.4}",
            losses[step], restarted.history.losses[step]
        ));
    }
    let tensors = Checkpoint::read(&full).expect("written above").tensors;
    let adam = tensors.names().filter(|n| n.starts_with("adam.")).count();
    line(format!(
        "full checkpoint: {} tensors ({} of the model, {adam} of Adam), {:.1} KiB;",
        tensors.len(),
        tensors.len() - adam,
        kib(&full),
    ));
    line(format!("  weights only: {:.1} KiB", kib(&weights_only)));
    // ANCHOR_END: tour_resume

    line("\n== 6. When a checkpoint is wrong".into());
    // ANCHOR: tour_errors
    // A file cut short, as by a crash in the middle of a copy.
    let bytes = std::fs::read(&full).expect("written above");
    let truncated = scratch.path("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).expect("writable");
    // A tensor missing, and a tensor of another shape.
    let mut missing = Checkpoint::read(&full).expect("written above");
    missing.tensors = missing
        .tensors
        .iter()
        .filter(|(n, _)| *n != "model.decoder.attention.W_k.weight")
        .map(|(n, t)| (n, t.clone()))
        .collect();
    missing
        .write(scratch.path("missing.safetensors"))
        .expect("writable");
    let mut reshaped = Checkpoint::read(&full).expect("written above");
    reshaped
        .tensors
        .insert("model.decoder.dense.weight", Tensor::zeros([13, 16]));
    reshaped
        .write(scratch.path("reshaped.safetensors"))
        .expect("writable");
    for (file, resume) in [
        ("truncated.safetensors", false),
        ("missing.safetensors", false),
        ("reshaped.safetensors", false),
        ("weights.safetensors", true),
        ("nowhere.safetensors", false),
    ] {
        let model = Seq2Seq::additive(short.model());
        let result = Checkpoint::read(scratch.path(file)).and_then(|c| {
            if resume {
                c.resume(Seq2Seq::additive).map(|_| ())
            } else {
                c.load_weights(&model)
            }
        });
        match result {
            Ok(()) => line(format!("{file}: loaded")),
            Err(e) => line(lesson::wrap(
                &scratch.anonymise(&e.to_string()),
                lesson::COLUMNS,
            )),
        }
    }
    // ANCHOR_END: tour_errors

    line("\n== 7. The chapter's run (recorded in trained/)".into());
    // ANCHOR: tour_recorded
    let (model, additive) = trained_additive();
    let dot = recorded("dot-product");
    let c = additive.info.config;
    line(format!(
        "numbers below {}, {} training, {} held out; {} steps of {},",
        c.max_number, c.train_size, c.held_out, c.steps, c.batch_size,
    ));
    line(format!(
        "  lr {} after {} warmup steps falling to {}, clip {}, E = {}, H = {}",
        c.lr, c.warmup, c.final_lr, c.clip, c.embed_size, c.num_hiddens
    ));
    line(format!(
        "{:>5}  {:>19}  {:>19}",
        "", "additive", "scaled dot-product"
    ));
    line(format!(
        "{:>5}  {:>8} {:>10}  {:>8} {:>10}",
        "step", "loss", "held-out", "loss", "held-out"
    ));
    for (i, &(step, acc)) in additive.info.history.held_out.iter().enumerate() {
        let window = |h: &History| mean(&h.losses[step.saturating_sub(100)..step]);
        let (_, dot_acc) = dot.info.history.held_out[i];
        line(format!(
            "{step:>5}  {:>8.4} {acc:>10.3}  {:>8.4} {dot_acc:>10.3}",
            window(&additive.info.history),
            window(&dot.info.history),
        ));
    }
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let (accuracy, translations) =
        exact_match(&model, &held_out, &src_vocab, &tgt_vocab, EVAL_BATCH);
    line("decoded now from trained/additive.safetensors:".into());
    line(format!(
        "  held-out exact match {accuracy:.3} ({} of {})",
        translations
            .iter()
            .filter(|t| t.is_exact(&tgt_vocab))
            .count(),
        translations.len()
    ));
    let monotonic = translations.iter().filter(|t| t.is_monotonic()).count();
    line(format!(
        "alignments that never move back: {monotonic} of {}",
        translations.len()
    ));
    line("  (each step's most attended word at or after the previous step's)".into());
    for t in translations.iter().filter(|t| !t.is_monotonic()).take(2) {
        let (words, digits) = (
            plots::source_labels(t.number),
            plots::target_labels(t, &tgt_vocab),
        );
        let steps: Vec<String> = digits
            .iter()
            .zip(t.focus())
            .map(|(digit, word)| format!("{digit} ← {}", words[word]))
            .collect();
        line(listing(&format!("moves back, {}:", t.number), &steps));
    }
    for t in translations.iter().take(5) {
        line(format!(
            "{:>7}  {:<62} -> {}",
            t.number,
            number_to_words(t.number),
            t.text(&tgt_vocab)
        ));
    }
    let wrong: Vec<&Translation> = translations
        .iter()
        .filter(|t| !t.is_exact(&tgt_vocab))
        .collect();
    for t in wrong.iter().take(2) {
        line(format!(
            "wrong: {} ({}) -> {}",
            t.number,
            number_to_words(t.number),
            t.text(&tgt_vocab)
        ));
        let cols = plots::target_labels(t, &tgt_vocab);
        line(table(
            &plots::by_word(t),
            &plots::source_labels(t.number),
            &cols,
        ));
    }
    // ANCHOR_END: tour_recorded
    // ANCHOR: tour_small
    let train = split(c.max_number, c.train_size, c.held_out, c.seed).train;
    let small = train.iter().filter(|&&n| n < 1000).count();
    line(format!(
        "training numbers below 1000: {small} of {}",
        train.len()
    ));
    let numbers = [0, 7, 10, 42, 100, 999, 1000];
    let small: Vec<String> =
        greedy_decode(&model, &numbers, &src_vocab, &tgt_vocab, 7)
            .iter()
            .map(|t| {
                let mark = if t.is_exact(&tgt_vocab) { "" } else { " ✗" };
                format!(
                    "{} -> {}{mark}",
                    number_to_words(t.number),
                    t.text(&tgt_vocab)
                )
            })
            .collect();
    line(listing("small numbers:", &small));
    // ANCHOR_END: tour_small
    // ANCHOR: tour_alignment
    for t in alignment_translations() {
        line(format!(
            "alignment of {} ({}):",
            t.number,
            number_to_words(t.number)
        ));
        let cols = plots::target_labels(&t, &tgt_vocab);
        line(table(
            &plots::by_word(&t),
            &plots::source_labels(t.number),
            &cols,
        ));
    }
    // ANCHOR_END: tour_alignment
    out
}

/// The cached decoder against the one that projects the keys at every step: the
/// held-out set decoded both ways and compared bit for bit, and the multiply-adds of a
/// step counted by hand ([`StepCost`]). The page quotes it.
pub fn cache_section() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    // ANCHOR: tour_cache
    let (model, checkpoint) = trained_additive();
    let c = checkpoint.info.config;
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let (mut same_tokens, mut same_steps, mut steps) = (0, 0, 0);
    for chunk in held_out.chunks(EVAL_BATCH) {
        let again = greedy_decode(&model, chunk, &src, &tgt, 7);
        let cached = cached_greedy_decode(&model, chunk, &src, &tgt, 7);
        for (a, b) in again.iter().zip(&cached) {
            same_tokens += usize::from(a.ids == b.ids);
            steps += a.weights.len();
            // Bit for bit: every weight's f32 bits, step by step.
            let bits =
                |r: &Vec<f32>| r.iter().map(|w| w.to_bits()).collect::<Vec<_>>();
            same_steps += a
                .weights
                .iter()
                .zip(&b.weights)
                .filter(|(x, y)| bits(x) == bits(y))
                .count();
        }
    }
    line(format!(
        "held-out, decoded with W_k k cached: same tokens in {same_tokens} of {}",
        held_out.len()
    ));
    line(format!(
        "  translations; the same weights, bit for bit, at {same_steps} of {steps} \
         steps"
    ));
    let m = model.config();
    line(format!(
        "multiply-adds of one step for one sentence (E = {}, H = h = {}, V = {}):",
        m.embed_size, m.num_hiddens, m.tgt_vocab
    ));
    line(format!(
        "{:>9} {:>14} {:>9} {:>11} {:>7} {:>6}",
        "source s", "W_k k: s·h·H", "the rest", "recomputed", "cached", "saved"
    ));
    let lens: Vec<usize> = held_out
        .iter()
        .map(|&n| source_tokens(n).len() + 1)
        .collect();
    let shortest = *lens.iter().min().expect("a held-out set");
    let longest = *lens.iter().max().expect("a held-out set");
    let mean = lens.iter().sum::<usize>() as f64 / lens.len() as f64;
    for s in [2, shortest, longest] {
        let cost = StepCost::of(m, s);
        line(format!(
            "{s:>9} {:>14} {:>9} {:>11} {:>7} {:>5.1}%",
            cost.keys,
            cost.rest,
            cost.recomputed(),
            cost.cached(),
            100.0 * cost.keys as f64 / cost.recomputed() as f64
        ));
    }
    line(format!(
        "s = 2 is `seven <eos>`; the held-out sources have {shortest} to {longest} \
         tokens, {mean:.1} on average"
    ));
    // ANCHOR_END: tour_cache
    out
}

/// The coverage run against the recorded one: their held-out scores every 100 steps,
/// and where each model looks ([`coverage::tables`]). The page quotes it.
pub fn coverage_section() -> String {
    // ANCHOR: tour_coverage
    let ((before, without), (after, with)) = (trained_additive(), trained_coverage());
    let c = without.info.config;
    let s = split(c.max_number, c.train_size, c.held_out, c.seed);
    let mut out = format!(
        "{:>5} {:>10} {:>10}   held-out exact match during training\n",
        "step", "without", "coverage"
    );
    for (&(step, a), &(_, b)) in without
        .info
        .history
        .held_out
        .iter()
        .zip(&with.info.history.held_out)
    {
        out.push_str(&format!("{step:>5} {a:>10.3} {b:>10.3}\n"));
    }
    out.push_str(&coverage::tables(
        &[("without", &before), ("coverage", &after)],
        &s.train,
        &s.held_out,
    ));
    // ANCHOR_END: tour_coverage
    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch09-training-with-attention.md")]
struct Book;
