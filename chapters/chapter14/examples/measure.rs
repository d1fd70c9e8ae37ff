//! The CPU and the GPU side by side on your machine: matrix products (GFLOP/s), a launch,
//! transfers (GB/s), and attention forward and backward.
//!
//! ```console
//! cargo run --release --features wgpu -p chapter14 --example measure
//! cargo run --release --features wgpu -p chapter14 --example measure -- --large   # adds 2048 and 4096
//! ```
//!
//! It says which devices it ran on. Without the `wgpu` feature, or without a GPU adapter,
//! it measures the CPU alone and says why. `-- --record` (release builds only) replaces
//! the committed sample, `chapters/chapter14/data/sample_measure.tsv`, and the book's
//! figure drawn from it.

use std::process::ExitCode;

use chapter14::measure::{cpu_name, plan, time_on};
use chapter14::{Kind, Row, Sample, plots};
use engine::Device;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (large, record) = (
        args.iter().any(|a| a == "--large"),
        args.iter().any(|a| a == "--record"),
    );
    if let Some(other) = args.iter().find(|a| *a != "--large" && *a != "--record") {
        eprintln!("error: unknown option {other} (expected --large or --record)");
        return ExitCode::FAILURE;
    }
    if record && cfg!(debug_assertions) {
        eprintln!("error: --record needs a release build (cargo run --release …)");
        return ExitCode::FAILURE;
    }
    let gpu = Device::gpu();
    let gpu_label = match &gpu {
        Ok(Device::Gpu(g)) => format!("{}, {} ({})", g.name(), g.backend(), g.kind()),
        Ok(Device::Cpu) => unreachable!("Device::gpu gives a GPU"),
        Err(e) => {
            eprintln!("note: measuring the CPU alone: {e}");
            format!(
                "none ({})",
                e.to_string().lines().next().unwrap_or_default()
            )
        }
    };
    println!("CPU: {}", cpu_name());
    println!("GPU: {gpu_label}");
    let mut rows = Vec::new();
    for (kind, size) in plan(large) {
        let transfer = matches!(kind, Kind::Upload | Kind::Readback);
        let cpu = (!transfer).then(|| time_on(&Device::Cpu, kind, size));
        let gpu = gpu.as_ref().ok().map(|g| time_on(g, kind, size));
        let row = Row {
            kind,
            size,
            cpu,
            gpu,
        };
        println!("measured {}", kind.label(size));
        rows.push(row);
    }
    let sample = Sample {
        cpu: cpu_name(),
        gpu: gpu_label,
        rows,
    };
    println!();
    print!("{}", sample.table());
    if let Some(model) = sample.cost_model() {
        match model.break_even() {
            Some(n) => println!(
                "\nthe GPU, transfers included, beats the CPU from [{n}, {n}] · [{n}, {n}] on"
            ),
            None => println!(
                "\nthe GPU, transfers included, never beats the CPU on square products up to 2^20"
            ),
        }
    }
    if record {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample_measure.tsv");
        if let Err(e) = std::fs::write(path, sample.to_text()) {
            eprintln!("error: writing {path}: {e}");
            return ExitCode::FAILURE;
        }
        let svg = plots::speed_chart(&sample, "one machine's sample run");
        if let Err(e) = figures::write(plots::SPEED_FIGURE, &svg) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        println!(
            "recorded {path} and book/src/figures/{}",
            plots::SPEED_FIGURE
        );
    }
    ExitCode::SUCCESS
}
