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

use std::time::{Duration, Instant};

use attention::prelude::*;
use chapter06::{SameShapes, forward_peak_bytes};
use engine::memory::human;

/// The median time of one call of `f`, over enough calls to fill about a quarter of a
/// second (at least 3, at most 50), after one call to warm up.
fn median_time(f: impl Fn() -> Tensor) -> Duration {
    drop(no_grad(&f));
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (times.len() < 50 && start.elapsed() < Duration::from_millis(250)) {
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

fn main() {
    let (batch, d) = (4, 64);
    println!(
        "batch {batch}, d = h = {d}, self-attention over n tokens (Q = K = n), no gradient; kernel path {}",
        engine::kernels::active()
    );
    println!(
        "| {:>4} | {:>13} | {:>16} | {:>13} | {:>16} |",
        "n", "additive (ms)", "dot product (ms)", "additive peak", "dot-product peak"
    );
    println!("|-----:|--------------:|-----------------:|--------------:|-----------------:|");
    for n in [32, 64, 128, 256] {
        let shapes = SameShapes::new(batch, n, d);
        let additive = median_time(|| shapes.additive_forward());
        let dot = median_time(|| shapes.dot_product_forward());
        let additive_bytes = forward_peak_bytes(|| shapes.additive_forward());
        let dot_bytes = forward_peak_bytes(|| shapes.dot_product_forward());
        println!(
            "| {n:>4} | {:>13.3} | {:>16.3} | {:>13} | {:>16} |",
            ms(additive),
            ms(dot),
            human(additive_bytes),
            human(dot_bytes)
        );
    }
    println!(
        "times: the median of several runs on this machine; memory: counted by the engine, the same everywhere"
    );
    parts(batch, 256, d);
}

/// The time of each op of d2l's additive scores, `w · tanh(q + k)` with `q` and `k` already
/// projected, at `Q = K = n`, beside a copy of the `[B, Q, K, h]` tensor through `neg`,
/// the cheapest op that reads and writes it: what memory traffic alone costs.
fn parts(batch: usize, n: usize, h: usize) {
    let q = Tensor::randn([batch, n, h]);
    let k = Tensor::randn([batch, n, h]);
    let w = Tensor::randn([h, 1]);
    let sum = q.unsqueeze(2) + k.unsqueeze(1);
    let features = sum.tanh();
    let time = |f: &dyn Fn() -> Tensor| ms(median_time(f));
    println!(
        "\nwhere the additive scores' time goes, batch {batch}, n = {n}, h = {h}: [B, Q, K, h] is {}",
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
