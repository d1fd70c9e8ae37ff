//! The exercises of chapter 7, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use attention::prelude::*;
use chapter07::exercises::{
    key_padding_for_heads, per_head_weights, prune_head, sum_of_heads,
};
use lesson::assert_close;

/// A module of 2 heads of d = 2 (num_hiddens 4, every size 4) with W_q = W_k = W_v = I
/// and a chosen W_o, and one query against two keys:
///
/// - head 0 (features 0, 1): q = [√2 ln 3, 0], keys [0, 0] and [1, 0], so the scaled
///   scores are [0, ln 3] and the weights [1/4, 3/4]; its output is
///   1/4 [1, 2] + 3/4 [3, 4] = [2.5, 3.5];
/// - head 1 (features 2, 3): q = [0, 0], so the weights are [1/2, 1/2] and its output
///   is the mean [4, 5];
/// - concatenated, [2.5, 3.5, 4, 5], and W_o times that is [15, 8.5, 2.5, 8].
fn hand_module() -> (MultiHeadAttention, Tensor, Tensor, Tensor) {
    let identity = Tensor::from_vec(
        vec![
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
        ],
        [4, 4],
    );
    let w_o = Tensor::from_vec(
        vec![
            1., 1., 1., 1., 0., 1., 0., 1., 1., 0., 0., 0., 0., 0., 2., 0.,
        ],
        [4, 4],
    );
    let state = StateDict::from([
        ("W_q.weight", identity.clone()),
        ("W_k.weight", identity.clone()),
        ("W_v.weight", identity),
        ("W_o.weight", w_o),
    ]);
    let config = MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    };
    let mha = MultiHeadAttention::from_state_dict(config, &state).unwrap();
    let query =
        Tensor::from_vec(vec![2f32.sqrt() * 3f32.ln(), 0., 0., 0.], [1, 1, 4]);
    let keys = Tensor::from_vec(vec![0., 0., 0., 0., 1., 0., 0., 0.], [1, 2, 4]);
    let values = Tensor::from_vec(vec![1., 2., 3., 4., 3., 4., 5., 6.], [1, 2, 4]);
    (mha, query, keys, values)
}

#[test]
fn exercise_1_per_head_weights_keep_the_heads_as_a_dimension() {
    // Two heads of d = 4 (scale 1/2). Example 0: head 0 scores [0, 2 ln 3] / 2 → [1/4, 3/4],
    // head 1 scores [2 ln 3, 0] / 2 → [3/4, 1/4]. Example 1: a zero query, [1/2, 1/2].
    let l = 2.0 * 3f32.ln();
    let queries = Tensor::from_vec(
        vec![
            l, 0., 0., 0., 0., 0., 0., l, //
            0., 0., 0., 0., 0., 0., 0., 0.,
        ],
        [2, 1, 8],
    );
    let key_pair = [
        0., 0., 0., 0., 0., 0., 0., 1., //
        1., 0., 0., 0., 0., 0., 0., 0.,
    ];
    let keys = Tensor::from_vec([key_pair, key_pair].concat(), [2, 2, 8]);
    let w = per_head_weights(&queries, &keys, 2);
    assert_eq!(w.shape(), &[2, 2, 1, 2]);
    assert_close(
        &w.to_vec(),
        &[0.25, 0.75, 0.75, 0.25, 0.5, 0.5, 0.5, 0.5],
        1e-6,
    );
}

#[test]
fn exercise_2_key_padding_for_heads_repeats_each_example_once_per_head() {
    let pad = Tensor::from_vec(vec![1., 1., 0., 1., 0., 0.], [2, 3]);
    let folded = key_padding_for_heads(&pad, 2);
    assert_eq!(folded.shape(), &[4, 3]);
    assert_eq!(
        folded.to_vec(),
        [1., 1., 0., 1., 1., 0., 1., 0., 0., 1., 0., 0.]
    );
    assert_eq!(key_padding_for_heads(&pad, 3).shape(), &[6, 3]);
}

#[test]
fn exercise_3_prune_head_removes_that_heads_share_of_the_output_and_nothing_else() {
    let (mha, query, keys, values) = hand_module();
    let before = mha.forward(&query, &keys, &values, &Mask::none());
    assert_close(&before.to_vec(), &[15.0, 8.5, 2.5, 8.0], 1e-5);
    // Without head 0 the concatenation is [0, 0, 4, 5]: W_o gives [9, 5, 0, 8].
    prune_head(&mha, 0);
    let after = mha.forward(&query, &keys, &values, &Mask::none());
    assert_close(&after.to_vec(), &[9.0, 5.0, 0.0, 8.0], 1e-5);
    // The weights are untouched: [1/4, 3/4] in head 0, [1/2, 1/2] in head 1.
    let w = mha.last_attention_weights().unwrap();
    assert_close(&w.to_vec(), &[0.25, 0.75, 0.5, 0.5], 1e-6);
    // Without head 1 instead, [2.5, 3.5, 0, 0]: W_o gives [6, 3.5, 2.5, 0].
    let (mha, ..) = hand_module();
    prune_head(&mha, 1);
    let after = mha.forward(&query, &keys, &values, &Mask::none());
    assert_close(&after.to_vec(), &[6.0, 3.5, 2.5, 0.0], 1e-5);
}

#[test]
fn exercise_4_sum_of_heads_equals_concatenating_then_projecting() {
    let (mha, query, keys, values) = hand_module();
    // Head 0 alone: W_o [2.5, 3.5, 0, 0] = [6, 3.5, 2.5, 0]; head 1: [9, 5, 0, 8].
    let sum = sum_of_heads(&mha, &query, &keys, &values);
    assert_eq!(sum.shape(), &[1, 1, 4]);
    assert_close(&sum.to_vec(), &[15.0, 8.5, 2.5, 8.0], 1e-5);
    // And on random weights and inputs, the library's output.
    manual_seed(9);
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 6,
        num_heads: 3,
        query_size: Some(5),
        ..Default::default()
    });
    let (q, kv) = (Tensor::randn([2, 3, 5]), Tensor::randn([2, 4, 6]));
    let expected = mha.forward(&q, &kv, &kv, &Mask::none());
    assert_close(
        &sum_of_heads(&mha, &q, &kv, &kv).to_vec(),
        &expected.to_vec(),
        1e-5,
    );
}
