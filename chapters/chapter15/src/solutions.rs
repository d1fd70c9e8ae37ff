//! Reference solutions to the chapter 15 exercises.

// ANCHOR: all
use engine::optim::GradScalerConfig;
use engine::precision::Precision;

/// Exercise 1. The share of the entries that are not zero in `full` (f32
/// gradients) but exactly zero in `half` (the same gradients computed in half
/// precision); 0 when `full` has no nonzero entry.
pub fn vanished_share(full: &[f32], half: &[f32]) -> f64 {
    let nonzero = full.iter().filter(|&&g| g != 0.0).count();
    let vanished = full
        .iter()
        .zip(half)
        .filter(|&(&g, &h)| g != 0.0 && h == 0.0)
        .count();
    if nonzero == 0 {
        0.0
    } else {
        vanished as f64 / nonzero as f64
    }
}

/// Exercise 2. GradScaler's update rule as a function: given the scale, whether
/// this step's gradients overflowed and the steps in a row without an overflow so
/// far (before this one), the next scale and the next count. An overflow backs off
/// and a step that makes `growth_interval` clean steps in a row grows; both start the
/// count again at 0.
pub fn next_scale(
    scale: f32,
    found_inf: bool,
    growth_tracker: usize,
    config: &GradScalerConfig,
) -> (f32, usize) {
    if found_inf {
        return (scale * config.backoff_factor, 0);
    }
    if growth_tracker + 1 == config.growth_interval {
        (scale * config.growth_factor, 0)
    } else {
        (scale, growth_tracker + 1)
    }
}

/// Exercise 3. The largest power of two `S` (an `f32`, so at most `2¹²⁷`) such that a
/// gradient of magnitude `max_abs` times `S` is still finite once stored in
/// `precision` (at least 1).
pub fn largest_safe_scale(max_abs: f32, precision: Precision) -> f32 {
    let mut scale = 1.0f32;
    // `2S` must itself be an f32 (2¹²⁸ is not) before `max_abs · 2S` is tried.
    while (scale * 2.0).is_finite()
        && precision.round(max_abs * (scale * 2.0)).is_finite()
    {
        scale *= 2.0;
    }
    scale
}
// ANCHOR_END: all
