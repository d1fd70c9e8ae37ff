//! Your solutions to the chapter 15 exercises. Replace each `todo!()` with your code,
//! then check it with `cargo test -p chapter15 --features exercises` (the same tests
//! the reference solutions pass). The page's "Exercises" section explains each one.

use engine::optim::GradScalerConfig;
use engine::precision::Precision;

/// Exercise 1. The share of the entries that are not zero in `full` (f32
/// gradients) but exactly zero in `half` (the same gradients computed in half
/// precision); 0 when `full` has no nonzero entry.
pub fn vanished_share(full: &[f32], half: &[f32]) -> f64 {
    let _ = (full, half);
    todo!("exercise 1: count the nonzero entries of full, and those zero in half")
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
    let _ = (scale, found_inf, growth_tracker, config);
    todo!(
        "exercise 2: back off on an overflow, grow after growth_interval clean steps"
    )
}

/// Exercise 3. The largest power of two `S` (an `f32`, so at most `2¹²⁷`) such that a
/// gradient of magnitude `max_abs` times `S` is still finite once stored in
/// `precision` (at least 1).
pub fn largest_safe_scale(max_abs: f32, precision: Precision) -> f32 {
    let _ = (max_abs, precision);
    todo!("exercise 3: double S while max_abs · 2S still rounds to a finite value")
}
