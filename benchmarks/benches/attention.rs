//! Scaled dot-product, d2l multi-head (256 hiddens, 8 heads) and d2l additive (256
//! hiddens; fused scores, and d2l's broadcast form) attention at batch 8, queries = keys = T
//! for T in 64, 256, 1024: the forward pass alone (under `no_grad`) and the forward and
//! backward passes (`output.sum().backward()`, inputs and parameters requiring gradients).
//!
//! Cases whose estimated memory exceeds `benchmarks::MEMORY_LIMIT` (4 GiB) are skipped; with
//! these sizes that is additive attention with broadcast scores at T = 1024, whose
//! `[8, 1024, 1024, 256]` feature tensor alone takes 8 GiB (see `Case::estimated_bytes` for
//! the formulas). Each size is sampled for at most 10 seconds, so the slowest ones give only
//! a few samples.
//!
//! ```console
//! cargo bench -p benchmarks --bench attention
//! cargo bench -p benchmarks --bench attention -- multi_head   # one family
//! ```

use benchmarks::{Case, Pass, Pass::*, SEQ_LENS};
use divan::Bencher;

fn main() {
    benchmarks::one_thread_unless_asked();
    divan::main();
}

/// A family of cases: its case at a length and a pass.
type Family = fn(usize, Pass) -> Case;

/// The lengths at which `family` fits the memory limit for `pass`.
fn lens(family: Family, pass: Pass) -> Vec<usize> {
    SEQ_LENS
        .into_iter()
        .filter(|&len| family(len, pass).fits())
        .collect()
}

fn run(bencher: Bencher, case: Case) {
    let mut once = case.prepare();
    bencher.bench_local(&mut once);
}

/// `attention::scaled_dot_product_attention` on `[8, T, 256]` queries, keys and values.
#[divan::bench_group(max_time = 10)]
mod sdpa {
    use super::*;
    const CASE: Family = |len, pass| Case::Sdpa { len, pass };

    #[divan::bench(args = lens(CASE, Forward))]
    fn forward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, Forward));
    }

    #[divan::bench(args = lens(CASE, ForwardBackward))]
    fn forward_backward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, ForwardBackward));
    }
}

/// d2l's `MultiHeadAttention` (256 hiddens, 8 heads, no bias).
#[divan::bench_group(max_time = 10)]
mod multi_head {
    use super::*;
    const CASE: Family = |len, pass| Case::MultiHead { len, pass };

    #[divan::bench(args = lens(CASE, Forward))]
    fn forward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, Forward));
    }

    #[divan::bench(args = lens(CASE, ForwardBackward))]
    fn forward_backward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, ForwardBackward));
    }
}

/// d2l's `AdditiveAttention` (query, key and hidden sizes 256), fused scores (the default).
#[divan::bench_group(max_time = 10)]
mod additive {
    use super::*;
    const CASE: Family = |len, pass| Case::Additive { len, pass };

    #[divan::bench(args = lens(CASE, Forward))]
    fn forward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, Forward));
    }

    #[divan::bench(args = lens(CASE, ForwardBackward))]
    fn forward_backward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, ForwardBackward));
    }
}

/// The same module with d2l's broadcast scores; T = 1024 is skipped.
#[divan::bench_group(max_time = 10)]
mod additive_broadcast {
    use super::*;
    const CASE: Family = |len, pass| Case::AdditiveBroadcast { len, pass };

    #[divan::bench(args = lens(CASE, Forward))]
    fn forward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, Forward));
    }

    #[divan::bench(args = lens(CASE, ForwardBackward))]
    fn forward_backward(bencher: Bencher, len: usize) {
        run(bencher, CASE(len, ForwardBackward));
    }
}
