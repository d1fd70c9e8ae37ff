//! The exercises of chapter 3, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use chapter03::exercises::{
    gaussian_weights_nd, laplacian_weights, leave_one_out_weights,
    per_key_width_weights,
};
use engine::Tensor;
use lesson::assert_close;

/// `exp(sᵢ) / Σⱼ exp(sⱼ)` of a handful of scores, written out.
fn softmax_of(scores: &[f32]) -> Vec<f32> {
    let total: f32 = scores.iter().map(|s| s.exp()).sum();
    scores.iter().map(|s| s.exp() / total).collect()
}

#[test]
fn exercise_1_laplacian_weights_decay_with_the_distance_not_its_square() {
    let queries = Tensor::from_vec(vec![0.0, 1.5], [2]);
    let keys = Tensor::from_vec(vec![0.0, 1.0, 3.0], [3]);
    let a = laplacian_weights(&queries, &keys, 1.0);
    assert_eq!(a.shape(), &[2, 3]);
    // Distances: query 0 → [0, 1, 3]; query 1.5 → [1.5, 0.5, 1.5].
    let mut expected = softmax_of(&[0.0, -1.0, -3.0]);
    expected.extend(softmax_of(&[-1.5, -0.5, -1.5]));
    assert_close(&a.to_vec(), &expected, 1e-5);
    // A width of 2 halves every score.
    let wide = laplacian_weights(&queries, &keys, 2.0);
    let mut expected = softmax_of(&[0.0, -0.5, -1.5]);
    expected.extend(softmax_of(&[-0.75, -0.25, -0.75]));
    assert_close(&wide.to_vec(), &expected, 1e-5);
}

#[test]
fn exercise_2_leave_one_out_weights_give_no_point_its_own_key() {
    let x = Tensor::from_vec(vec![0.0, 1.0, 3.0], [3]);
    let a = leave_one_out_weights(&x, 1.0);
    assert_eq!(a.shape(), &[3, 3]);
    // Scores −d²/2 over the two other points: row 0 sees 1 and 3 (−0.5, −4.5), row 1 sees
    // 0 and 3 (−0.5, −2), row 2 sees 0 and 1 (−4.5, −2).
    let (r0, r1, r2) = (
        softmax_of(&[-0.5, -4.5]),
        softmax_of(&[-0.5, -2.0]),
        softmax_of(&[-4.5, -2.0]),
    );
    let expected = [0.0, r0[0], r0[1], r1[0], 0.0, r1[1], r2[0], r2[1], 0.0];
    assert_close(&a.to_vec(), &expected, 1e-5);
    // w = 2 multiplies every score by 4.
    let sharp = leave_one_out_weights(&x, 2.0).to_vec();
    let r0 = softmax_of(&[-2.0, -18.0]);
    assert_close(&sharp[..3], &[0.0, r0[0], r0[1]], 1e-5);
}

#[test]
fn exercise_3_gaussian_weights_nd_use_the_squared_euclidean_distance() {
    let queries = Tensor::from_vec(vec![0.0, 0.0, 3.0, 4.0], [2, 2]);
    let keys = Tensor::from_vec(vec![0.0, 0.0, 3.0, 4.0, 1.0, 0.0], [3, 2]);
    let a = gaussian_weights_nd(&queries, &keys, 1.0);
    assert_eq!(a.shape(), &[2, 3]);
    // Squared distances: from (0, 0): 0, 25, 1; from (3, 4): 25, 0, 20.
    let mut expected = softmax_of(&[0.0, -12.5, -0.5]);
    expected.extend(softmax_of(&[-12.5, 0.0, -10.0]));
    assert_close(&a.to_vec(), &expected, 1e-5);
    // σ = 5 divides every score by 25.
    let wide = gaussian_weights_nd(&queries, &keys, 5.0).to_vec();
    assert_close(&wide[..3], &softmax_of(&[0.0, -0.5, -0.02]), 1e-5);
}

#[test]
fn exercise_4_per_key_width_weights_scale_each_key_by_its_own_width() {
    let queries = Tensor::from_vec(vec![0.0], [1]);
    let keys = Tensor::from_vec(vec![1.0, 2.0], [2]);
    let w = Tensor::from_vec(vec![2.0, 0.5], [2]);
    let a = per_key_width_weights(&queries, &keys, &w);
    assert_eq!(a.shape(), &[1, 2]);
    // Scores −((q − kᵢ)·wᵢ)²/2: key 1 with w = 2 gives −2, key 2 with w = 0.5 gives −0.5:
    // the farther key wins because its kernel is wider.
    assert_close(&a.to_vec(), &softmax_of(&[-2.0, -0.5]), 1e-5);

    // The widths are learnable: with w = [1, 1] the scores are s = [−0.5, −2], and
    // ∂α₀/∂w = α₀α₁ · [−(q − k₀)² w₀, (q − k₁)² w₁] = α₀α₁ · [−1, 4].
    let w = Tensor::from_vec(vec![1.0, 1.0], [2]).requires_grad_();
    let a = per_key_width_weights(&queries, &keys, &w);
    a.narrow(1, 0, 1).sum().backward();
    let p = softmax_of(&[-0.5, -2.0]);
    let g = w.grad().expect("w takes part in the weights");
    assert_close(&g.to_vec(), &[-p[0] * p[1], 4.0 * p[0] * p[1]], 1e-5);
}
