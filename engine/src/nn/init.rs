//! Initialisers, following `torch.nn.init`: each returns a fresh tensor of the given shape
//! drawn from this thread's seeded generator (see [`crate::random`]).
//!
//! The tensors do not require a gradient; a layer makes them parameters with
//! [`parameter`](super::parameter).
//!
//! Fans follow PyTorch's convention for a weight shaped `[out, in, k₁, k₂, …]`:
//! `fan_in = in · k₁ · k₂ · …` and `fan_out = out · k₁ · k₂ · …`. For a 2-D `[out, in]`
//! [`Linear`](super::Linear) weight that is `fan_in = shape[1]`, `fan_out = shape[0]`.
//!
//! ```
//! use engine::nn::init;
//! engine::manual_seed(0);
//! let w = init::xavier_uniform(&[64, 32], 1.0);
//! let bound = (6.0f32 / (64.0 + 32.0)).sqrt();
//! assert!(w.to_vec().iter().all(|v| v.abs() <= bound));
//! ```

use crate::check;
use crate::shape::ShapeArg;
use crate::tensor::Tensor;

/// Which fan the Kaiming initialisers scale by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanMode {
    /// Keeps the variance of activations in the forward pass (PyTorch's default).
    FanIn,
    /// Keeps the variance of gradients in the backward pass.
    FanOut,
}

/// `(fan_in, fan_out)` of a weight shaped `[out, in, …]`, like PyTorch's
/// `_calculate_fan_in_and_fan_out`.
///
/// ```
/// assert_eq!(engine::nn::init::fans(&[5, 3]), (3, 5));
/// assert_eq!(engine::nn::init::fans(&[8, 4, 3, 3]), (36, 72));
/// ```
#[track_caller]
pub fn fans(shape: &[usize]) -> (usize, usize) {
    check::ensure(shape.len() >= 2, "nn::init::fans", || {
        format!(
            "fans need a weight with at least 2 dimensions ([out, in, ...]), found shape {shape:?}"
        )
    });
    let receptive: usize = shape[2..].iter().product();
    (shape[1] * receptive, shape[0] * receptive)
}

/// The gain PyTorch's `calculate_gain("leaky_relu", a)` gives: `√(2 / (1 + a²))`.
/// With `a = 0` it is ReLU's gain, `√2`.
pub fn leaky_relu_gain(a: f32) -> f32 {
    (2.0 / (1.0 + a * a)).sqrt()
}

/// Values drawn uniformly from `[low, high)`, like `nn.init.uniform_`.
#[track_caller]
pub fn uniform(shape: impl ShapeArg, low: f32, high: f32) -> Tensor {
    let shape = &check::sizes("nn::init::uniform", shape);
    check::ensure(low < high, "nn::init::uniform", || {
        format!("needs low < high, found low = {low}, high = {high}")
    });
    Tensor::rand(shape, low, high)
}

/// Normal values with the given mean and standard deviation, like `nn.init.normal_`.
#[track_caller]
pub fn normal(shape: impl ShapeArg, mean: f32, std: f32) -> Tensor {
    let shape = &check::sizes("nn::init::normal", shape);
    check::ensure(std >= 0.0, "nn::init::normal", || {
        format!("needs std ≥ 0, found {std}")
    });
    Tensor::normal(shape, mean, std)
}

/// `U(-b, b)` with `b = gain · √(6 / (fan_in + fan_out))` (Glorot and Bengio, 2010), like
/// `nn.init.xavier_uniform_`. Its variance, `b² / 3`, is `gain² · 2 / (fan_in + fan_out)`.
#[track_caller]
pub fn xavier_uniform(shape: impl ShapeArg, gain: f32) -> Tensor {
    let shape = &check::sizes("nn::init::xavier_uniform", shape);
    let (fan_in, fan_out) = fans(shape);
    let bound = gain * (6.0 / (fan_in + fan_out) as f32).sqrt();
    symmetric_uniform("nn::init::xavier_uniform", shape, bound)
}

/// `N(0, σ²)` with `σ = gain · √(2 / (fan_in + fan_out))`, like `nn.init.xavier_normal_`.
#[track_caller]
pub fn xavier_normal(shape: impl ShapeArg, gain: f32) -> Tensor {
    let shape = &check::sizes("nn::init::xavier_normal", shape);
    let (fan_in, fan_out) = fans(shape);
    let std = gain * (2.0 / (fan_in + fan_out) as f32).sqrt();
    Tensor::normal(shape, 0.0, std)
}

/// `U(-b, b)` with `b = √3 · gain / √fan` and `gain = √(2 / (1 + a²))` (He et al., 2015),
/// like `nn.init.kaiming_uniform_(w, a, mode, nonlinearity="leaky_relu")`; `a` is the
/// negative slope of the leaky ReLU that follows (0 for ReLU).
///
/// PyTorch's `Linear` uses `a = √5`, `FanIn`, which gives `b = 1 / √fan_in`.
#[track_caller]
pub fn kaiming_uniform(shape: impl ShapeArg, a: f32, mode: FanMode) -> Tensor {
    let shape = &check::sizes("nn::init::kaiming_uniform", shape);
    let fan = pick_fan(shape, mode);
    let bound = 3f32.sqrt() * leaky_relu_gain(a) / (fan as f32).sqrt();
    symmetric_uniform("nn::init::kaiming_uniform", shape, bound)
}

/// `N(0, σ²)` with `σ = gain / √fan` and `gain = √(2 / (1 + a²))`, like
/// `nn.init.kaiming_normal_(w, a, mode, nonlinearity="leaky_relu")`.
#[track_caller]
pub fn kaiming_normal(shape: impl ShapeArg, a: f32, mode: FanMode) -> Tensor {
    let shape = &check::sizes("nn::init::kaiming_normal", shape);
    let fan = pick_fan(shape, mode);
    let std = leaky_relu_gain(a) / (fan as f32).sqrt();
    Tensor::normal(shape, 0.0, std)
}

#[track_caller]
fn pick_fan(shape: &[usize], mode: FanMode) -> usize {
    let (fan_in, fan_out) = fans(shape);
    match mode {
        FanMode::FanIn => fan_in,
        FanMode::FanOut => fan_out,
    }
}

/// `U(-bound, bound)`, refusing the empty or infinite range an empty weight would give.
#[track_caller]
fn symmetric_uniform(op: &str, shape: &[usize], bound: f32) -> Tensor {
    check::ensure(bound > 0.0 && bound.is_finite(), op, || {
        format!(
            "shape {shape:?} gives the bound {bound}; every dimension must be at least 1"
        )
    });
    Tensor::rand(shape, -bound, bound)
}
