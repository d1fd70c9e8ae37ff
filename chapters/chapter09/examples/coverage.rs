//! The chapter's run again, with See et al.'s coverage loss (2017, §2.3) added to the
//! masked cross-entropy at `λ = 1`, and the attention of both models measured on the
//! held-out set:
//!
//! ```console
//! cargo run --release -p chapter09 --example coverage             # train and compare
//! cargo run --release -p chapter09 --example coverage -- --record # update trained/coverage.safetensors
//! cargo run --release -p chapter09 --example coverage -- --check  # reproduce it, bit for bit
//! ```
//!
//! The run has the chapter's settings (`TrainConfig::chapter()`, 1,000 steps) and
//! scores the held-out set every 100 steps, as `examples/train.rs` does; the
//! unpenalised run it is compared with is the recorded `trained/additive.safetensors`.
//! `--check` trains again and compares every loss, every held-out score and the model
//! file, byte for byte, with `trained/coverage.safetensors`; the tables it prints are
//! the ones the page quotes (section 8 of the tour reads the recorded files).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use chapter09::coverage::{COVERAGE_WEIGHT, tables, train_step_with_coverage};
use chapter09::{TrainConfig, Trainer, save_weights, trained_additive, trained_path};

/// How often the held-out set is scored (as in examples/train.rs).
const EVAL_EVERY: usize = 100;

fn main() -> ExitCode {
    let mode = std::env::args().nth(1);
    if !matches!(mode.as_deref(), None | Some("--check") | Some("--record")) {
        eprintln!("unknown argument {mode:?}; use --check, --record or nothing");
        return ExitCode::FAILURE;
    }
    match run(mode.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(mode: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let config = TrainConfig::chapter();
    let mut trainer = Trainer::additive(config);
    println!(
        "chapter 9's run with the coverage loss, λ = {COVERAGE_WEIGHT}: {} steps of {}",
        config.steps, config.batch_size
    );
    let start = Instant::now();
    while trainer.step < config.steps {
        train_step_with_coverage(&mut trainer, COVERAGE_WEIGHT);
        if trainer.step.is_multiple_of(EVAL_EVERY) {
            let recent = &trainer.history.losses[trainer.step - EVAL_EVERY..];
            let mean = recent.iter().sum::<f32>() / recent.len() as f32;
            let (accuracy, _) = trainer.evaluate();
            println!(
                "step {:>5}  mean cross-entropy {mean:.4}  held-out exact match {accuracy:.3}",
                trainer.step
            );
        }
    }
    println!(
        "wall time: {:.1} s (this machine, this run)",
        start.elapsed().as_secs_f32()
    );
    let (recorded, _) = trained_additive();
    let split = &trainer.split;
    print!(
        "{}",
        tables(
            &[("recorded", &recorded), ("coverage", &trainer.model)],
            &split.train,
            &split.held_out
        )
    );
    let record = trained_path("coverage");
    match mode {
        Some("--record") => {
            save_weights(&trainer, &record)?;
            println!("recorded the model and its history in {}", record.display());
        }
        Some("--check") => {
            let then = chapter09::recorded("coverage").info.history;
            let now = &trainer.history;
            if let Some(step) =
                (0..now.losses.len().max(then.losses.len())).find(|&s| {
                    now.losses.get(s).map(|l| l.to_bits())
                        != then.losses.get(s).map(|l| l.to_bits())
                })
            {
                return Err(format!(
                    "--check: the loss of step {step} is {:?} now and {:?} in the recording",
                    now.losses.get(step),
                    then.losses.get(step)
                )
                .into());
            }
            if now.held_out != then.held_out {
                return Err(format!(
                    "--check: held-out scores {:?} now, {:?} in the recording",
                    now.held_out, then.held_out
                )
                .into());
            }
            let written =
                PathBuf::from("target/chapter09/coverage.check.safetensors");
            save_weights(&trainer, &written)?;
            if std::fs::read(&written)? != std::fs::read(&record)? {
                return Err("--check: the model differs from the recorded one".into());
            }
            println!(
                "losses, held-out scores and the model file are the recorded ones, bit \
                 for bit (kernel path {})",
                engine::kernels::active()
            );
        }
        _ => {}
    }
    Ok(())
}
