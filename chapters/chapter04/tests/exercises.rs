//! The exercises of chapter 4, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use attention::{Fill, Mask, masked_softmax};
use chapter04::exercises::{
    key_padding_from_ids, prefix_lm_mask, sliding_window_keep,
};
use engine::Tensor;

#[test]
fn exercise_1_sliding_window_keep_sees_each_neighbour_within_the_window() {
    let keep = sliding_window_keep(4, 1);
    assert_eq!(keep.shape(), &[4, 4]);
    #[rustfmt::skip]
    let expected = vec![
        1.0, 1.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 0.0,
        0.0, 1.0, 1.0, 1.0,
        0.0, 0.0, 1.0, 1.0,
    ];
    assert_eq!(keep.to_vec(), expected);
    // As a mask over equal scores: query 0 splits its weight over 2 keys, query 1 over 3.
    let w = masked_softmax(
        &Tensor::zeros([1, 4, 4]),
        &Mask::keep(&keep.unsqueeze(0)),
        Fill::Safe,
    );
    let w = w.to_vec();
    assert_eq!(&w[..4], &[0.5, 0.5, 0.0, 0.0]);
    assert_eq!(&w[4..8], &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0]);
    // A window of 0 is the diagonal; a window of 3 covers everything.
    assert_eq!(
        sliding_window_keep(3, 0).to_vec(),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(sliding_window_keep(4, 3).to_vec(), vec![1.0; 16]);
}

#[test]
fn exercise_2_key_padding_from_ids_marks_real_tokens_with_one() {
    let ids = Tensor::from_vec(vec![5.0, 7.0, 0.0, 0.0, 0.0, 3.0, 4.0, 9.0], [2, 4]);
    let pad = key_padding_from_ids(&ids, 0.0);
    assert_eq!(pad.shape(), &[2, 4]);
    assert_eq!(pad.to_vec(), vec![1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    // Another pad id: only that id is padding.
    let pad = key_padding_from_ids(&ids, 7.0);
    assert_eq!(pad.to_vec(), vec![1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    // It is a valid key-padding mask: row 0 attends keys 0 and 1 only.
    let w = masked_softmax(
        &Tensor::zeros([2, 1, 4]),
        &Mask::key_padding(&key_padding_from_ids(&ids, 0.0)),
        Fill::Safe,
    );
    assert_eq!(&w.to_vec()[..4], &[0.5, 0.5, 0.0, 0.0]);
}

#[test]
fn exercise_3_prefix_lm_mask_sees_the_prefix_then_the_past_and_never_the_padding() {
    let lens = Tensor::from_vec(vec![4.0, 3.0], [2]);
    let mask = prefix_lm_mask(2, 4, &lens);
    let keep = mask.keep_for("test", &[2, 4, 4]).expect("a mask");
    #[rustfmt::skip]
    let expected = vec![
        // example 0: 4 real tokens, prefix of 2
        1.0, 1.0, 0.0, 0.0,
        1.0, 1.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, 1.0, 1.0,
        // example 1: key 3 is padding
        1.0, 1.0, 0.0, 0.0,
        1.0, 1.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, 1.0, 0.0,
    ];
    assert_eq!(keep.broadcast_to([2, 4, 4]).to_vec(), expected);
    // A prefix of 0 or 1 is plain causal order.
    let causal = prefix_lm_mask(1, 3, &Tensor::from_vec(vec![3.0], [1]));
    let keep = causal.keep_for("test", &[1, 3, 3]).expect("a mask");
    assert_eq!(
        keep.broadcast_to([1, 3, 3]).to_vec(),
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    );
}
