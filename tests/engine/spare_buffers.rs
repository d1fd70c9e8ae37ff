//! Kernels that take a kept buffer without zero-filling it (`spare::for_overwrite`) must
//! write every element: here the spare buffers are full of NaN before each op runs, and
//! its results (values and gradients) must have the bits of a run from fresh memory.

use engine::{Tensor, memory, random};

/// Elements of each result: above the 2¹⁶ values from which buffers are kept.
const ROWS: usize = 96;
const COLS: usize = 1024;

/// The results of `run()` computed once with no buffer kept (every allocation is fresh,
/// zero-filled memory) and once with kept buffers, the first of them full of NaN: an
/// element a kernel leaves unwritten holds a zero in the first run and a NaN or an earlier
/// tensor's value in the second, so the bits differ.
fn assert_spares_are_overwritten(name: &str, run: impl Fn() -> Vec<Vec<f32>>) {
    let limit = memory::spare_limit();
    memory::set_spare_limit(0);
    let fresh = run();
    memory::set_spare_limit(limit);
    // Several NaN buffers of each result size, for every result of that size in the run.
    let mut sizes: Vec<usize> = fresh.iter().map(Vec::len).collect();
    sizes.extend([ROWS * COLS, 4 * ROWS * COLS]);
    let poison: Vec<Tensor> = sizes
        .iter()
        .flat_map(|&n| (0..4).map(move |_| Tensor::full([n], f32::NAN)))
        .collect();
    drop(poison);
    assert!(
        memory::spare_bytes() > 0,
        "{name}: the NaN buffers were not kept"
    );
    let reused = run();
    for (i, (a, b)) in fresh.iter().zip(&reused).enumerate() {
        let same = a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(
            same,
            "{name}: output {i} differs when built in a kept buffer"
        );
    }
    memory::release_spare();
}

fn input(shape: &[usize], seed: u64) -> Tensor {
    random::manual_seed(seed);
    Tensor::randn(shape).requires_grad_()
}

/// The op's output and the gradient of `sum(output · weights)` with respect to `x`.
fn value_and_grad(x: &Tensor, out: Tensor) -> Vec<Vec<f32>> {
    let weights = Tensor::full(out.shape(), 0.5) + &out.detach();
    (&out * &weights).sum().backward();
    vec![out.to_vec(), x.grad().expect("x needs a gradient").to_vec()]
}

#[test]
fn element_wise_ops_write_every_element() {
    assert_spares_are_overwritten("exp", || {
        let x = input(&[ROWS, COLS], 1);
        value_and_grad(&x, x.exp())
    });
    assert_spares_are_overwritten("broadcast add", || {
        let x = input(&[ROWS, COLS], 2);
        let row = Tensor::full([COLS], 0.25);
        value_and_grad(&x, &x + &row)
    });
}

#[test]
fn softmax_and_its_gradient_write_every_element() {
    assert_spares_are_overwritten("softmax over the last dimension", || {
        let x = input(&[ROWS, COLS], 3);
        value_and_grad(&x, x.softmax(-1))
    });
    assert_spares_are_overwritten("softmax over the first dimension", || {
        let x = input(&[ROWS, COLS], 4);
        value_and_grad(&x, x.softmax(0))
    });
    assert_spares_are_overwritten("log-softmax", || {
        let x = input(&[ROWS, COLS], 5);
        value_and_grad(&x, x.log_softmax(-1))
    });
}

#[test]
fn transposes_and_products_write_every_element() {
    assert_spares_are_overwritten("transpose", || {
        let x = input(&[ROWS, COLS], 6);
        value_and_grad(&x, x.transpose(0, 1))
    });
    assert_spares_are_overwritten("batched product", || {
        let x = input(&[4, ROWS, 64], 7);
        let w = Tensor::full([64, COLS], 0.01);
        value_and_grad(&x, x.matmul(&w))
    });
    assert_spares_are_overwritten("product with a transposed operand", || {
        let x = input(&[ROWS, 64], 8);
        let w = Tensor::full([COLS, 64], 0.01);
        value_and_grad(&x, x.matmul(&w.transpose(0, 1)))
    });
}
