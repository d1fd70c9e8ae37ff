//! Self-attention beside a recurrent layer and a convolution on your machine: the time of
//! one forward pass over `n = 256` tokens of width `d = 64` (batch 8, no gradient), the
//! sizes of the page's cost table.
//!
//! ```console
//! cargo run --release -p chapter08 --example layers
//! ```
//!
//! The table counts multiply-adds; this measures what they cost, and what the recurrent
//! layer's 256 sequential steps cost on top. The convolution (width 3) is the chapter's
//! own, built from the engine's products (`chapter08::convolution`). Build with
//! `--release`.

use std::time::Instant;

use attention::prelude::*;
use chapter08::convolution::SequenceConvolution;
use engine::nn::{Gru, GruConfig};

/// The median seconds of `f` over 15 calls, after one to warm up.
fn median_seconds(f: impl Fn() -> Tensor) -> f64 {
    drop(no_grad(&f));
    let mut times: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            drop(no_grad(&f));
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let (batch, n, d) = (8, 256, 64);
    manual_seed(0);
    let x = Tensor::randn([batch, n, d]);
    let mut attention = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: d,
        num_heads: 1,
        ..Default::default()
    });
    attention.eval();
    let gru = Gru::new(GruConfig {
        input_size: d,
        hidden_size: d,
    });
    let self_attention =
        median_seconds(|| attention.forward(&x, &x, &x, &Mask::none()));
    let recurrent = median_seconds(|| gru.forward(&x, None).0);
    let conv = SequenceConvolution::new(3, d);
    let convolution = median_seconds(|| conv.forward(&x));
    println!("one forward pass, batch {batch}, n = {n} tokens of width d = {d}:");
    println!(
        "  self-attention (one head)  {:>8.2} ms",
        self_attention * 1e3
    );
    println!("  recurrent (a GRU)          {:>8.2} ms", recurrent * 1e3);
    println!("  convolution, k = 3         {:>8.2} ms", convolution * 1e3);
    println!("(the median of 15 runs on this machine)");
}
