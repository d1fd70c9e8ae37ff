//! `[N, N] @ [N, N]` in `f32` for N in 256, 512, 1024, without recording gradients.
//!
//! ```console
//! cargo bench -p benchmarks --bench matmul
//! ```

use benchmarks::{Case, MATMUL_SIZES};
use divan::Bencher;

fn main() {
    benchmarks::one_thread_unless_asked();
    divan::main();
}

/// One square product.
#[divan::bench(args = MATMUL_SIZES, max_time = 5)]
fn matmul(bencher: Bencher, n: usize) {
    let mut once = Case::Matmul { n }.prepare();
    bencher.bench_local(&mut once);
}
