//! The table of pitfall 7: a one-layer decoder trained with and without the causal
//! mask from the same three seeds, with its loss on each half of a held-out batch,
//! the share of tokens right when it generates, and how many positions leak. About
//! two seconds.
//!
//! ```console
//! cargo run --release -p chapter10 --example causal              # print the table
//! cargo run --release -p chapter10 --example causal -- --check   # the same as committed?
//! cargo run --release -p chapter10 --example causal -- --record  # rewrite data/causal.txt
//! ```
//!
//! The engine gives the same bits on every CPU, so the table is the same on every
//! machine; `--check` compares it with `data/causal.txt`, which the page quotes.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let table = chapter10::causal::table();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/causal.txt");
    let mode = std::env::args().nth(1);
    match mode.as_deref() {
        Some("--record") => {
            if let Err(e) = std::fs::write(&path, &table) {
                eprintln!("cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("recorded {}", path.display());
        }
        Some("--check") => {
            let recorded = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    eprintln!("cannot read {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            };
            if recorded != table {
                eprintln!("the table differs from {}; now:\n{table}", path.display());
                return ExitCode::FAILURE;
            }
            println!("the table is the recorded one, to the last digit");
        }
        Some(other) => {
            eprintln!("unknown argument {other}; use --check, --record or nothing");
            return ExitCode::FAILURE;
        }
        None => print!("{table}"),
    }
    ExitCode::SUCCESS
}
