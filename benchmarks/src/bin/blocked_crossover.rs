//! Where blocked attention starts to pay: full and blocked scaled dot-product attention
//! for head widths d ∈ {32, 64, 128, 256} and T = Q = K from 32 to 2048 keys, forward
//! (under `no_grad`, as inference runs) and forward and backward, with the median, the
//! fastest and the slowest of a few runs, and the peak of tensor bytes of each. The batch
//! holds `2048 / d` heads, so every width moves the same number of values: `[64, T, 32]`
//! is the multi-head benchmark's 8 × 8 heads of 32 features, `[8, T, 256]` the `sdpa`
//! benchmark's one head of 256. The result sets `attention::BLOCKED_FROM_KEYS`.
//!
//! ```console
//! cargo run --release -p benchmarks --bin blocked_crossover
//! cargo run --release -p benchmarks --bin blocked_crossover -- --widths 256 --pass forward
//! ```
//!
//! One thread unless `MATMUL_NUM_THREADS` and `ENGINE_NUM_THREADS` say otherwise.

use std::time::Instant;

use attention::{Mask, SdpaOptions, blocked_attention, scaled_dot_product_attention};
use engine::{Tensor, memory};

/// The fastest, median and slowest of `runs` runs of `f` after one warm-up, in
/// milliseconds, and the peak bytes of the warm-up.
fn measure(runs: usize, mut f: impl FnMut()) -> ([f64; 3], usize) {
    memory::reset_peak();
    let before = memory::live_bytes();
    f();
    let peak = memory::peak_bytes() - before;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    ([times[0], times[runs / 2], times[runs - 1]], peak)
}

/// The values after `--name` (a comma-separated list), or `default`.
fn list(args: &[String], name: &str, default: &[&str]) -> Vec<String> {
    match args.iter().position(|a| a == name) {
        Some(i) => args
            .get(i + 1)
            .unwrap_or_else(|| panic!("{name} takes a comma-separated list"))
            .split(',')
            .map(str::to_string)
            .collect(),
        None => default.iter().map(|s| s.to_string()).collect(),
    }
}

fn main() {
    benchmarks::one_thread_unless_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let widths: Vec<usize> = list(&args, "--widths", &["32", "64", "128", "256"])
        .iter()
        .map(|w| w.parse().expect("--widths takes whole numbers"))
        .collect();
    let passes = list(&args, "--pass", &["forward", "forward_backward"]);
    let lengths: Vec<usize> = list(
        &args,
        "--lengths",
        &["32", "64", "128", "256", "512", "1024", "2048"],
    )
    .iter()
    .map(|t| t.parse().expect("--lengths takes whole numbers"))
    .collect();
    let ms = |[lo, mid, hi]: [f64; 3]| format!("{mid:.3} ({lo:.3}-{hi:.3})");
    println!(
        "{:>4} {:>17} {:>6} {:>26} {:>26} {:>7} {:>9} {:>9}",
        "d",
        "pass",
        "T",
        "full ms (range)",
        "blocked ms (range)",
        "ratio",
        "full MiB",
        "blk MiB"
    );
    for &d in &widths {
        for pass in &passes {
            let backward = match pass.as_str() {
                "forward" => false,
                "forward_backward" => true,
                other => {
                    panic!("--pass takes forward or forward_backward, not {other}")
                }
            };
            for &t in &lengths {
                engine::manual_seed(0);
                let heads = (2048 / d).max(1);
                let inputs: Vec<Tensor> = (0..3)
                    .map(|_| {
                        let x = Tensor::randn([heads, t, d]);
                        if backward { x.requires_grad_() } else { x }
                    })
                    .collect();
                let [q, k, v] = [&inputs[0], &inputs[1], &inputs[2]];
                let runs = if t <= 256 { 9 } else { 5 };
                let run = |f: &dyn Fn() -> Tensor| {
                    if backward {
                        f().sum().backward();
                    } else {
                        engine::no_grad(|| drop(f()));
                    }
                };
                let (full, full_peak) = measure(runs, || {
                    run(&|| scaled_dot_product_attention(q, k, v, &Mask::none()).0)
                });
                let (blocked, blocked_peak) = measure(runs, || {
                    run(&|| {
                        let options = SdpaOptions::default();
                        blocked_attention(
                            q,
                            k,
                            v,
                            &options,
                            engine::DEFAULT_ATTENTION_BLOCK,
                        )
                    })
                });
                let mib = |b: usize| b as f64 / (1 << 20) as f64;
                println!(
                    "{d:>4} {pass:>17} {t:>6} {:>26} {:>26} {:>7.2} {:>9.1} {:>9.1}",
                    ms(full),
                    ms(blocked),
                    blocked[1] / full[1],
                    mib(full_peak),
                    mib(blocked_peak)
                );
            }
        }
    }
}
