//! Large element-wise kernels split their output between threads; the split must not change
//! a single bit. Each computation runs on 1 thread, then on 3 and 7 (7 splits rows in the
//! middle), and the bits are compared.

use engine::random::rng_from_seed;
use engine::threads::{PARALLEL_MIN, num_threads, set_num_threads};
use engine::{Tensor, no_grad};

fn randn(shape: &[usize], seed: u64) -> Tensor {
    Tensor::normal_with(shape, 0.0, 1.0, &mut rng_from_seed(seed))
}

/// The inputs, made once.
struct Inputs {
    a: Tensor,
    b: Tensor,
    c: Tensor,
    d: Tensor,
    scores: Tensor,
    g: Tensor,
}

fn inputs() -> Inputs {
    Inputs {
        a: randn(&[3, 400_000], 1),
        b: randn(&[400_000], 2),
        c: randn(&[64, 1, 130], 3),
        d: randn(&[64, 130, 130], 4),
        scores: randn(&[40, 160, 170], 5).requires_grad_(),
        g: randn(&[40, 160, 170], 6),
    }
}

/// Everything the threaded kernels compute, as bits.
fn compute(x: &Inputs) -> Vec<Vec<u32>> {
    let Inputs {
        a,
        b,
        c,
        d,
        scores,
        g,
    } = x;
    scores.zero_grad();
    let weights = scores.softmax(-1);
    weights.backward_with(g);
    let results = no_grad(|| {
        vec![
            a + b, // rows of a whole row of b
            a * a, // one row of everything
            d - c, // a repeated middle dimension
            b / &Tensor::scalar(3.0),
            a.tanh(),
            a.exp(),
            scores.log_softmax(-1),
            weights.clone(),
            scores.grad().unwrap(),
        ]
    });
    // Every result but the scalar division is large enough to be split.
    let large = results.iter().filter(|t| t.numel() >= PARALLEL_MIN).count();
    assert_eq!(large, results.len() - 1);
    results
        .iter()
        .map(|t| t.to_vec().iter().map(|v| v.to_bits()).collect())
        .collect()
}

#[test]
fn results_have_the_same_bits_on_one_three_and_seven_threads() {
    let x = inputs();
    set_num_threads(1);
    assert_eq!(num_threads(), 1);
    let one = compute(&x);
    for threads in [3, 7] {
        set_num_threads(threads);
        assert_eq!(num_threads(), threads);
        let many = compute(&x);
        for (i, (x, y)) in one.iter().zip(&many).enumerate() {
            assert!(x == y, "result {i} differs between 1 and {threads} threads");
        }
    }
}

#[test]
fn zero_threads_is_refused() {
    let message = std::panic::catch_unwind(|| set_num_threads(0)).unwrap_err();
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| message.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(message.contains("at least 1"), "{message}");
}
