//! Additive against scaled dot-product attention on your machine: milliseconds per forward
//! pass and peak memory, for a few sequence lengths; then where additive attention's time
//! goes, op by op.
//!
//! ```console
//! cargo run --release -p chapter06 --example compare
//! ```
//!
//! The memory is counted by the engine and is the same everywhere; the times are your
//! machine's (build with `--release`: a debug build is many times slower).
//!
//! `-- --device gpu` (or `best`, or the environment variable `ENGINE_DEVICE`) times the
//! same passes on a GPU, with the engine's `wgpu` feature:
//! `cargo run --release --features engine/wgpu -p chapter06 --example compare -- --device gpu`.
//! The engine counts host memory only, so the memory columns then read "—".

use std::process::ExitCode;
use std::time::{Duration, Instant};

use attention::prelude::*;
use chapter06::{SameShapes, forward_peak_bytes};
use engine::Device;
use engine::memory::human;

/// The median time of one call of `f`, over enough calls to fill about a quarter of a
/// second (at least 3, at most 50), after one call to warm up.
fn median_time(f: impl Fn() -> Tensor) -> Duration {
    drop(no_grad(&f));
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3
        || (times.len() < 50 && start.elapsed() < Duration::from_millis(250))
    {
        let t = Instant::now();
        let out = no_grad(&f);
        times.push(t.elapsed());
        drop(out);
    }
    times.sort();
    times[times.len() / 2]
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

/// The device named by `--device NAME`, else by `ENGINE_DEVICE`, else the CPU.
fn device() -> Result<Device, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Device::from_env().map_err(|e| e.to_string()),
        [flag, name] if flag == "--device" => {
            Device::named(name).map_err(|e| e.to_string())
        }
        _ => Err("expected no option, or --device cpu|gpu|best".into()),
    }
}

/// The modules and inputs of `shapes` moved to `device`.
fn moved(mut shapes: SameShapes, device: &Device) -> SameShapes {
    shapes.additive.to_device(device);
    shapes.queries = shapes.queries.to(device);
    shapes.keys = shapes.keys.to(device);
    shapes.values = shapes.values.to(device);
    shapes
}

fn main() -> ExitCode {
    let device = match device() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (batch, d) = (4, 64);
    println!(
        "batch {batch}, d = h = {d}, self-attention over n tokens (Q = K = n), no gradient"
    );
    println!("on {device}, kernel path {}", engine::kernels::active());
    println!(
        "| {:>4} | {:>13} | {:>16} | {:>13} | {:>16} |",
        "n", "additive (ms)", "dot product (ms)", "additive peak", "dot-product peak"
    );
    println!(
        "|-----:|--------------:|-----------------:|--------------:|-----------------:|"
    );
    for n in [32, 64, 128, 256] {
        let shapes = moved(SameShapes::new(batch, n, d), &device);
        let synchronized = |y: Tensor| {
            device.synchronize();
            y
        };
        let additive = median_time(|| synchronized(shapes.additive_forward()));
        let dot = median_time(|| synchronized(shapes.dot_product_forward()));
        let bytes = |f: &dyn Fn() -> Tensor| match device {
            Device::Cpu => human(forward_peak_bytes(f)),
            _ => "—".into(),
        };
        println!(
            "| {n:>4} | {:>13.3} | {:>16.3} | {:>13} | {:>16} |",
            ms(additive),
            ms(dot),
            bytes(&|| shapes.additive_forward()),
            bytes(&|| shapes.dot_product_forward())
        );
    }
    println!("times: the median of several runs on this machine");
    println!("memory: counted by the engine, the same everywhere");
    parts(batch, 256, d, &device);
    ExitCode::SUCCESS
}

/// The time of each op of d2l's additive scores, `w · tanh(q + k)` with `q` and `k` already
/// projected, at `Q = K = n`, beside a copy of the `[B, Q, K, h]` tensor through `neg`,
/// the cheapest op that reads and writes it: what memory traffic alone costs.
fn parts(batch: usize, n: usize, h: usize, device: &Device) {
    let q = Tensor::randn([batch, n, h]).to(device);
    let k = Tensor::randn([batch, n, h]).to(device);
    let w = Tensor::randn([h, 1]).to(device);
    let sum = q.unsqueeze(2) + k.unsqueeze(1);
    let features = sum.tanh();
    let time = |f: &dyn Fn() -> Tensor| {
        ms(median_time(|| {
            let y = f();
            device.synchronize();
            y
        }))
    };
    println!(
        "\nwhere additive scores' time goes, batch {batch}, n = {n}, h = {h}: [B, Q, K, h] is {}",
        human(sum.numel() * 4)
    );
    let rows = [
        (
            "q + k, broadcast to [B, Q, K, h]",
            time(&|| q.unsqueeze(2) + k.unsqueeze(1)),
        ),
        ("tanh of it", time(&|| sum.tanh())),
        (
            "times w: [B, Q, K, h] · [h, 1]",
            time(&|| features.matmul(&w)),
        ),
        (
            "neg of [B, Q, K, h] (memory traffic only)",
            time(&|| sum.neg()),
        ),
        (
            "the three at once, fused (additive_scores)",
            time(&|| q.additive_scores(&k, &w.squeeze(-1))),
        ),
    ];
    for (what, t) in rows {
        println!("  {what:<44} {t:>9.3} ms");
    }
}
