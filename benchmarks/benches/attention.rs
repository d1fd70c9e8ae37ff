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

/// One benchmark group per family: the forward pass, and forward and backward, at every
/// length that fits.
macro_rules! family_group {
    ($(#[$doc:meta])* $name:ident, $variant:ident) => {
        $(#[$doc])*
        #[divan::bench_group(max_time = 10)]
        mod $name {
            use super::*;
            const CASE: Family = |len, pass| Case::$variant { len, pass };

            #[divan::bench(args = lens(CASE, Forward))]
            fn forward(bencher: Bencher, len: usize) {
                run(bencher, CASE(len, Forward));
            }

            #[divan::bench(args = lens(CASE, ForwardBackward))]
            fn forward_backward(bencher: Bencher, len: usize) {
                run(bencher, CASE(len, ForwardBackward));
            }
        }
    };
}

family_group!(
    /// `attention::scaled_dot_product_attention` on `[8, T, 256]` queries, keys and values.
    sdpa,
    Sdpa
);
family_group!(
    /// d2l's `MultiHeadAttention` (256 hiddens, 8 heads, no bias).
    multi_head,
    MultiHead
);
family_group!(
    /// d2l's `AdditiveAttention` (query, key and hidden sizes 256), fused scores (the default).
    additive,
    Additive
);
family_group!(
    /// The same module with d2l's broadcast scores; T = 1024 is skipped.
    additive_broadcast,
    AdditiveBroadcast
);
