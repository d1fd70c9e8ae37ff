//! A second solution to each chapter 15 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::optim::GradScalerConfig;
use engine::precision::Precision;

/// Exercise 1, in one pass that counts both numbers at once.
pub fn vanished_share(full: &[f32], half: &[f32]) -> f64 {
    let (nonzero, vanished) = full
        .iter()
        .zip(half)
        .filter(|(g, _)| **g != 0.0)
        .fold((0usize, 0usize), |(n, v), (_, h)| {
            (n + 1, v + usize::from(*h == 0.0))
        });
    if nonzero == 0 {
        0.0
    } else {
        vanished as f64 / nonzero as f64
    }
}

/// Exercise 2, as one `match` over the overflow and the count after this step.
pub fn next_scale(
    scale: f32,
    found_inf: bool,
    growth_tracker: usize,
    config: &GradScalerConfig,
) -> (f32, usize) {
    match (found_inf, growth_tracker + 1) {
        (true, _) => (scale * config.backoff_factor, 0),
        (false, clean) if clean >= config.growth_interval => {
            (scale * config.growth_factor, 0)
        }
        (false, clean) => (scale, clean),
    }
}

/// Exercise 3, searching downwards: from the largest power of two an `f32` holds,
/// `2¹²⁷`, halve until the scaled gradient stays finite in `precision`, or 1 is reached.
pub fn largest_safe_scale(max_abs: f32, precision: Precision) -> f32 {
    let mut scale = 2f32.powi(127);
    while scale > 1.0 && !precision.round(max_abs * scale).is_finite() {
        scale /= 2.0;
    }
    scale
}
