//! Where blocked attention starts to pay: full and blocked scaled dot-product attention,
//! forward and backward, on the shapes of the multi-head benchmark (batch 8 × 8 heads of
//! 32 features, `[64, T, 32]`), for T from 32 to 2048, with the median of a few runs
//! and the peak of tensor bytes of each. The result sets
//! `attention::BLOCKED_FROM_KEYS`.
//!
//! ```console
//! cargo run --release -p benchmarks --bin blocked_crossover
//! ```
//!
//! One thread unless `MATMUL_NUM_THREADS` and `ENGINE_NUM_THREADS` say otherwise.

use std::time::Instant;

use attention::{Mask, SdpaOptions, blocked_attention, scaled_dot_product_attention};
use engine::{Tensor, memory};

/// The median time of `runs` runs of `f` after one warm-up, in milliseconds, and the peak
/// bytes of the warm-up.
fn measure(runs: usize, mut f: impl FnMut()) -> (f64, usize) {
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
    (times[runs / 2], peak)
}

fn main() {
    benchmarks::one_thread_unless_asked();
    engine::manual_seed(0);
    println!(
        "{:>6} {:>12} {:>12} {:>7} {:>12} {:>12}",
        "T", "full ms", "blocked ms", "ratio", "full MiB", "blocked MiB"
    );
    for t in [32, 64, 128, 256, 512, 1024, 2048] {
        let inputs: Vec<Tensor> = (0..3)
            .map(|_| Tensor::randn([64, t, 32]).requires_grad_())
            .collect();
        let [q, k, v] = [&inputs[0], &inputs[1], &inputs[2]];
        let runs = if t <= 256 { 9 } else { 3 };
        let (full, full_peak) = measure(runs, || {
            let (out, _) = scaled_dot_product_attention(q, k, v, &Mask::none());
            out.sum().backward();
        });
        let (blocked, blocked_peak) = measure(runs, || {
            let options = SdpaOptions::default();
            let out =
                blocked_attention(q, k, v, &options, engine::DEFAULT_ATTENTION_BLOCK);
            out.sum().backward();
        });
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        println!(
            "{t:>6} {full:>12.3} {blocked:>12.3} {:>7.2} {:>12.1} {:>12.1}",
            blocked / full,
            mib(full_peak),
            mib(blocked_peak)
        );
    }
}
