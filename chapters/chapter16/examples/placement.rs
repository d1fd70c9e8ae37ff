//! Post-norm against pre-norm in an eight-layer character model, at a learning rate
//! of 1e-2 without warmup, and post-norm again with 100 steps of warmup:
//!
//! ```console
//! cargo run --release -p chapter16 --example placement
//! cargo run --release -p chapter16 --example placement -- --record   # update data/
//! ```
//!
//! Prints each run's losses at a few steps; `--record` writes every step's loss to
//! `chapters/chapter16/data/placement.tsv`, from which the page's table and figure
//! are drawn. The runs are deterministic: the same numbers on every machine.

use std::process::ExitCode;

use chapter16::corpus::Corpus;
use chapter16::placement::{PLACEMENT_FILE, PlacementRecord};
use chapter16::record::crate_path;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = args.iter().any(|a| a == "--record");
    if let Some(other) = args.iter().find(|a| *a != "--record") {
        eprintln!("unknown option {other}; the only option is --record");
        return ExitCode::FAILURE;
    }
    let corpus = Corpus::shipped();
    let record = PlacementRecord::train(&corpus, |run| {
        let last = run.losses.last().copied().unwrap_or(f32::NAN);
        println!("{}: last loss {last:.3}", run.label());
    });
    println!("{}", record.summary());
    if write {
        let path = crate_path(PLACEMENT_FILE);
        if let Err(e) = std::fs::write(&path, record.to_tsv()) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("recorded in {}", path.display());
    }
    ExitCode::SUCCESS
}
