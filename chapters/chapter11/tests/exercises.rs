//! The exercises of chapter 11, held to hand-computed values. They run against the
//! reference solutions by default and against `src/exercises.rs` with `--features
//! exercises`.

use chapter11::exercises::{dilated_window_mask, kept_weight, loglog_slope, merge};
use chapter11::online::{Running, step};

#[track_caller]
fn assert_near(actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "expected {expected}, found {actual}"
    );
}

#[test]
fn exercise_1_merges_two_states_by_hand() {
    // a: max 1, sum 1, acc 2; b: max 3, sum 2, acc 4. The merged max is 3, and a's
    // sum and acc are rescaled by exp(1 − 3): sum = e⁻² + 2, acc = 2e⁻² + 4.
    let a = Running {
        max: 1.0,
        sum: 1.0,
        acc: 2.0,
    };
    let b = Running {
        max: 3.0,
        sum: 2.0,
        acc: 4.0,
    };
    for merged in [merge(a, b), merge(b, a)] {
        assert_eq!(merged.max, 3.0);
        assert_near(merged.sum, (-2f64).exp() + 2.0, 1e-12);
        assert_near(merged.acc, 2.0 * (-2f64).exp() + 4.0, 1e-12);
    }
}

#[test]
fn exercise_1_two_halves_merge_into_the_whole_row() {
    let scores = [1.0, 3.0, 0.5, 4.0, 2.0, 2.5];
    let values = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
    let (whole, _) = step(Running::EMPTY, &scores, &values);
    for split in 1..scores.len() {
        let (left, _) = step(Running::EMPTY, &scores[..split], &values[..split]);
        let (right, _) = step(Running::EMPTY, &scores[split..], &values[split..]);
        let merged = merge(left, right);
        assert_eq!(merged.max, whole.max, "split at {split}");
        assert_near(merged.sum, whole.sum, 1e-12);
        assert_near(merged.acc, whole.acc, 1e-12);
    }
}

#[test]
fn exercise_1_an_empty_part_changes_nothing() {
    let (part, _) = step(Running::EMPTY, &[0.5, -1.0], &[2.0, 3.0]);
    assert_eq!(merge(part, Running::EMPTY), part);
    assert_eq!(merge(Running::EMPTY, part), part);
    let both = merge(Running::EMPTY, Running::EMPTY);
    assert_eq!(both.max, f64::NEG_INFINITY);
    assert_eq!((both.sum, both.acc), (0.0, 0.0), "no NaN from -∞ − -∞");
}

#[test]
fn exercise_2_a_dilated_window_by_hand() {
    // n = 5, half-width 1, dilation 2: distances 0 and 2.
    #[rustfmt::skip]
    let expected = [
        1.0, 0.0, 1.0, 0.0, 0.0,
        0.0, 1.0, 0.0, 1.0, 0.0,
        1.0, 0.0, 1.0, 0.0, 1.0,
        0.0, 1.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 1.0, 0.0, 1.0,
    ];
    assert_eq!(dilated_window_mask(5, 1, 2), expected);
}

#[test]
fn exercise_2_dilation_one_is_the_local_window() {
    let window = attention::LocalWindow {
        window: 2,
        ..Default::default()
    };
    assert_eq!(dilated_window_mask(9, 2, 1), window.keep_mask(9).to_vec());
    // Half-width 0: only the diagonal, whatever the dilation.
    let diagonal: Vec<f32> = (0..16)
        .map(|e| if e / 4 == e % 4 { 1.0 } else { 0.0 })
        .collect();
    assert_eq!(dilated_window_mask(4, 0, 3), diagonal);
}

#[test]
fn exercise_3_kept_weight_by_hand() {
    // Equal scores: each key holds a quarter.
    assert_near(
        kept_weight(&[0.0; 4], &[true, false, true, false]),
        0.5,
        1e-12,
    );
    // Scores ln 3 and 0: weights 3/4 and 1/4.
    assert_near(kept_weight(&[3f64.ln(), 0.0], &[true, false]), 0.75, 1e-12);
    assert_near(kept_weight(&[3f64.ln(), 0.0], &[false, true]), 0.25, 1e-12);
    assert_near(kept_weight(&[1.0, 2.0, 3.0], &[true; 3]), 1.0, 1e-12);
}

#[test]
fn exercise_3_large_scores_do_not_overflow() {
    // exp(1000) overflows f64: subtract the maximum first.
    let share = kept_weight(&[1000.0, 1000.0, -1000.0], &[true, false, false]);
    assert_near(share, 0.5, 1e-12);
}

#[test]
fn exercise_4_the_slope_of_powers() {
    let square: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
        .iter()
        .map(|&x| (x, 3.0 * x * x))
        .collect();
    assert_near(loglog_slope(&square), 2.0, 1e-12);
    let linear = [(256.0, 5.0 * 256.0), (1024.0, 5.0 * 1024.0)];
    assert_near(loglog_slope(&linear), 1.0, 1e-12);
}

#[test]
fn exercise_4_a_least_squares_fit_through_three_points() {
    // ln x = 0, 1, 2 (x = 1, e, e²) and ln y = 0, 1, 3: the slope is
    // Σ (x − 1)(y − 4/3) / Σ (x − 1)² = (4/3 + 5/3) / 2 = 1.5.
    let e = std::f64::consts::E;
    let points = [(1.0, 1.0), (e, e), (e * e, e.powi(3))];
    assert_near(loglog_slope(&points), 1.5, 1e-12);
}
