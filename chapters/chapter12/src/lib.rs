//! # Chapter 12: choosing a scoring function
//!
//! The articles compare scoring functions with numbers from their own projects. This
//! chapter reruns the comparison on one task, chapter 9's numbers in words, on the
//! reader's machine:
//!
//! 1. [`scorings`]: additive, dot-product, scaled dot-product, multi-head and hybrid
//!    gated attention, each as the attention of chapter 9's decoder
//!    ([`chapter09::DecoderAttention`]), built by [`Scoring`].
//! 2. [`compare`]: every scoring trained from the same seeds with the same budget and
//!    schedule ([`compare::run`]), the peak memory of a training step, and what
//!    decides a trained hybrid's weights ([`compare::reading`]).
//! 3. [`separate`]: two harder variants of the task (reversed digits with a smaller
//!    model, and 300 training numbers), each scoring's learning rate chosen on
//!    validation numbers, three seeds at that rate scored on test numbers
//!    ([`separate::run`]), recorded in `data/separate.tsv` by the `separate` example.
//! 4. [`complexity`]: the multiply-adds of one attention call and its time as the
//!    feature size grows, with the projections counted and without.
//! 5. [`record`]: the results, recorded in `data/compare.tsv` by the `compare`
//!    example and printed as the tables of `data/compare.txt`.
//! 6. [`plots`]: the learning curves, the complexity sweep and the hybrid's gate,
//!    drawn from the recording.
//! 7. [`tour`]: everything else the page prints (`cargo run -p chapter12`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

pub mod compare;
pub mod complexity;
pub mod plots;
pub mod record;
pub mod scorings;
pub mod separate;
pub mod tour;

pub use scorings::{Hybrid, MultiHead, ProjectedDotProduct, Scorer, Scoring};

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
    "chapter12: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The chapter's page, compiled as doctests (its Rust listings are included from this
/// crate; any other Rust block on the page is compiled and run).
#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch12-scoring-functions.md")]
struct Book;
