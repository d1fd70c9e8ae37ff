//! # Chapter 1: tensors and shapes
//!
//! The code of the first lesson (the page is `book/src/ch01-tensors-and-shapes.md`):
//!
//! 1. [`a_batch_of_sequences`]: building tensors and reading their shapes.
//! 2. [`broadcast_by_hand`]: NumPy's broadcasting rule written out, step by step, and
//!    checked against the engine's.
//! 3. [`every_query_against_every_key`]: the broadcast that additive attention is
//!    built on, `[B, Q, 1, h] + [B, 1, K, h] → [B, Q, K, h]`.
//! 4. [`shape_error`]: what a shape mistake says, and how to read it.
//! 5. [`tour`]: everything the page prints (`cargo run -p chapter01`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use engine::Tensor;

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter01: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

// ANCHOR: batch
/// A batch of 2 sequences of 3 tokens, each token a vector of 4 features: the layout
/// every attention module takes, `[batch, tokens, features]`.
pub fn a_batch_of_sequences() -> Tensor {
    // 24 values, read in row-major order: the last index moves fastest.
    let values: Vec<f32> = (0..24).map(|i| i as f32).collect();
    Tensor::from_vec(values, [2, 3, 4])
}
// ANCHOR_END: batch

// ANCHOR: broadcast_by_hand
/// NumPy's broadcasting rule, written out: align the shapes on their *last*
/// dimension, pad the shorter one with 1s on the left, and in every position the
/// sizes must be equal or one of them 1 (which is then stretched). Returns `None`
/// when they are incompatible.
pub fn broadcast_by_hand(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    // Left-pad both shapes with 1s to the same rank.
    let pad = |s: &[usize]| {
        let mut padded = vec![1; rank - s.len()];
        padded.extend_from_slice(s);
        padded
    };
    let (a, b) = (pad(a), pad(b));
    let mut out = Vec::with_capacity(rank);
    for (&x, &y) in a.iter().zip(&b) {
        out.push(match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => return None,
        });
    }
    Some(out)
}
// ANCHOR_END: broadcast_by_hand

// ANCHOR: every_query_against_every_key
/// Every query of every batch element against every key, without a loop: queries `[B,
/// Q, h]` gain an axis for the keys and keys `[B, K, h]` an axis for the queries, and
/// broadcasting does the rest. Additive attention scores exactly this `[B, Q, K, h]`
/// sum.
pub fn every_query_against_every_key(queries: &Tensor, keys: &Tensor) -> Tensor {
    let q = queries.unsqueeze(2); // [B, Q, 1, h]
    let k = keys.unsqueeze(1); //    [B, 1, K, h]
    &q + &k //                       [B, Q, K, h]
}
// ANCHOR_END: every_query_against_every_key

/// Runs `f`, which is expected to make a shape mistake, and returns the message the
/// engine gives (the first line names the op and both shapes; the next ones say which
/// dimension disagrees, what was expected, and a hint when one helps): the `lesson`
/// crate's [`panic_message`](lesson::panic_message), which every chapter uses.
pub use lesson::panic_message as shape_error;

/// Everything the chapter's page shows, in order: `cargo run -p chapter01`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_shapes
    let x = a_batch_of_sequences();
    line(format!("x.shape() = {:?}", x.shape()));
    line(format!(
        "x.rank() = {}, x.numel() = {}",
        x.rank(),
        x.numel()
    ));
    line(format!("x.size(-1) = {}", x.size(-1)));
    let first_token = x.narrow(0, 0, 1).narrow(1, 0, 1).reshape([4]);
    line(format!("first token = {first_token}"));
    // ANCHOR_END: tour_shapes

    // ANCHOR: tour_broadcast
    for (a, b) in [
        (vec![2, 3, 4], vec![4]),
        (vec![2, 3, 1], vec![1, 5]),
        (vec![4, 64], vec![4, 10, 64]),
    ] {
        line(format!(
            "{a:?} with {b:?} -> {:?}",
            broadcast_by_hand(&a, &b)
        ));
    }
    // ANCHOR_END: tour_broadcast

    // ANCHOR: tour_pairs
    engine::manual_seed(0);
    let queries = Tensor::randn([2, 3, 8]); // B = 2, Q = 3, h = 8
    let keys = Tensor::randn([2, 5, 8]); //    B = 2, K = 5, h = 8
    let features = every_query_against_every_key(&queries, &keys);
    line(format!("features.shape() = {:?}", features.shape()));
    // ANCHOR_END: tour_pairs

    // ANCHOR: tour_error
    let message = shape_error(|| {
        let queries = Tensor::zeros([4, 64]); //      [B, h]: one query per example
        let keys = Tensor::zeros([4, 10, 64]); //     [B, K, h]
        let _ = &queries + &keys;
    });
    // Long lines broken at spaces to the page's width, continuations two spaces in.
    line(lesson::wrap(&message, lesson::COLUMNS));
    // ANCHOR_END: tour_error

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch01-tensors-and-shapes.md")]
struct Book;
