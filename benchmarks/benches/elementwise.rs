//! Element-wise functions of one `[4, 32, 32, 64]` tensor (`exp`, `log`, `tanh`, `sigmoid`,
//! `gelu` in both forms) against `add`, the cheapest element-wise op; `add` with a
//! broadcast operand, as attention uses it; and the composed form of additive attention's
//! scores, `(q.unsqueeze(2) + k.unsqueeze(1)).tanh()` then a product with `w`, forward and
//! backward at `[8, 256, 256, 256]`. Everything runs without recording gradients except the
//! last.
//!
//! The kernels run on the path `ENGINE_KERNEL` names (`avx512`, `avx2` or `portable`; the
//! best this CPU has when unset), so the paths are compared by running it once per path:
//!
//! ```console
//! cargo bench -p benchmarks --bench elementwise
//! ENGINE_KERNEL=portable cargo bench -p benchmarks --bench elementwise
//! ```

use divan::Bencher;
use engine::prelude::*;

fn main() {
    benchmarks::one_thread_unless_asked();
    divan::main();
}

/// The shape of the element-wise cases: 262 144 elements, 1 MiB.
const SHAPE: [usize; 4] = [4, 32, 32, 64];

/// Times `f` on a seeded tensor of [`SHAPE`] (positive values for `log`).
fn unary(bencher: Bencher, positive: bool, f: fn(&Tensor) -> Tensor) {
    manual_seed(0);
    let x = Tensor::randn(SHAPE);
    let x = if positive { x.abs() + 0.5 } else { x * 3.0 };
    bencher.bench_local(|| drop(no_grad(|| f(&x))));
}

#[divan::bench(max_time = 3)]
fn add(bencher: Bencher) {
    manual_seed(0);
    let (a, b) = (Tensor::randn(SHAPE), Tensor::randn(SHAPE));
    bencher.bench_local(|| drop(no_grad(|| &a + &b)));
}

/// `[4, 32, 1, 64] + [4, 1, 32, 64]`: every query against every key, as additive attention
/// pairs them.
#[divan::bench(max_time = 3)]
fn add_broadcast(bencher: Bencher) {
    manual_seed(0);
    let (a, b) = (Tensor::randn([4, 32, 1, 64]), Tensor::randn([4, 1, 32, 64]));
    bencher.bench_local(|| drop(no_grad(|| &a + &b)));
}

#[divan::bench(max_time = 3)]
fn exp(bencher: Bencher) {
    unary(bencher, false, Tensor::exp);
}

#[divan::bench(max_time = 3)]
fn log(bencher: Bencher) {
    unary(bencher, true, Tensor::log);
}

#[divan::bench(max_time = 3)]
fn tanh(bencher: Bencher) {
    unary(bencher, false, Tensor::tanh);
}

#[divan::bench(max_time = 3)]
fn sigmoid(bencher: Bencher) {
    unary(bencher, false, Tensor::sigmoid);
}

#[divan::bench(max_time = 3)]
fn gelu_erf(bencher: Bencher) {
    unary(bencher, false, |x| x.gelu(GeluApprox::Erf));
}

#[divan::bench(max_time = 3)]
fn gelu_tanh(bencher: Bencher) {
    unary(bencher, false, |x| x.gelu(GeluApprox::Tanh));
}

/// d2l's additive scores composed of broadcasting ops, forward and backward: queries and
/// keys `[8, 256, 256]`, `w: [256]`, through a `[8, 256, 256, 256]` tensor (512 MiB).
#[divan::bench(max_time = 10)]
fn additive_composed_forward_backward(bencher: Bencher) {
    manual_seed(0);
    let q = Tensor::randn([8, 256, 256]).requires_grad_();
    let k = Tensor::randn([8, 256, 256]).requires_grad_();
    let w = Tensor::randn([256]).requires_grad_();
    bencher.bench_local(|| {
        let features = (q.unsqueeze(2) + k.unsqueeze(1)).tanh();
        features.matmul(&w.unsqueeze(1)).sum().backward();
        for t in [&q, &k, &w] {
            t.zero_grad();
        }
    });
}
