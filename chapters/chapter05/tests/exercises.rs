//! The exercises of chapter 5, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use chapter05::exercises::{
    additive_scores, chunked_additive_scores, distance_scores, general_scores,
};
use engine::{Tensor, memory};
use lesson::assert_close;

#[test]
fn exercise_1_additive_scores_take_queries_and_keys_of_different_sizes() {
    // One query feature, two key features, two hidden units.
    let queries = Tensor::from_vec(vec![1.0, -1.0], [1, 2, 1]);
    let keys = Tensor::from_vec(vec![1.0, 0.0, 0.0, 2.0], [1, 2, 2]);
    let w_q = Tensor::from_vec(vec![1.0, 0.5], [2, 1]); //  W_q q₀ = [1, 0.5], W_q q₁ = [-1, -0.5]
    let w_k = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [2, 2]); // W_k k = k
    let w_v = Tensor::from_vec(vec![1.0, -2.0], [2]);
    let s = additive_scores(&queries, &keys, &w_q, &w_k, &w_v);
    assert_eq!(s.shape(), &[1, 2, 2]);
    let t = f32::tanh;
    assert_close(
        &s.to_vec(),
        &[
            t(1.0 + 1.0) - 2.0 * t(0.5 + 0.0),
            t(1.0 + 0.0) - 2.0 * t(0.5 + 2.0),
            t(-1.0 + 1.0) - 2.0 * t(-0.5 + 0.0),
            t(-1.0 + 0.0) - 2.0 * t(-0.5 + 2.0),
        ],
        1e-5,
    );
    // Sizes all different: B = 2, Q = 3, K = 4, dq = 5, dk = 6, h = 7.
    let s = additive_scores(
        &Tensor::ones([2, 3, 5]),
        &Tensor::ones([2, 4, 6]),
        &Tensor::zeros([7, 5]),
        &Tensor::zeros([7, 6]),
        &Tensor::ones([7]),
    );
    assert_eq!(s.shape(), &[2, 3, 4]);
    assert_eq!(s.to_vec(), vec![0.0; 24]);
}

#[test]
fn exercise_2_general_scores_are_q_transpose_w_k() {
    let queries = Tensor::from_vec(vec![1.0, 0.0, 0.0, 2.0], [1, 2, 2]);
    let keys = Tensor::from_vec(
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0],
        [1, 3, 3],
    );
    // qᵀW: q₀ → [1, 2, 0], q₁ → [0, 2, -2].
    let w = Tensor::from_vec(vec![1.0, 2.0, 0.0, 0.0, 1.0, -1.0], [2, 3]);
    let s = general_scores(&queries, &keys, &w);
    assert_eq!(s.shape(), &[1, 2, 3]);
    assert_close(&s.to_vec(), &[1.0, 2.0, 3.0, 0.0, 2.0, 0.0], 1e-5);
}

#[test]
fn exercise_3_distance_scores_are_minus_squared_distances() {
    let queries = Tensor::from_vec(vec![0.0, 0.0, 1.0, 2.0], [1, 2, 2]);
    let keys = Tensor::from_vec(vec![0.0, 0.0, 3.0, 4.0, 1.0, 1.0], [1, 3, 2]);
    let s = distance_scores(&queries, &keys);
    assert_eq!(s.shape(), &[1, 2, 3]);
    assert_close(&s.to_vec(), &[0.0, -25.0, -2.0, -5.0, -8.0, -1.0], 1e-5);
    // Two batch elements are scored separately.
    let queries = Tensor::from_vec(vec![1.0, 5.0], [2, 1, 1]);
    let keys = Tensor::from_vec(vec![0.0, 2.0, 4.0, 7.0], [2, 2, 1]);
    assert_close(
        &distance_scores(&queries, &keys).to_vec(),
        &[-1.0, -1.0, -1.0, -4.0],
        1e-5,
    );
}

#[test]
fn exercise_4_chunked_scores_agree_with_the_formula_and_hold_one_chunk_at_a_time() {
    // h = 1, all weights 1 but w_v = 2: score = 2·tanh(q + k). Three queries in chunks of 2.
    let queries = Tensor::from_vec(vec![0.0, 1.0, -1.0], [1, 3, 1]);
    let keys = Tensor::from_vec(vec![0.5, -0.5], [1, 2, 1]);
    let one = Tensor::ones([1, 1]);
    let w_v = Tensor::from_vec(vec![2.0], [1]);
    let s = chunked_additive_scores(&queries, &keys, &one, &one, &w_v, 2);
    assert_eq!(s.shape(), &[1, 3, 2]);
    let t = |x: f32| 2.0 * x.tanh();
    assert_close(
        &s.to_vec(),
        &[t(0.5), t(-0.5), t(1.5), t(0.5), t(-0.5), t(-1.5)],
        1e-5,
    );

    // Memory: Q = 32, K = 16, h = 32. One whole [1, 32, 16, 32] pairs tensor is 64 KiB;
    // chunks of 2 queries make 4 KiB ones. Everything the chunked version holds at once
    // (projections, one chunk's pairs and tanh, the scores) stays far under 32 KiB.
    engine::manual_seed(0);
    let queries = Tensor::randn([1, 32, 4]);
    let keys = Tensor::randn([1, 16, 4]);
    let (w_q, w_k, w_v) = (
        Tensor::randn([32, 4]),
        Tensor::randn([32, 4]),
        Tensor::randn([32]),
    );
    memory::reset_peak();
    let before = memory::live_bytes();
    let s = chunked_additive_scores(&queries, &keys, &w_q, &w_k, &w_v, 2);
    let peak = memory::peak_bytes() - before;
    assert_eq!(s.shape(), &[1, 32, 16]);
    assert!(
        peak < 32 * 1024,
        "the peak was {peak} bytes; a whole pairs tensor is 65536"
    );
    // The chunks are in order: query 31 is scored against key 15 as on its own.
    let last = chunked_additive_scores(
        &queries.narrow(1, 31, 1),
        &keys,
        &w_q,
        &w_k,
        &w_v,
        1,
    );
    assert_close(&s.narrow(1, 31, 1).to_vec(), &last.to_vec(), 1e-5);
}
