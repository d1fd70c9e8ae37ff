//! Section 6's second comparison: chapter 9's model, data and seed with every
//! gradient 2¹⁴ times smaller (the loss, Adam's `ε` and the clipping norm multiplied
//! by 2⁻¹⁴), trained for 200 steps in f32, f16 without a loss scale, f16 with a
//! static scale, f16 with a GradScaler and bf16, and the f32 run's gradients counted
//! in half precision every 50 steps. About a minute on a 2-core machine (it uses
//! one core).
//!
//! ```console
//! # print the tables
//! cargo run --release -p chapter15 --example small_gradients
//! # the same as recorded, times excepted?
//! cargo run --release -p chapter15 --example small_gradients -- --check
//! # rewrite data/small.tsv and data/small.txt
//! cargo run --release -p chapter15 --example small_gradients -- --record
//! ```
//!
//! `--check` trains everything again and compares it with `data/small.tsv`: every
//! loss, accuracy, scale, skipped step and count must be the same, to the last bit,
//! on any machine; the times are this machine's and are not compared. Without an
//! option your run's data goes to `target/chapter15/small.tsv`.

use std::process::ExitCode;

fn main() -> ExitCode {
    chapter15::record::main_for(chapter15::compare::SMALL)
}
