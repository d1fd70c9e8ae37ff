//! Decoding 256 tokens through one `CausalSelfAttention` layer (num_hiddens 256, 8 heads,
//! evaluation mode, under `no_grad`) at batch 1 and 8: with a `KvCache` (`prefill` of the
//! first token, then one `step` per token) and without one (`forward` over the whole prefix
//! for every new token). Each is sampled for at most 10 seconds; without a cache at batch 8
//! one run takes tens of seconds, so it gives a single sample.
//!
//! ```console
//! cargo bench -p benchmarks --bench decode
//! ```

use benchmarks::{Case, DECODE_BATCHES};
use divan::Bencher;

fn main() {
    benchmarks::one_thread_unless_asked();
    divan::main();
}

/// `prefill` then `step`, attending to the cache.
#[divan::bench(args = DECODE_BATCHES, max_time = 10)]
fn kv_cache(bencher: Bencher, batch: usize) {
    let mut once = Case::Decode {
        batch,
        kv_cache: true,
    }
    .prepare();
    bencher.bench_local(&mut once);
}

/// `forward` over tokens `0..=t` for every `t`, keeping the last row.
#[divan::bench(args = DECODE_BATCHES, max_time = 10)]
fn recompute(bencher: Bencher, batch: usize) {
    let mut once = Case::Decode {
        batch,
        kv_cache: false,
    }
    .prepare();
    bencher.bench_local(&mut once);
}
