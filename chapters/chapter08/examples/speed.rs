//! Tokens per second with and without the KV cache, on your machine, as the sequence
//! grows:
//!
//! ```console
//! cargo run --release -p chapter08 --example speed
//! ```
//!
//! For each position `t` it times producing the token at `t` (which attends to `t`
//! keys): one `step` against a cache holding the `t − 1` tokens before it, and one
//! `forward` over all `t` tokens, as a loop without a cache does. It prints a table
//! and draws `target/chapter08/speed.svg`; the book's figure and sample stay as they
//! are.
//!
//! `-- --record` (release builds only) replaces the committed sample run,
//! `chapters/chapter08/data/sample_speed.tsv`, and the book's figure drawn from it.
//!
//! `-- --device gpu` (or `best`, or the environment variable `ENGINE_DEVICE`) times
//! the decoding on a GPU, with the engine's `wgpu` feature: `cargo run --release
//! --features engine/wgpu -p chapter08 --example speed -- --device gpu`. The
//! committed sample is the CPU's, so `--record` runs on the CPU only.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use attention::prelude::*;
use chapter08::{
    SPEED_HEADS, SPEED_NUM_HIDDENS, SPEED_POSITIONS, SpeedRow, SpeedRun,
};
use engine::Device;

// ANCHOR: median_seconds
/// The median of the times `once` reports, over enough calls to fill about a fifth of
/// a second (at least 5, at most 500), after one call to warm up.
fn median_seconds(mut once: impl FnMut() -> Duration) -> f64 {
    once();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5
        || (times.len() < 500 && start.elapsed() < Duration::from_millis(200))
    {
        times.push(once());
    }
    times.sort();
    times[times.len() / 2].as_secs_f64()
}
// ANCHOR_END: median_seconds

// ANCHOR: time_one_token
/// Tokens per second for the token at position `t` of `x: [1, T, num_hiddens]`, with
/// the cache and without it.
fn time_one_token(
    layer: &CausalSelfAttention,
    x: &Tensor,
    t: usize,
    device: &Device,
) -> SpeedRow {
    let none = Mask::none();
    let token = x.narrow(1, t - 1, 1); // the new token, [1, 1, num_hiddens]
    let mut cache = KvCache::new(t);
    no_grad(|| layer.prefill(&x.narrow(1, 0, t - 1), &mut cache, &none));
    let with_cache = median_seconds(|| {
        let mut cache = cache.clone(); // t − 1 tokens, before the clock starts
        let start = Instant::now();
        let y = no_grad(|| layer.step(&token, &mut cache, &none));
        device.synchronize(); // a GPU's work is done, not only queued
        let elapsed = start.elapsed();
        drop(y);
        elapsed
    });
    let prefix = x.narrow(1, 0, t);
    let without_cache = median_seconds(|| {
        let start = Instant::now();
        let y = no_grad(|| layer.forward(&prefix, &none).narrow(1, t - 1, 1));
        device.synchronize();
        let elapsed = start.elapsed();
        drop(y);
        elapsed
    });
    SpeedRow {
        t,
        with_cache: 1.0 / with_cache,
        without_cache: 1.0 / without_cache,
    }
}
// ANCHOR_END: time_one_token

/// `--record`, and the device named by `--device NAME`, else by `ENGINE_DEVICE`, else
/// the CPU.
fn options() -> Result<(bool, Device), String> {
    let (mut record, mut device) = (false, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--record" => record = true,
            "--device" => {
                let name = args.next().ok_or("--device takes cpu, gpu or best")?;
                device = Some(Device::named(&name).map_err(|e| e.to_string())?);
            }
            other => {
                return Err(format!(
                    "unknown option {other} (expected --record or --device NAME)"
                ));
            }
        }
    }
    let device = match device {
        Some(d) => d,
        None => Device::from_env().map_err(|e| e.to_string())?,
    };
    if record && !device.is_cpu() {
        return Err("--record writes the CPU's sample: leave out --device".into());
    }
    Ok((record, device))
}

fn main() -> Result<(), String> {
    let (record, device) = options()?;
    chapter08::check_build_for_timing(record)?;
    manual_seed(0);
    let layer = chapter08::causal_layer(SPEED_NUM_HIDDENS, SPEED_HEADS);
    layer.to_device(&device);
    let longest = SPEED_POSITIONS[SPEED_POSITIONS.len() - 1];
    let x = Tensor::randn([1, longest, SPEED_NUM_HIDDENS]).to(&device);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = SpeedRun {
        machine: format!(
            "{} {}, {threads} hardware threads",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        rows: SPEED_POSITIONS
            .iter()
            .map(|&t| time_one_token(&layer, &x, t, &device))
            .collect(),
    };
    println!(
        "CausalSelfAttention, num_hiddens {SPEED_NUM_HIDDENS}, {SPEED_HEADS} heads, batch 1: the token at position t, on {device}"
    );
    print!("{}", run.table());

    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let dir = workspace.join("target/chapter08");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let yours = dir.join("speed.svg");
    let svg = chapter08::speed_chart(&run, None, "tokens per second on this machine");
    std::fs::write(&yours, svg).map_err(|e| format!("{}: {e}", yours.display()))?;
    println!("your chart: {}", yours.display());

    if record {
        let sample =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sample_speed.tsv");
        std::fs::write(&sample, run.to_file())
            .map_err(|e| format!("{}: {e}", sample.display()))?;
        figures::write(
            "ch08-speed.svg",
            &chapter08::speed_chart(
                &run,
                Some(&chapter08::sample_run_before()),
                chapter08::SAMPLE_CHART_TITLE,
            ),
        )?;
        println!(
            "recorded the sample: {} and the book's figure ch08-speed.svg; update the page's sample table (cargo test -p chapter08 --test page says what it must quote)",
            sample.display()
        );
    }
    Ok(())
}
