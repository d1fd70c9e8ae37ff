//! The comparison of chapter 12: five scorings trained on chapter 9's task from
//! three seeds each, then one attention call timed as the feature size grows. About
//! two minutes on a 2-core machine (it uses one core).
//!
//! ```console
//! # print the tables
//! cargo run --release -p chapter12 --example scorings
//! # the same as recorded, times excepted?
//! cargo run --release -p chapter12 --example scorings -- --check
//! # rewrite data/compare.tsv and data/compare.txt
//! cargo run --release -p chapter12 --example scorings -- --record
//! ```
//!
//! It prints the tables the page quotes. `--record` writes them to
//! `chapters/chapter12/data/compare.txt` and every number behind them (every step's
//! loss, the gates, the times) to `data/compare.tsv`, from which the tour and the
//! figures read. `--check` trains everything again and compares it with
//! `data/compare.tsv`: every loss, accuracy, gate, parameter count and byte must be
//! the same, to the last bit, on any machine and any kernel path (the engine defines
//! each result bit for bit); the times are this machine's and are not compared.
//! Without an option your run's data goes to `target/chapter12/compare.tsv`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chapter12::compare::{SEEDS, run, training_step_peak_bytes};
use chapter12::complexity::{SWEEP_SIZES, SweepCall, Variant, time_call};
use chapter12::record::{Record, SweepRow};
use chapter12::scorings::Scoring;

/// The CPU's name (Linux), the threads the engine may use and the kernel path.
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let name = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(
            || format!("a {} CPU", std::env::consts::ARCH),
            |(_, v)| v.trim().to_string(),
        );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{name}, {cores} cores, kernel path {}",
        engine::kernels::active()
    )
}

fn main() -> ExitCode {
    let mode = std::env::args().nth(1);
    if !matches!(mode.as_deref(), None | Some("--check") | Some("--record")) {
        eprintln!("unknown argument {mode:?}; use --check, --record or nothing");
        return ExitCode::FAILURE;
    }
    let start = Instant::now();
    let mut runs = Vec::new();
    // Seed by seed, so that each scoring's three runs are spread over the whole time
    // and a busy spell of the machine slows no scoring alone.
    for seed in SEEDS {
        for scoring in Scoring::ALL {
            let r = run(scoring, seed);
            eprintln!(
                "{:<19} seed {seed}: held-out {:.3}, {:.1} s",
                scoring.name(),
                r.accuracy(),
                r.train_seconds + r.decode_seconds
            );
            runs.push(r);
        }
    }
    runs.sort_by_key(|r| (Scoring::ALL.iter().position(|&s| s == r.scoring), r.seed));
    let peaks = Scoring::ALL
        .map(|s| (s, training_step_peak_bytes(s)))
        .to_vec();
    let sweep = SWEEP_SIZES
        .iter()
        .map(|&d| {
            let call = SweepCall::new(d);
            SweepRow {
                d,
                seconds: Variant::ALL.map(|v| {
                    time_call(&call, v, Duration::from_millis(200)).as_secs_f64()
                }),
            }
        })
        .collect();
    let record = Record {
        machine: machine(),
        runs,
        peaks,
        sweep,
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
                "every loss, accuracy, gate, parameter count and byte is the recorded \
                 one (kernel path {}); the times are this machine's",
                engine::kernels::active()
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
            let dir = PathBuf::from("target/chapter12");
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
