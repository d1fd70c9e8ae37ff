//! The exercises of chapter 15, held to hand-computed values. They run against the
//! reference solutions by default and against `src/exercises.rs` with `--features
//! exercises`.

use chapter15::exercises::{largest_safe_scale, next_scale, vanished_share};
use engine::optim::GradScalerConfig;
use engine::precision::Precision;

#[test]
fn exercise_1_counts_only_entries_that_were_nonzero_in_f32() {
    // Nonzero in f32: 1e-8, 2, 3e-9, 5 (four); zero in half: 1e-8 and 3e-9 (two).
    let full = [1e-8, 0.0, 2.0, 3e-9, 5.0];
    let half = [0.0, 0.0, 2.0, 0.0, 5.0];
    assert_eq!(vanished_share(&full, &half), 0.5);
    assert_eq!(vanished_share(&[0.0, 0.0], &[0.0, 0.0]), 0.0);
    assert_eq!(vanished_share(&[1.0], &[1.0]), 0.0);
}

#[test]
fn exercise_2_backs_off_on_overflow_and_grows_after_the_interval() {
    let c = GradScalerConfig {
        growth_interval: 3,
        ..GradScalerConfig::default()
    };
    assert_eq!(next_scale(1024.0, true, 2, &c), (512.0, 0));
    assert_eq!(next_scale(1024.0, false, 0, &c), (1024.0, 1));
    assert_eq!(next_scale(1024.0, false, 1, &c), (1024.0, 2));
    assert_eq!(next_scale(1024.0, false, 2, &c), (2048.0, 0));
    // PyTorch's defaults: 65536 halves on an overflow.
    let d = GradScalerConfig::default();
    assert_eq!(next_scale(65536.0, true, 1999, &d), (32768.0, 0));
    assert_eq!(next_scale(65536.0, false, 1999, &d), (131072.0, 0));
}

#[test]
fn exercise_3_finds_the_largest_scale_that_keeps_a_gradient_finite() {
    // 4 · 16384 = 65536 rounds to inf in f16 (past 65504 + half a step), 4 · 8192
    // does not: the planted overflow of the tour.
    assert_eq!(largest_safe_scale(4.0, Precision::F16), 8192.0);
    // 1 · 32768 is finite, 1 · 65536 is not.
    assert_eq!(largest_safe_scale(1.0, Precision::F16), 32768.0);
    assert_eq!(largest_safe_scale(1e5, Precision::F16), 1.0);
    // bf16 reaches 3.39e38, as f32 does: 1 · 2^127 is finite, and 2^128 is no f32.
    assert_eq!(largest_safe_scale(1.0, Precision::Bf16), 2f32.powi(127));
    // 3 · 2^126 = 1.5 · 2^127 is finite in bf16, 3 · 2^127 is not.
    assert_eq!(largest_safe_scale(3.0, Precision::Bf16), 2f32.powi(126));
}
