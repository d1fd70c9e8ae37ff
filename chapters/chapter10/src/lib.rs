//! # Chapter 10: when attention misbehaves
//!
//! The pitfalls of additive attention that a debugging guide lists, each one caused
//! on purpose, measured, and fixed:
//!
//! 1. [`mismatch`]: the forgotten `unsqueeze` of the single-query form, refused when
//!    the batch and the keys differ in number and silently wrong when they agree.
//! 2. [`task`] and [`uniform`]: weights that stay almost uniform, on a task whose
//!    right alignment is known; [`sweep::uniform_rows`]: what each suggested fix does
//!    to them.
//! 3. [`sweep::gradient_rows`]: gradient norms per parameter ([`uniform::History`]),
//!    a run that blows up, and the fixes; [`plots`] draws both. [`adam_clip`]: when
//!    clipping changes Adam's steps and when it does not.
//! 4. [`nan_rows`]: the NaN of a fully masked row, found with anomaly mode and fixed
//!    by the safe fill; what each fill does to that row's gradient.
//! 5. [`mask_sense`]: masks the wrong way round, applied after the softmax, or over
//!    the wrong axis; what each silently produces and the check that catches it.
//! 6. [`article_tests`]: the article's own two tests, what they miss, and stronger
//!    ones.
//! 7. [`causal`]: the causal mask forgotten in a decoder: a training loss below what
//!    the data allows, generation that collapses, and the test that catches it.
//! 8. [`tour::tour`]: everything the page prints (`cargo run -p chapter10`); the
//!    tables of 2 and 3 are the `sweep` example's (`data/sweep.txt`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

pub mod adam_clip;
pub mod article_tests;
pub mod causal;
pub mod mask_sense;
pub mod mismatch;
pub mod nan_rows;
pub mod plots;
pub mod sweep;
pub mod task;
pub mod tour;
pub mod uniform;

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
    "chapter10: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The chapter's page, compiled as doctests (its Rust listings are included from this
/// crate; any other Rust block on the page is compiled and run).
#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch10-pitfalls.md")]
struct Book;
