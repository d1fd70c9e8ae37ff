//! # Chapter 15: mixed precision, and why -1e9 breaks in half precision
//!
//! The additive-attention article recommends automatic mixed precision a few
//! paragraphs after filling masked scores with `-1e9`. The two do not mix. This
//! chapter runs half precision, emulated on the CPU by the engine's
//! [`engine::autocast()`], sees it fail and fixes it:
//!
//! 1. [`fills`]: every mask fill stored in f32, f16 and bf16, and what a partly and
//!    a fully masked row become.
//! 2. [`training`]: chapter 9's training step in mixed precision
//!    ([`training::MixedTrainer`]), with no loss scale, a static one, or the
//!    engine's [`engine::optim::GradScaler`].
//! 3. [`underflow`]: the share of gradient entries that vanish in f16, layer by
//!    layer, with and without a loss scale.
//! 4. [`memory`]: the bytes a 2-byte format would save, by kind of tensor.
//! 5. [`compare`] and [`record`]: the comparisons of the five modes, recorded in
//!    `data/` by the `precision_runs` example (chapter 9's run, `data/compare.txt`)
//!    and the `small_gradients` example (every gradient 2¹⁴ times smaller, where f16
//!    alone fails, `data/small.txt`).
//! 6. [`plots`]: the scale over training, the vanished gradients along the run and
//!    the losses of the small-gradient run.
//! 7. [`tour`]: everything else the page prints (`cargo run -p chapter15`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

pub mod compare;
pub mod fills;
pub mod memory;
pub mod plots;
pub mod record;
pub mod tour;
pub mod training;
pub mod underflow;

pub use training::{MixedTrainer, Mode};

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
    "chapter15: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The chapter's page, compiled as doctests (its Rust listings are included from this
/// crate; any other Rust block on the page is compiled and run).
#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch15-mixed-precision.md")]
struct Book;
