//! [`assert_close`]: the comparison of a computed list with a hand-derived one.

/// Asserts that `actual` and `expected` have the same length and agree element by element
/// to within `tol`, printing both lists when they do not.
///
/// ```
/// lesson::assert_close(&[0.1 + 0.2], &[0.3], 1e-6);
/// ```
#[track_caller]
pub fn assert_close(actual: &[f32], expected: &[f32], tol: f32) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "{actual:?} against {expected:?}"
    );
    for (a, e) in actual.iter().zip(expected) {
        assert!((a - e).abs() <= tol, "{actual:?} against {expected:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::assert_close;

    #[test]
    #[should_panic(expected = "[1.0, 2.0] against [1.0, 2.1]")]
    fn a_difference_beyond_the_tolerance_fails() {
        assert_close(&[1.0, 2.0], &[1.0, 2.1], 0.05);
    }

    #[test]
    #[should_panic(expected = "against")]
    fn lists_of_different_lengths_fail() {
        assert_close(&[1.0], &[1.0, 2.0], 1.0);
    }

    #[test]
    fn differences_within_the_tolerance_pass() {
        assert_close(&[1.0, 2.0], &[1.04, 1.96], 0.05);
    }
}
