//! The exercises of chapter 6, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use chapter06::exercises::{
    attention_with_temperature, cosine_attention_weights,
    projected_attention_weights, uniform_score_variance,
};
use engine::Tensor;
use lesson::assert_close;

#[test]
fn exercise_1_temperature_sharpens_below_one_and_flattens_above() {
    // d = 4, so √d = 2; the scores are [0, 2 ln 3], the scaled scores [0, ln 3] / τ.
    let ln3 = 3f32.ln();
    let queries = Tensor::from_vec(vec![2.0 * ln3, 0.0, 0.0, 0.0], [1, 1, 4]);
    let keys =
        Tensor::from_vec(vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [1, 2, 4]);
    let values = Tensor::from_vec(vec![4.0, 8.0], [1, 2, 1]);
    // τ = 1: softmax([0, ln 3]) = [1/4, 3/4]; output 4/4 + 8·3/4 = 7.
    let (out, w) = attention_with_temperature(&queries, &keys, &values, 1.0);
    assert_eq!(w.shape(), &[1, 1, 2]);
    assert_eq!(out.shape(), &[1, 1, 1]);
    assert_close(&w.to_vec(), &[0.25, 0.75], 1e-6);
    assert_close(&out.to_vec(), &[7.0], 1e-5);
    // τ = 1/2: softmax([0, 2 ln 3]) = [1/10, 9/10]; output 0.4 + 7.2 = 7.6.
    let (out, w) = attention_with_temperature(&queries, &keys, &values, 0.5);
    assert_close(&w.to_vec(), &[0.1, 0.9], 1e-6);
    assert_close(&out.to_vec(), &[7.6], 1e-5);
    // τ = 2: softmax([0, ln 3 / 2]) = [1, √3] / (1 + √3).
    let (out, w) = attention_with_temperature(&queries, &keys, &values, 2.0);
    assert_close(&w.to_vec(), &[0.366_025_4, 0.633_974_6], 1e-6);
    assert_close(&out.to_vec(), &[6.535_898], 1e-5);
}

#[test]
fn exercise_2_projected_attention_scales_by_the_common_size() {
    // dq = dk = 3, projected to d = 2: q̃ = [1, 2], k̃ = [2, 0] and [0, 2], scores [2, 4],
    // scaled by 1/√2: softmax([√2, 2√2]) = [1, e^√2] / (1 + e^√2).
    let queries = Tensor::from_vec(vec![1.0, 2.0, 3.0], [1, 1, 3]);
    let keys = Tensor::from_vec(vec![1.0, 0.0, 5.0, 0.0, 1.0, 7.0], [1, 2, 3]);
    let w_q = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0], [3, 2]);
    let w_k = Tensor::from_vec(vec![2.0, 0.0, 0.0, 2.0, 0.0, 0.0], [3, 2]);
    let w = projected_attention_weights(&queries, &keys, &w_q, &w_k);
    assert_eq!(w.shape(), &[1, 1, 2]);
    assert_close(&w.to_vec(), &[0.195_570_3, 0.804_429_7], 1e-6);
}

#[test]
fn exercise_3_cosine_attention_ignores_the_lengths() {
    // Query [3, 4] against keys pointing the same way (twice as long), at a right angle,
    // and the opposite way: cosines [1, 0, -1]. With τ = 1/ln 2 the exponentials are
    // [2, 1, 1/2], so the weights are [4, 2, 1] / 7. Query [1, 0]: cosines
    // [0.6, 0.8, -0.6], exponentials 2^0.6, 2^0.8, 2^-0.6.
    let queries = Tensor::from_vec(vec![3.0, 4.0, 1.0, 0.0], [1, 2, 2]);
    let keys = Tensor::from_vec(vec![6.0, 8.0, 0.4, -0.3, -3.0, -4.0], [1, 3, 2]);
    let w = cosine_attention_weights(&queries, &keys, 1.0 / 2f32.ln());
    assert_eq!(w.shape(), &[1, 2, 3]);
    assert_close(
        &w.to_vec(),
        &[
            4.0 / 7.0,
            2.0 / 7.0,
            1.0 / 7.0,
            0.387_000_85,
            0.444_547_24,
            0.168_451_9,
        ],
        1e-5,
    );
}

#[test]
fn exercise_4_uniform_entries_give_a_score_variance_of_d_over_nine() {
    // Var(U[-1, 1)) = 1/3, so Var(qᵢ kᵢ) = 1/9 and Var(q · k) = d/9 (not d).
    engine::manual_seed(9);
    for d in [16, 64] {
        let v = uniform_score_variance(d, 4000);
        let expected = d as f32 / 9.0;
        assert!(
            (v - expected).abs() < 0.1 * expected,
            "d = {d}: variance {v}, expected about {expected}"
        );
    }
}
