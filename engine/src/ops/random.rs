//! Random tensors and dropout, all drawn from seeded generators (see [`crate::random`]).

use rand_distr::{Bernoulli, Distribution, Normal, Uniform};

use crate::check;
use crate::memory;
use crate::random::with_rng;
use crate::shape::{ShapeArg, numel};
use crate::tensor::Tensor;

impl Tensor {
    /// Values drawn uniformly from `[low, high)` with this thread's seeded generator.
    #[track_caller]
    pub fn rand(shape: impl ShapeArg, low: f32, high: f32) -> Tensor {
        // Checked here too, outside the closure, so a mistake points at the caller's line.
        check_uniform(low, high);
        let shape = random_shape("rand", shape);
        with_rng(|rng| Tensor::rand_with(shape, low, high, rng))
    }

    /// Values drawn uniformly from `[low, high)` with the given generator.
    #[track_caller]
    pub fn rand_with(
        shape: impl ShapeArg,
        low: f32,
        high: f32,
        rng: &mut impl rand::Rng,
    ) -> Tensor {
        check_uniform(low, high);
        let shape = random_shape("rand", shape);
        let dist = Uniform::new(low, high).expect("checked bounds");
        Tensor::from_parts(
            "rand",
            (0..numel(&shape)).map(|_| dist.sample(rng)).collect(),
            shape,
        )
    }

    /// Standard normal values (mean 0, standard deviation 1), like `torch.randn`.
    #[track_caller]
    pub fn randn(shape: impl ShapeArg) -> Tensor {
        Tensor::normal(shape, 0.0, 1.0)
    }

    /// Normal values with the given mean and standard deviation.
    #[track_caller]
    pub fn normal(shape: impl ShapeArg, mean: f32, std: f32) -> Tensor {
        check_normal(mean, std);
        let shape = random_shape("normal", shape);
        with_rng(|rng| Tensor::normal_with(shape, mean, std, rng))
    }

    /// Normal values drawn with the given generator.
    #[track_caller]
    pub fn normal_with(
        shape: impl ShapeArg,
        mean: f32,
        std: f32,
        rng: &mut impl rand::Rng,
    ) -> Tensor {
        check_normal(mean, std);
        let shape = random_shape("normal", shape);
        let dist = Normal::new(mean, std).expect("checked parameters");
        Tensor::from_parts(
            "normal",
            (0..numel(&shape)).map(|_| dist.sample(rng)).collect(),
            shape,
        )
    }

    /// Inverted dropout: in training, each element is zeroed with probability `p` and the
    /// survivors are scaled by `1 / (1 - p)`, so the expected value is unchanged; outside
    /// training it returns `self` unchanged. Draws from this thread's seeded generator.
    ///
    /// The mask is a constant, so the gradient is `upstream × mask / (1 - p)`.
    #[track_caller]
    pub fn dropout(&self, p: f32, training: bool) -> Tensor {
        check::ensure((0.0..=1.0).contains(&p), "dropout", || {
            format!("the probability p must be in [0, 1], found {p}")
        });
        if !training || p == 0.0 {
            return self.clone();
        }
        if p == 1.0 {
            return self * 0.0;
        }
        let keep = Bernoulli::new(f64::from(1.0 - p)).expect("checked probability");
        let scale = 1.0 / (1.0 - p);
        let mask: Vec<f32> = with_rng(|rng| {
            (0..self.numel())
                .map(|_| if keep.sample(rng) { scale } else { 0.0 })
                .collect()
        });
        // The mask is drawn on the host from the engine's generator, so a seed gives the
        // same mask on every device.
        self * Tensor::from_parts("dropout", mask, self.shape().to_vec())
            .to(&self.device())
    }
}

#[track_caller]
fn check_uniform(low: f32, high: f32) {
    check::ensure(
        low < high && low.is_finite() && high.is_finite(),
        "rand",
        || format!("needs finite low < high, found low = {low}, high = {high}"),
    );
}

#[track_caller]
fn check_normal(mean: f32, std: f32) {
    check::ensure(
        std >= 0.0 && std.is_finite() && mean.is_finite(),
        "normal",
        || {
            format!(
                "needs a finite mean and a finite std ≥ 0, found mean = {mean}, std = {std}"
            )
        },
    );
}

/// The checked sizes of a random tensor's shape, refused before any value is drawn.
#[track_caller]
fn random_shape(op: &str, shape: impl ShapeArg) -> Vec<usize> {
    let shape = check::sizes(op, shape);
    memory::ensure_can_allocate(op, &shape);
    shape
}
