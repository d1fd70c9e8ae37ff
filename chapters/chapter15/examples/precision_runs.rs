//! The comparison of chapter 15: chapter 9's model trained in f32, f16 without a
//! loss scale, f16 with a static scale, f16 with a GradScaler and bf16, from one seed,
//! and the f32 run's gradients counted in half precision every 100 steps. About a
//! minute on a 2-core machine (it uses one core).
//!
//! ```console
//! # print the tables
//! cargo run --release -p chapter15 --example precision_runs
//! # the same as recorded, times excepted?
//! cargo run --release -p chapter15 --example precision_runs -- --check
//! # rewrite data/compare.tsv and data/compare.txt
//! cargo run --release -p chapter15 --example precision_runs -- --record
//! ```
//!
//! `--check` trains everything again and compares it with `data/compare.tsv`: every
//! loss, accuracy, scale, skipped step and count must be the same, to the last bit,
//! on any machine (the engine defines each result bit for bit); the times are this
//! machine's and are not compared. Without an option your run's data goes to
//! `target/chapter15/compare.tsv`.

use std::process::ExitCode;

fn main() -> ExitCode {
    chapter15::record::main_for(chapter15::compare::CHAPTER9)
}
