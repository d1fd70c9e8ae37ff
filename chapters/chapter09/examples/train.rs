//! The chapter's full training run, with a progress bar, held-out scores and
//! checkpoints:
//!
//! ```console
//! cargo run --release -p chapter09 --example train
//! cargo run --release -p chapter09 --example train -- --stop-after 400   # stop early
//! cargo run --release -p chapter09 --example train -- --resume           # and go on
//! cargo run --release -p chapter09 --example train -- --attention dot-product
//! cargo run --release -p chapter09 --example train -- --record           # update the crate's models
//! cargo run --release -p chapter09 --example train -- --check            # reproduce them, bit for bit
//! ```
//!
//! Options:
//! - `--steps N`: train for N steps in all (default: the chapter's 1,000).
//! - `--stop-after N`: stop once N steps are done, after saving a checkpoint.
//! - `--resume`: continue from the checkpoint (config, step, weights, Adam's
//!   moments).
//! - `--checkpoint PATH`: where checkpoints go (default
//!   `target/chapter09/<attention>.checkpoint.safetensors`).
//! - `--checkpoint-every N`: save every N steps (default 250), and at the end.
//! - `--attention additive|dot-product`: the decoder's attention (dot-product runs
//!   your exercise 1, or the reference solution out of the box).
//! - `--record`: also write the weights, config and history to
//!   `chapters/chapter09/trained/<attention>.safetensors`, the models the page reads
//!   (the chapter's settings only).
//! - `--check`: train with the chapter's settings and compare the run with the
//!   recorded one: every step's loss, every held-out score, and the model file byte
//!   for byte (its SHA-256 is printed). Fails at the first difference. The kernels
//!   give the same bits on every CPU, so this passes on any machine and with any
//!   `ENGINE_KERNEL`.
//! - `--device cpu|gpu|best`: where to train (default: the environment variable
//!   `ENGINE_DEVICE`, else the CPU). The GPU needs the engine's `wgpu` feature:
//!   `cargo run --release --features engine/wgpu -p chapter09 --example train --
//!   --device gpu`. A GPU computes the same losses to f32 rounding, not bit for bit,
//!   so `--record` and `--check` run on the CPU only.
//!
//! Prints the held-out exact-match accuracy every 100 steps and the wall time at the
//! end.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use engine::Device;
use sha2::{Digest, Sha256};

use chapter09::exercises::ScaledDotProduct;
use chapter09::{
    Checkpoint, DecoderAttention, Seq2Seq, TrainConfig, Trainer, number_to_words,
    progress_bar, save_checkpoint, save_weights, trained_path,
};

/// How often the held-out set is scored.
const EVAL_EVERY: usize = 100;

/// The command line.
struct Options {
    steps: Option<usize>,
    stop_after: Option<usize>,
    resume: bool,
    checkpoint: Option<PathBuf>,
    checkpoint_every: usize,
    dot_product: bool,
    record: bool,
    check: bool,
    device: Option<String>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        steps: None,
        stop_after: None,
        resume: false,
        checkpoint: None,
        checkpoint_every: 250,
        dot_product: false,
        record: false,
        check: false,
        device: None,
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, v: Option<String>| -> Result<usize, String> {
        v.and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a whole number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => o.steps = Some(number("--steps", args.next())?),
            "--stop-after" => {
                o.stop_after = Some(number("--stop-after", args.next())?)
            }
            "--resume" => o.resume = true,
            "--checkpoint" => {
                o.checkpoint =
                    Some(args.next().ok_or("--checkpoint needs a path")?.into())
            }
            "--checkpoint-every" => {
                o.checkpoint_every = number("--checkpoint-every", args.next())?.max(1)
            }
            "--attention" => match args.next().as_deref() {
                Some("additive") => o.dot_product = false,
                Some("dot-product") => o.dot_product = true,
                _ => return Err("--attention takes additive or dot-product".into()),
            },
            "--record" => o.record = true,
            "--check" => o.check = true,
            "--device" => {
                o.device = Some(args.next().ok_or("--device takes cpu, gpu or best")?)
            }
            other => {
                return Err(format!(
                    "unknown option {other} (see the top of examples/train.rs)"
                ));
            }
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = if options.dot_product {
        run(&options, "dot-product", |c| {
            Seq2Seq::new(c, ScaledDotProduct)
        })
    } else {
        run(&options, "additive", Seq2Seq::additive)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run<A: DecoderAttention>(
    options: &Options,
    name: &str,
    build: fn(chapter09::Seq2SeqConfig) -> Seq2Seq<A>,
) -> Result<(), Box<dyn std::error::Error>> {
    let path = options.checkpoint.clone().unwrap_or_else(|| {
        PathBuf::from(format!("target/chapter09/{name}.checkpoint.safetensors"))
    });
    let mut trainer = if options.resume {
        let trainer = Checkpoint::read(&path)?.resume(build)?;
        println!("resumed from {} at step {}", path.display(), trainer.step);
        trainer
    } else {
        Trainer::new(TrainConfig::chapter(), build)
    };
    if let Some(steps) = options.steps {
        trainer.config.steps = steps;
    }
    if options.record && trainer.config != TrainConfig::chapter() {
        return Err("--record needs the chapter's settings (no --steps)".into());
    }
    if options.check
        && (options.resume || options.stop_after.is_some() || options.record)
    {
        return Err("--check trains the whole run from step 0: leave out --resume, --stop-after and --record".into());
    }
    if options.check && trainer.config != TrainConfig::chapter() {
        return Err("--check needs the chapter's settings (no --steps)".into());
    }
    let device = match &options.device {
        Some(name) => Device::named(name)?,
        None => Device::from_env()?,
    };
    if !device.is_cpu() && (options.check || options.record) {
        return Err("--check and --record compare bits the CPU defines: run them on the CPU (leave out --device)".into());
    }
    trainer.to_device(&device);
    let c = trainer.config;
    println!(
        "{name} attention: numbers below {}, {} to train on, {} held out;",
        c.max_number, c.train_size, c.held_out,
    );
    println!(
        "  {} steps of {} examples, lr {} after {} warmup steps falling to {},",
        c.steps, c.batch_size, c.lr, c.warmup, c.final_lr,
    );
    println!(
        "  clip {}, embeddings {}, hidden {}; {} parameters",
        c.clip,
        c.embed_size,
        c.num_hiddens,
        engine::nn::Module::num_parameters(&trainer.model)
    );
    println!("training on {device}");
    let until = options.stop_after.unwrap_or(c.steps).min(c.steps);

    // ANCHOR: loop
    let (start, first_step) = (Instant::now(), trainer.step);
    let bar = progress_bar(c.steps);
    bar.set_position(trainer.step as u64);
    let mut last_eval = None;
    while trainer.step < until {
        let report = trainer.train_step();
        bar.set_message(format!("loss {:.4}", report.loss));
        bar.inc(1);
        if trainer.step % EVAL_EVERY == 0 || trainer.step == c.steps {
            let recent =
                &trainer.history.losses[trainer.step.saturating_sub(EVAL_EVERY)..];
            let mean = recent.iter().sum::<f32>() / recent.len() as f32;
            let (accuracy, translations) = trainer.evaluate();
            let line = format!(
                "step {:>5}  mean loss {mean:.4}  held-out exact match {accuracy:.3}",
                trainer.step
            );
            // Printed through the bar, which is redrawn below the line (and which
            // stays hidden when standard error is not a terminal).
            bar.suspend(|| println!("{line}"));
            last_eval = Some((accuracy, translations));
        }
        if trainer.step % options.checkpoint_every == 0 || trainer.step == until {
            save_checkpoint(&trainer, &path)?;
        }
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f32();
    // ANCHOR_END: loop

    println!("checkpoint: {} (step {})", path.display(), trainer.step);
    println!(
        "wall time: {seconds:.1} s for steps {first_step} to {} (this machine, this run)",
        trainer.step
    );
    if trainer.step < c.steps {
        println!("stopped early; continue with --resume");
        return Ok(());
    }
    let (accuracy, translations) = match last_eval {
        Some(eval) => eval,
        None => trainer.evaluate(),
    };
    let wrong: Vec<_> = translations
        .iter()
        .filter(|t| !t.is_exact(&trainer.tgt_vocab))
        .collect();
    println!(
        "held-out exact match: {accuracy:.3} ({} of {} wrong)",
        wrong.len(),
        translations.len()
    );
    for t in wrong.iter().take(10) {
        println!(
            "  {:>6} {:?} -> {}",
            t.number,
            number_to_words(t.number),
            t.text(&trainer.tgt_vocab)
        );
    }
    if options.check {
        return check_against_recording(&trainer, name);
    }
    if options.record {
        let record = trained_path(name);
        save_weights(&trainer, &record)?;
        println!(
            "recorded the model, its config and its history in {}",
            record.display()
        );
    }
    Ok(())
}

/// Compares a finished run with the recorded one: every loss, every held-out score,
/// and the model file, byte for byte.
fn check_against_recording<A: DecoderAttention>(
    trainer: &Trainer<A>,
    name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let recorded = chapter09::recorded(name);
    let (now, then) = (&trainer.history, &recorded.info.history);
    if let Some(step) = (0..now.losses.len().max(then.losses.len())).find(|&s| {
        now.losses.get(s).map(|l| l.to_bits())
            != then.losses.get(s).map(|l| l.to_bits())
    }) {
        return Err(format!(
            "--check: the loss of step {step} is {:?} now and {:?} in the recording",
            now.losses.get(step),
            then.losses.get(step)
        )
        .into());
    }
    println!("losses: all {} the same bits as recorded", now.losses.len());
    if now.held_out != then.held_out {
        return Err(format!(
            "--check: held-out scores {:?} now, {:?} in the recording",
            now.held_out, then.held_out
        )
        .into());
    }
    println!("held-out scores: all {} as recorded", now.held_out.len());
    let record = trained_path(name);
    let written = PathBuf::from(format!("target/chapter09/{name}.check.safetensors"));
    save_weights(trainer, &written)?;
    let read = |path: &PathBuf| {
        std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (ours, theirs) = (read(&written)?, read(&record)?);
    let hash = |bytes: &[u8]| {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    println!("model trained now: {}  {}", hash(&ours), written.display());
    println!("model recorded:    {}  {}", hash(&theirs), record.display());
    if ours != theirs {
        return Err("--check: the model differs from the recorded one".into());
    }
    println!(
        "the run reproduces the recording bit for bit (kernel path {})",
        engine::kernels::active()
    );
    Ok(())
}
