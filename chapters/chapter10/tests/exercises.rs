//! The exercises of chapter 10, held to hand-computed values. They run against the
//! reference solutions by default and against `src/exercises.rs` with `--features
//! exercises`.

use chapter10::exercises::{
    clip_by_total_norm, normalised_entropy, single_query_scores, weight_norm_rows,
};
use engine::Tensor;
use lesson::{assert_close, panic_message};

#[test]
fn exercise_1_scores_each_example_s_keys_against_its_own_query() {
    // B = K = 2, the case where a forgotten unsqueeze still runs: example 0's query
    // is 1, example 1's is -1 (h = 1); every key is 0.5.
    let query = Tensor::from_vec(vec![1.0, -1.0], [2, 1]);
    let keys = Tensor::from_vec(vec![0.5, 0.5, 0.5, 0.5], [2, 2, 1]);
    let v = Tensor::from_vec(vec![2.0], [1]);
    let s = single_query_scores(&query, &keys, &v);
    assert_eq!(s.shape(), &[2, 2]);
    let t = f32::tanh;
    assert_close(
        &s.to_vec(),
        &[2.0 * t(1.5), 2.0 * t(1.5), 2.0 * t(-0.5), 2.0 * t(-0.5)],
        1e-6,
    );
}

#[test]
fn exercise_1_refuses_a_query_batch_that_differs_from_the_keys() {
    let message = panic_message(|| {
        single_query_scores(
            &Tensor::zeros([3, 4]),
            &Tensor::zeros([2, 5, 4]),
            &Tensor::zeros([4]),
        );
    });
    assert!(message.starts_with("single_query_scores:"), "{message}");
    // Both shapes named, in any spelling (`[3, 4]`, `(3, 4)`, `3×4`): their sizes in
    // order among the message's numbers.
    assert!(
        names_sizes(&message, &[3, 4]) && names_sizes(&message, &[2, 5, 4]),
        "{message}"
    );
}

/// Whether `sizes` appear one after another among the numbers of `message`.
fn names_sizes(message: &str, sizes: &[usize]) -> bool {
    let numbers: Vec<usize> = message
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|run| run.parse().ok())
        .collect();
    numbers.windows(sizes.len()).any(|run| run == sizes)
}

#[test]
fn exercise_2_entropy_is_one_when_uniform_and_zero_on_one_key() {
    // Example 0: 4 real keys of 4; example 1: 2 real keys of 4 (the rest padding).
    let weights = Tensor::from_vec(
        vec![
            0.25, 0.25, 0.25, 0.25, // uniform over 4: 1
            1.0, 0.0, 0.0, 0.0, // one key: 0
            0.5, 0.5, 0.0, 0.0, // uniform over its 2 real keys: 1
            0.0, 1.0, 0.0, 0.0, // one key: 0
        ],
        [2, 2, 4],
    );
    assert!((normalised_entropy(&weights, &[4, 2]) - 0.5).abs() < 1e-6);
    // 0.9 and 0.1 over two keys: −(0.9 ln 0.9 + 0.1 ln 0.1) / ln 2 = 0.4689956.
    let skewed = Tensor::from_vec(vec![0.9, 0.1], [1, 1, 2]);
    assert!((normalised_entropy(&skewed, &[2]) - 0.468_995_6).abs() < 1e-6);
}

#[test]
fn exercise_3_each_row_has_length_g_and_the_direction_of_v() {
    let g = Tensor::from_vec(vec![10.0, 1.0], [2, 1]).requires_grad_();
    let v = Tensor::from_vec(vec![3.0, 4.0, 0.0, 2.0], [2, 2]).requires_grad_();
    let w = weight_norm_rows(&g, &v);
    assert_close(&w.to_vec(), &[6.0, 8.0, 0.0, 1.0], 1e-6);
    // d(sum w)/dg = the row sums of v/‖v‖: (3 + 4)/5 and 2/2.
    w.sum().backward();
    assert_close(&g.grad().unwrap().to_vec(), &[1.4, 1.0], 1e-6);
    assert!(v.grad().is_ok(), "the gradient reaches v");
}

#[test]
fn exercise_4_clips_every_gradient_by_one_shared_scale() {
    // Norm of (3, 4) and (12): 13; clipped to 6.5, every entry halves.
    // To within 1e-5, so that dividing by `total + 1e-6` (a guard against a zero norm)
    // passes as well as dividing by `total`.
    let (clipped, total) = clip_by_total_norm(&[vec![3.0, 4.0], vec![12.0]], 6.5);
    assert!((total - 13.0).abs() < 1e-6);
    assert_eq!(clipped.len(), 2);
    assert_close(&clipped[0], &[1.5, 2.0], 1e-5);
    assert_close(&clipped[1], &[6.0], 1e-5);
    // Below the maximum nothing changes.
    let (same, total) = clip_by_total_norm(&[vec![0.3, 0.4]], 1.0);
    assert!((total - 0.5).abs() < 1e-6);
    assert_eq!(same.len(), 1);
    assert_close(&same[0], &[0.3, 0.4], 1e-5);
}
