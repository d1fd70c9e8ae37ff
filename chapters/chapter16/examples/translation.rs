//! The encoder–decoder Transformer trained on chapter 9's task with chapter 9's data,
//! budget and schedule, beside chapter 9's GRU with additive attention:
//!
//! ```console
//! cargo run --release -p chapter16 --example translation
//! cargo run --release -p chapter16 --example translation -- --record   # update trained/
//! cargo run --release -p chapter16 --example translation -- --check    # reproduce it
//! ```
//!
//! Trains 1,000 steps with a progress bar, scores the 1,000 held-out numbers every
//! 100 steps, then times 100 training steps of chapter 9's GRU on the same machine.
//! `--record` writes the weights, the history and both speeds to
//! `chapters/chapter16/trained/translation.safetensors`; `--check` trains again and
//! compares every step's loss and every held-out score with the recorded run, which
//! the kernels reproduce bit for bit on every CPU (the timings excepted).

use std::process::ExitCode;
use std::time::Instant;

use chapter09::{TrainConfig, Trainer, progress_bar};
use chapter16::record::{
    TRANSLATION_FILE, TranslationRecord, crate_path, recorded_translation,
    save_record,
};
use chapter16::translation::{TranslationTrainer, chapter_model};
use engine::nn::Module;

/// How often the held-out set is scored (chapter 9's cadence).
const EVAL_EVERY: usize = 100;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = args.iter().any(|a| a == "--record");
    let check = args.iter().any(|a| a == "--check");
    if let Some(other) = args.iter().find(|a| *a != "--record" && *a != "--check") {
        eprintln!("unknown option {other}; the options are --record and --check");
        return ExitCode::FAILURE;
    }
    let config = TrainConfig::chapter();
    let mut trainer = TranslationTrainer::new(config, chapter_model());
    println!(
        "Transformer: {} parameters, {} steps of {}",
        trainer.model.num_parameters(),
        config.steps,
        config.batch_size
    );
    let bar = progress_bar(config.steps);
    let start = Instant::now();
    let mut training = 0.0;
    while trainer.step < config.steps {
        let t = Instant::now();
        let report = trainer.train_step();
        training += t.elapsed().as_secs_f32();
        bar.set_position(trainer.step as u64);
        bar.set_message(format!("loss {:.4}", report.loss));
        if trainer.step.is_multiple_of(EVAL_EVERY) {
            let (accuracy, _) = trainer.evaluate();
            let step = trainer.step;
            bar.suspend(|| {
                println!("step {step:>4}  held-out exact match {accuracy:.3}")
            });
        }
    }
    bar.finish_and_clear();
    let steps_per_second = config.steps as f32 / training;
    println!(
        "done in {:.0} s; {steps_per_second:.1} training steps/s",
        start.elapsed().as_secs_f32()
    );
    // Chapter 9's model on the same machine, same batches: 100 steps, timed.
    let mut gru = Trainer::additive(config);
    let t = Instant::now();
    gru.train_until(100, |_| {});
    let gru_steps_per_second = 100.0 / t.elapsed().as_secs_f32();
    println!("chapter 9's GRU: {gru_steps_per_second:.1} training steps/s");
    let record = TranslationRecord {
        train: config,
        model: chapter_model(),
        history: trainer.history.clone(),
        steps_per_second,
        gru_steps_per_second,
        machine: format!(
            "{}, {} threads",
            lesson::cpu_name(),
            engine::threads::num_threads()
        ),
    };
    if check {
        let (_, recorded) = recorded_translation();
        if recorded.history != record.history {
            let first = record
                .history
                .losses
                .iter()
                .zip(&recorded.history.losses)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            eprintln!(
                "the run differs from the recorded one (first differing step: {first:?})"
            );
            return ExitCode::FAILURE;
        }
        println!("the run reproduces {TRANSLATION_FILE}: every loss and score");
    }
    if write {
        let path = crate_path(TRANSLATION_FILE);
        if let Err(e) = save_record(&path, &trainer.model, &record) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
        println!("recorded in {}", path.display());
    }
    ExitCode::SUCCESS
}
