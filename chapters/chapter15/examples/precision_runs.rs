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

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use chapter15::compare::run;
use chapter15::record::Record;
use chapter15::training::Mode;

fn main() -> ExitCode {
    let mode = std::env::args().nth(1);
    if !matches!(mode.as_deref(), None | Some("--check") | Some("--record")) {
        eprintln!("unknown argument {mode:?}; use --check, --record or nothing");
        return ExitCode::FAILURE;
    }
    let start = Instant::now();
    let mut runs = Vec::new();
    let mut underflow = Vec::new();
    for m in Mode::ALL {
        let (r, counts) = run(m);
        eprintln!(
            "{:<17}: held-out {:.3}, {} skipped, {:.1} s",
            m.name(),
            r.accuracy(),
            r.skipped.len(),
            r.train_seconds
        );
        runs.push(r);
        if m == Mode::F32 {
            underflow = counts;
        }
    }
    let record = Record {
        machine: lesson::cpu_name(),
        runs,
        underflow,
    };
    let seconds = start.elapsed().as_secs_f64();
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data");
    match mode.as_deref() {
        Some("--check") => {
            let recorded = Record::recorded();
            if let Err(e) = record.check(&recorded) {
                eprintln!("--check: {e}");
                return ExitCode::FAILURE;
            }
            let tables = record.with_times_of(&recorded).tables();
            let committed =
                std::fs::read_to_string(data.join("compare.txt")).unwrap_or_default();
            if tables != committed {
                eprintln!(
                    "--check: data/compare.txt is not the recorded tables:\n{tables}"
                );
                return ExitCode::FAILURE;
            }
            print!("{}", record.tables());
            println!(
                "every loss, accuracy, scale, skipped step and count is the recorded \
                 one; the times are this machine's"
            );
        }
        Some(_) => {
            print!("{}", record.tables());
            for (name, text) in [
                ("compare.tsv", record.to_tsv()),
                ("compare.txt", record.tables()),
            ] {
                if let Err(e) = std::fs::write(data.join(name), text) {
                    eprintln!("cannot write data/{name}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            println!("recorded data/compare.tsv and data/compare.txt");
        }
        None => {
            print!("{}", record.tables());
            let dir = PathBuf::from("target/chapter15");
            let written = std::fs::create_dir_all(&dir).and_then(|()| {
                std::fs::write(dir.join("compare.tsv"), record.to_tsv())
            });
            if let Err(e) = written {
                eprintln!("cannot write {}: {e}", dir.display());
            }
        }
    }
    println!("wall time: {seconds:.0} s (this machine, this run)");
    ExitCode::SUCCESS
}
