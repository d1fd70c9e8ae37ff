//! The tables of pitfalls 2 and 3: every setup trained from the same three seeds,
//! with the weights' entropy and the accuracy on a held-out batch. About ten seconds.
//!
//! ```console
//! cargo run --release -p chapter10 --example sweep              # print the tables
//! cargo run --release -p chapter10 --example sweep -- --check   # the same as committed?
//! cargo run --release -p chapter10 --example sweep -- --record  # rewrite data/sweep.txt
//! ```
//!
//! The engine gives the same bits on every CPU, so the tables are the same on every
//! machine; `--check` compares them with `data/sweep.txt`, which the page quotes.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let table = chapter10::sweep::table();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sweep.txt");
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
                eprintln!("the tables differ from {}; now:\n{table}", path.display());
                return ExitCode::FAILURE;
            }
            println!("the tables are the recorded ones, to the last digit");
        }
        Some(other) => {
            eprintln!("unknown argument {other}; use --check, --record or nothing");
            return ExitCode::FAILURE;
        }
        None => print!("{table}"),
    }
    ExitCode::SUCCESS
}
