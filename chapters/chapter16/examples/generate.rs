//! Generation from the recorded character model with the KV cache and without: the
//! same text, and the time each takes.
//!
//! ```console
//! cargo run --release -p chapter16 --example generate
//! cargo run --release -p chapter16 --example generate -- --record   # update data/
//! ```
//!
//! Generates 500 characters after the prompt "Alice " three times each way and keeps
//! each way's fastest run. `--record` writes the times to
//! `chapters/chapter16/data/generation.tsv`, which the page quotes.

use std::process::ExitCode;
use std::time::Instant;

use chapter16::corpus::Corpus;
use chapter16::lm::{Sampling, generate};
use chapter16::record::{GENERATION_FILE, GenerationTimes, crate_path, recorded_lm};

/// Characters generated in each timed run.
const NEW: usize = 500;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = args.iter().any(|a| a == "--record");
    if let Some(other) = args.iter().find(|a| *a != "--record") {
        eprintln!("unknown option {other}; the only option is --record");
        return ExitCode::FAILURE;
    }
    let (model, _) = recorded_lm();
    let vocab = Corpus::shipped().vocab;
    let prompt = vocab.encode("Alice ");
    let sampling = Sampling {
        temperature: 0.8,
        top_k: Some(10),
        seed: 0,
    };
    let mut best = [f32::INFINITY; 2];
    let mut texts = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (i, use_cache) in [true, false].into_iter().enumerate() {
            let start = Instant::now();
            texts[i] = generate(&model, &prompt, NEW, &sampling, use_cache);
            best[i] = best[i].min(start.elapsed().as_secs_f32());
        }
    }
    if texts[0] != texts[1] {
        eprintln!("the cached and uncached texts differ");
        return ExitCode::FAILURE;
    }
    let times = GenerationTimes {
        new_tokens: NEW,
        cached_ms_per_token: 1000.0 * best[0] / NEW as f32,
        uncached_ms_per_token: 1000.0 * best[1] / NEW as f32,
        machine: format!(
            "{}, {} threads",
            lesson::cpu_name(),
            engine::threads::num_threads()
        ),
    };
    println!("Alice {}\n", vocab.decode(&texts[0]));
    println!("{}", times.table());
    if write {
        let path = crate_path(GENERATION_FILE);
        if let Err(e) = std::fs::write(&path, times.to_tsv()) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("recorded in {}", path.display());
    }
    ExitCode::SUCCESS
}
