//! The training recipe of "Attention Is All You Need" on a small character model: the
//! chapter's recipe, then the inverse-square-root warmup (§5.3), label smoothing
//! (§5.4) and tied embeddings (§3.4) each alone, then all three, three seeds each:
//!
//! ```console
//! cargo run --release -p chapter16 --example recipe
//! cargo run --release -p chapter16 --example recipe -- --record   # update data/
//! cargo run --release -p chapter16 --example recipe -- --check    # reproduce it
//! ```
//!
//! Prints each run's validation losses, then the page's table. `--record` writes
//! every run's parameter count, validation losses and every step's training loss to
//! `chapters/chapter16/data/recipe.tsv`; `--check` trains again and compares every one
//! of those numbers with the recorded ones, which the kernels reproduce bit for bit on
//! every CPU.

use std::process::ExitCode;
use std::time::Instant;

use chapter16::corpus::Corpus;
use chapter16::recipe::{RECIPE_FILE, RecipeRecord};
use chapter16::record::crate_path;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = args.iter().any(|a| a == "--record");
    let check = args.iter().any(|a| a == "--check");
    if let Some(other) = args.iter().find(|a| *a != "--record" && *a != "--check") {
        eprintln!("unknown option {other}; the options are --record and --check");
        return ExitCode::FAILURE;
    }
    let corpus = Corpus::shipped();
    let start = Instant::now();
    let record = RecipeRecord::train(&corpus, |run| {
        println!(
            "{:<22} seed {}: {} parameters, validation {:.4}, smoothed {:.4}",
            run.recipe.label(),
            run.seed,
            run.parameters,
            run.val,
            run.val_smoothed
        );
    });
    println!(
        "{} runs in {:.0} s",
        record.runs.len(),
        start.elapsed().as_secs_f32()
    );
    println!("{}", record.table());
    if check {
        let recorded = RecipeRecord::recorded();
        // Nine significant digits print every f32 exactly: equal text, equal bits.
        if recorded.to_tsv() != record.to_tsv() {
            let first = record.runs.iter().zip(&recorded.runs).position(|(a, b)| {
                a.losses != b.losses || a.val.to_bits() != b.val.to_bits()
            });
            eprintln!(
                "the runs differ from {RECIPE_FILE} (first differing run: {first:?} of {})",
                recorded.runs.len()
            );
            return ExitCode::FAILURE;
        }
        println!("the runs reproduce {RECIPE_FILE}: every loss and count");
    }
    if write {
        let path = crate_path(RECIPE_FILE);
        if let Err(e) = std::fs::write(&path, record.to_tsv()) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("recorded in {}", path.display());
    }
    ExitCode::SUCCESS
}
