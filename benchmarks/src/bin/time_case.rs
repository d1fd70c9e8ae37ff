//! Times one case (see the `benchmarks` crate) and prints the result as one line of JSON;
//! `pytorch_side_by_side.py` calls it between its PyTorch timings of the same case.
//!
//! ```console
//! cargo run --release -p benchmarks --bin time_case -- multi_head/forward/256 --runs 5
//! {"case":"multi_head/forward/256","peak_bytes":…,"seconds":[…],"warmup":1}
//! cargo run --release -p benchmarks --bin time_case -- --list
//! ```
//!
//! `--runs N` (default 5) timed runs follow `--warmup W` (default 1) untimed ones. The first
//! untimed run also measures the peak bytes (see `Case::peak_bytes`), so there is always at
//! least one. `--list` prints every case with its estimated bytes and whether it fits the
//! memory limit; a case that does not fit is refused.

use std::process::ExitCode;
use std::time::Instant;

use benchmarks::{Case, measure_peak};
use serde_json::json;

const USAGE: &str =
    "usage: time_case CASE [--runs N] [--warmup W] | time_case --list";

fn main() -> ExitCode {
    benchmarks::one_thread_unless_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("time_case: {message}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<serde_json::Value, String> {
    if args.first().map(String::as_str) == Some("--list") {
        let cases: Vec<_> = Case::all()
            .iter()
            .map(|c| json!({"case": c.to_string(), "estimated_bytes": c.estimated_bytes(), "fits": c.fits()}))
            .collect();
        return Ok(json!(cases));
    }
    let name = args.first().ok_or("no case given")?;
    let case = Case::from_name(name)
        .ok_or(format!("no case named {name:?} (see --list)"))?;
    if !case.fits() {
        return Err(format!(
            "{name} is skipped: it would need about {} bytes",
            case.estimated_bytes()
        ));
    }
    let (mut runs, mut warmup) = (5, 1);
    for pair in args[1..].chunks(2) {
        let value = |v: Option<&String>| -> Result<usize, String> {
            v.and_then(|v| v.parse().ok())
                .ok_or(format!("{} needs a whole number", pair[0]))
        };
        match pair[0].as_str() {
            "--runs" => runs = value(pair.get(1))?,
            "--warmup" => warmup = value(pair.get(1))?,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let mut once = case.prepare();
    let peak_bytes = measure_peak(&mut once);
    for _ in 1..warmup {
        once();
    }
    let seconds: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            once();
            start.elapsed().as_secs_f64()
        })
        .collect();
    Ok(json!({
        "case": name,
        "seconds": seconds,
        "peak_bytes": peak_bytes,
        "warmup": warmup.max(1),
        "kernel": engine::kernels::active().name(),
    }))
}
