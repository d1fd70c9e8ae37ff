//! The harness that runs one test body on the CPU and on the GPU and compares the two.
//!
//! A body takes a [`Device`], builds its inputs (seeded, on the CPU) and moves them there,
//! runs ops forward and backward, and returns the tensors to compare: results and
//! gradients. [`on_devices`] runs it on the CPU, then, when the engine is built with its
//! `wgpu` feature, on the GPU, and checks that every GPU result lives on the GPU and
//! equals the CPU's within f32 tolerances.
//!
//! With the feature on, a machine without a GPU adapter fails these tests with the
//! adapter error, rather than skipping them: set `ENGINE_GPU_TESTS=skip` to opt out, which
//! each test then reports on standard error.

// Each test file uses only some of these.
#![allow(dead_code)]

use std::sync::Once;

use engine::{Device, Tensor};

/// The GPU to test on: `None` in a CPU-only build (or when opted out, loudly).
pub fn test_gpu() -> Option<Device> {
    if !cfg!(feature = "wgpu") {
        return None;
    }
    static ANNOUNCE: Once = Once::new();
    match Device::gpu() {
        Ok(gpu) => {
            ANNOUNCE.call_once(|| eprintln!("GPU tests run on: {gpu}"));
            Some(gpu)
        }
        Err(e) if std::env::var("ENGINE_GPU_TESTS").as_deref() == Ok("skip") => {
            eprintln!("GPU TESTS SKIPPED (ENGINE_GPU_TESTS=skip): {e}");
            None
        }
        Err(e) => panic!(
            "the engine was built with its wgpu feature, so these tests need a GPU adapter:\n{e}\n(set ENGINE_GPU_TESTS=skip to skip them on purpose)"
        ),
    }
}

/// How close the GPU's values must be to the CPU's: `|gpu − cpu| ≤ abs + rel·|cpu|`. The
/// two differ by rounding only: the order of long sums, and WGSL's `exp`, `log` and `tanh`
/// against the engine's own.
#[derive(Clone, Copy)]
pub struct Tolerance {
    pub abs: f32,
    pub rel: f32,
}

/// The tolerance of most ops: values of order 1, a few roundings apart.
pub const F32: Tolerance = Tolerance {
    abs: 1e-5,
    rel: 1e-4,
};

/// Runs `body` on the CPU and on the GPU (when there is one) and compares the results.
#[track_caller]
pub fn on_devices(
    name: &str,
    tolerance: Tolerance,
    body: impl Fn(&Device) -> Vec<Tensor>,
) {
    let expected = body(&Device::Cpu);
    for t in &expected {
        assert_eq!(t.device(), Device::Cpu, "{name}: a CPU result left the CPU");
    }
    let Some(gpu) = test_gpu() else { return };
    let got = body(&gpu);
    assert_eq!(
        got.len(),
        expected.len(),
        "{name}: a different number of results"
    );
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g.device(), gpu, "{name}: result {i} is not on the GPU");
        assert_eq!(g.shape(), e.shape(), "{name}: result {i} has another shape");
        let (g, e) = (g.to_vec(), e.to_vec());
        for (j, (&a, &b)) in g.iter().zip(&e).enumerate() {
            let same_special =
                (a.is_nan() && b.is_nan()) || (a.is_infinite() && a == b);
            let close = (a - b).abs() <= tolerance.abs + tolerance.rel * b.abs();
            assert!(
                same_special || close,
                "{name}: result {i}, entry {j}: GPU {a}, CPU {b} (difference {:e})",
                (a - b).abs()
            );
        }
    }
}

/// Seeded standard normal values on the CPU, moved to `device`.
pub fn randn(shape: &[usize], seed: u64, device: &Device) -> Tensor {
    use engine::random::rng_from_seed;
    Tensor::normal_with(shape, 0.0, 1.0, &mut rng_from_seed(seed)).to(device)
}

/// Like [`randn`], marked as a leaf that requires a gradient on `device`.
pub fn param(shape: &[usize], seed: u64, device: &Device) -> Tensor {
    randn(shape, seed, device).requires_grad_()
}

/// A scalar loss that weighs every entry of `y` differently (so each entry's gradient is
/// distinct), and its backward pass.
pub fn backward_weighted(y: &Tensor, seed: u64) {
    let weights = randn(y.shape(), seed, &y.device());
    (y * &weights).sum().backward();
}
