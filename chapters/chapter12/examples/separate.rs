//! Chapter 12's separating runs: the five scorings on two harder variants of chapter
//! 9's task (reversed digits with a smaller model, and 300 training numbers), each
//! scoring's learning rate chosen on validation numbers, then three seeds at that
//! rate scored on test numbers. 60 short runs, about six minutes on one core.
//!
//! ```console
//! # print the tables
//! cargo run --release -p chapter12 --example separate
//! # replay seed 1's runs at the chosen rates (10 runs) and compare them with the
//! # recording, times excepted; keys after it replay fewer (`-- --check reversed
//! # additive`: one run)
//! cargo run --release -p chapter12 --example separate -- --check
//! # replay all 60 runs and compare them, and the tables, with the recording
//! cargo run --release -p chapter12 --example separate -- --check-all
//! # rewrite data/separate.tsv and data/separate.txt
//! cargo run --release -p chapter12 --example separate -- --record
//! # rewrite data/separate.txt from data/separate.tsv, without training
//! cargo run --release -p chapter12 --example separate -- --tables
//! ```
//!
//! `--record` writes every run's losses, gradient norms, accuracies and time to
//! `data/separate.tsv` and the tables to `data/separate.txt`. The checks compare
//! every loss, gradient norm and accuracy to the last bit, on any machine and kernel
//! path; the times are this machine's and are not compared.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use chapter12::scorings::Scoring;
use chapter12::separate::{
    RATES, RECORDED_TABLES, SEEDS, SepRecord, SepRun, TUNING_SEED, Task, chosen_rate,
    run,
};

/// One run, with a line on standard error.
fn logged(task: Task, scoring: Scoring, seed: u64, lr: f32, full: bool) -> SepRun {
    let r = run(task, scoring, seed, lr, full);
    eprintln!(
        "{:<8} {:<19} seed {seed} lr {lr}: validation {:.3}, test {:.3}, \
         {:.1} steps/s",
        task.key(),
        scoring.name(),
        r.validation,
        r.test,
        r.steps_per_second()
    );
    r
}

/// Every run: the tuning runs, then the runs at the chosen rates. Within each, seed
/// by seed (rate by rate) with the five scorings in turn, so that a busy spell of
/// the machine slows no scoring alone.
fn everything() -> SepRecord {
    let mut tuning = Vec::new();
    for task in Task::ALL {
        for lr in RATES {
            for scoring in Scoring::ALL {
                tuning.push(logged(task, scoring, TUNING_SEED, lr, false));
            }
        }
    }
    tuning.sort_by_key(|r| {
        let s = Scoring::ALL.iter().position(|&s| s == r.scoring);
        let l = RATES.iter().position(|&l| l == r.lr);
        (Task::ALL.iter().position(|&t| t == r.task), s, l)
    });
    let mut runs = Vec::new();
    for task in Task::ALL {
        for seed in SEEDS {
            for scoring in Scoring::ALL {
                let mine: Vec<SepRun> = tuning
                    .iter()
                    .filter(|r| r.task == task && r.scoring == scoring)
                    .cloned()
                    .collect();
                runs.push(logged(task, scoring, seed, chosen_rate(&mine), true));
            }
        }
    }
    runs.sort_by_key(|r| {
        let s = Scoring::ALL.iter().position(|&s| s == r.scoring);
        (Task::ALL.iter().position(|&t| t == r.task), s, r.seed)
    });
    SepRecord {
        machine: format!(
            "{}, kernel path {}",
            lesson::cpu_name(),
            engine::kernels::active()
        ),
        tuning,
        runs,
    }
}

fn main() -> ExitCode {
    let mode = std::env::args().nth(1);
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data");
    let start = Instant::now();
    match mode.as_deref() {
        Some("--check") => {
            let recorded = SepRecord::recorded();
            // Optional keys after `--check` (`reversed`, `additive`, ...) replay only
            // the runs of those tasks and scorings.
            let only: Vec<String> = std::env::args().skip(2).collect();
            let wanted = |key: &str, keys: &[&str]| {
                !only.iter().any(|k| keys.contains(&k.as_str()))
                    || only.iter().any(|k| k == key)
            };
            let tasks = Task::ALL.map(Task::key);
            let scorings = Scoring::ALL.map(Scoring::key);
            let mut replayed = Vec::new();
            for task in Task::ALL.into_iter().filter(|t| wanted(t.key(), &tasks)) {
                for scoring in Scoring::ALL
                    .into_iter()
                    .filter(|s| wanted(s.key(), &scorings))
                {
                    let lr = recorded.chosen(task, scoring);
                    replayed.push(logged(task, scoring, SEEDS[0], lr, true));
                }
            }
            if let Err(e) = recorded.check(&replayed) {
                eprintln!("--check: {e}");
                return ExitCode::FAILURE;
            }
            print!("{RECORDED_TABLES}");
            println!(
                "seed {}'s {} runs at the chosen rates are the recorded ones, every \
                 loss, gradient norm and accuracy (kernel path {})",
                SEEDS[0],
                replayed.len(),
                engine::kernels::active()
            );
        }
        Some("--check-all") => {
            let recorded = SepRecord::recorded();
            let record = everything();
            let all: Vec<SepRun> =
                record.tuning.iter().chain(&record.runs).cloned().collect();
            if let Err(e) = recorded.check(&all) {
                eprintln!("--check-all: {e}");
                return ExitCode::FAILURE;
            }
            if all.len() != recorded.tuning.len() + recorded.runs.len() {
                eprintln!("--check-all: {} runs now, more recorded", all.len());
                return ExitCode::FAILURE;
            }
            let tables = record.with_times_of(&recorded).tables();
            if tables != RECORDED_TABLES {
                eprintln!(
                    "--check-all: data/separate.txt is not the recorded \
                     tables:\n{tables}"
                );
                return ExitCode::FAILURE;
            }
            print!("{}", record.tables());
            println!(
                "all {} runs are the recorded ones, every loss, gradient norm and \
                 accuracy (kernel path {}); the times are this machine's",
                all.len(),
                engine::kernels::active()
            );
        }
        Some("--record") => {
            let record = everything();
            print!("{}", record.tables());
            for (name, text) in [
                ("separate.tsv", record.to_tsv()),
                ("separate.txt", record.tables()),
            ] {
                if let Err(e) = std::fs::write(data.join(name), text) {
                    eprintln!("cannot write data/{name}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            println!("recorded data/separate.tsv and data/separate.txt");
        }
        Some("--tables") => {
            // The tables of the recording, drawn again (after a change to how they
            // are printed), without training.
            let tables = SepRecord::recorded().tables();
            print!("{tables}");
            if let Err(e) = std::fs::write(data.join("separate.txt"), tables) {
                eprintln!("cannot write data/separate.txt: {e}");
                return ExitCode::FAILURE;
            }
        }
        None => print!("{}", everything().tables()),
        Some(other) => {
            eprintln!(
                "unknown argument {other:?}; use --check, --check-all, --record or \
                 --tables"
            );
            return ExitCode::FAILURE;
        }
    }
    println!(
        "wall time: {:.0} s (this machine, this run)",
        start.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
