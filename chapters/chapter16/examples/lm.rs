//! The character model's full run, with a progress bar, the validation loss, samples
//! and checkpoints:
//!
//! ```console
//! cargo run --release -p chapter16 --example lm
//! cargo run --release -p chapter16 --example lm -- --stop-after 600   # stop early
//! cargo run --release -p chapter16 --example lm -- --resume           # and go on
//! cargo run --release -p chapter16 --example lm -- --record           # update trained/
//! ```
//!
//! Options:
//! - `--stop-after N`: stop once N steps are done, after saving a checkpoint.
//! - `--resume`: continue from the checkpoint: the weights, Adam's moments and
//!   counts, the step and the history. The resumed run is the straight one, bit for
//!   bit (the batch of a step depends on the step alone).
//! - `--checkpoint PATH`: where checkpoints go (default
//!   `target/chapter16/lm.checkpoint.safetensors`), saved every 500 steps and at the
//!   end.
//! - `--record`: also write the weights, config, history and wall time to
//!   `chapters/chapter16/trained/lm.safetensors`, the model the page reads.
//!
//! Prints the validation loss as it is measured, then samples of the trained model.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use chapter09::progress_bar;
use chapter16::corpus::Corpus;
use chapter16::lm::{Sampling, generate};
use chapter16::lm_train::{LmTrainConfig, LmTrainer, resume_lm, save_lm_checkpoint};
use chapter16::record::{LM_FILE, LmRecord, crate_path, save_record};
use engine::nn::Module;

/// Steps between two checkpoints.
const CHECKPOINT_EVERY: usize = 500;

struct Options {
    stop_after: Option<usize>,
    resume: bool,
    checkpoint: PathBuf,
    record: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        stop_after: None,
        resume: false,
        checkpoint: PathBuf::from("target/chapter16/lm.checkpoint.safetensors"),
        record: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stop-after" => {
                let n = args.next().ok_or("--stop-after needs a number of steps")?;
                o.stop_after = Some(
                    n.parse()
                        .map_err(|_| format!("--stop-after {n}: not a number"))?,
                );
            }
            "--resume" => o.resume = true,
            "--checkpoint" => {
                o.checkpoint = args.next().ok_or("--checkpoint needs a path")?.into()
            }
            "--record" => o.record = true,
            other => {
                return Err(format!(
                    "unknown option {other}; the options are --stop-after N, --resume, \
                     --checkpoint PATH and --record"
                ));
            }
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let o = options()?;
    let corpus = Corpus::shipped();
    let mut trainer = if o.resume {
        let t = resume_lm(&o.checkpoint, corpus).map_err(|e| e.to_string())?;
        println!("resumed at step {} from {}", t.step, o.checkpoint.display());
        t
    } else {
        LmTrainer::new(LmTrainConfig::chapter(corpus.vocab.len()), corpus)
    };
    let c = trainer.config;
    println!(
        "{} parameters; {} steps of {} × {} characters",
        trainer.model.num_parameters(),
        c.steps,
        c.batch_size,
        c.model.block_size
    );
    let end = o.stop_after.unwrap_or(c.steps).min(c.steps);
    let bar = progress_bar(c.steps);
    bar.set_position(trainer.step as u64);
    let start = Instant::now();
    std::fs::create_dir_all(o.checkpoint.parent().unwrap_or(&PathBuf::from(".")))
        .map_err(|e| format!("{}: {e}", o.checkpoint.display()))?;
    while trainer.step < end {
        let loss = trainer.train_step();
        bar.set_position(trainer.step as u64);
        bar.set_message(format!("loss {loss:.3}"));
        if trainer.step.is_multiple_of(c.eval_every) {
            let (step, val) = *trainer.history.val.last().expect("just measured");
            bar.suspend(|| println!("step {step:>5}  validation loss {val:.4}"));
        }
        if trainer.step.is_multiple_of(CHECKPOINT_EVERY) || trainer.step == end {
            save_lm_checkpoint(&trainer, &o.checkpoint).map_err(|e| e.to_string())?;
        }
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f32();
    println!("{} steps in {seconds:.0} s", trainer.step);
    if trainer.step < c.steps {
        println!("stopped; continue with --resume");
        return Ok(());
    }
    trainer.model.eval();
    let prompt = trainer.corpus.vocab.encode("Alice ");
    // The samples the page quotes: the same model, settings and seeds.
    for (temperature, top_k) in [(0.8, Some(10)), (1.0, None), (0.0, None)] {
        let sampling = Sampling {
            temperature,
            top_k,
            seed: 0,
        };
        let ids = generate(&trainer.model, &prompt, 240, &sampling, true);
        println!(
            "\n--- temperature {temperature}, top-k {top_k:?}:\nAlice {}",
            trainer.corpus.vocab.decode(&ids)
        );
    }
    if o.record {
        if o.resume {
            return Err("--record needs a straight run, for its wall time".into());
        }
        let record = LmRecord {
            config: c,
            history: trainer.history.clone(),
            seconds,
            machine: format!(
                "{}, {} threads",
                lesson::cpu_name(),
                engine::threads::num_threads()
            ),
        };
        let path = crate_path(LM_FILE);
        save_record(&path, &trainer.model, &record).map_err(|e| e.to_string())?;
        println!("recorded in {}", path.display());
    }
    Ok(())
}
