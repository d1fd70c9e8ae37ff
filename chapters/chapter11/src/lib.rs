//! # Chapter 11: attention for long sequences
//!
//! Full attention compares every position with every other, so its time and memory
//! grow with `n²`. The code of the eleventh lesson (the page is
//! `book/src/ch11-long-sequences.md`) measures that wall and the ways around it:
//!
//! 1. [`online`]: the online softmax by hand, on one row of scores met a block at a
//!    time ([`online::step`], [`online::online_softmax`]), against the plain
//!    [`online::softmax`]: the idea behind the engine's exact attention in blocks.
//! 2. [`methods`]: the six computations the chapter compares ([`methods::Method`]):
//!    full attention, the engine's blocked attention (the same numbers in memory
//!    linear in `n`), and four approximations from the attention library (a local
//!    window, a sparse pattern of blocks and global tokens, low-rank attention, LSH
//!    attention), with the settings it measures them at.
//! 3. [`memory`] and [`properties`]: the exact peak bytes of a training step, and the
//!    defining property of each method, checked.
//! 4. [`patterns`]: which keys each query sees, as `[n, n]` masks to draw, LSH's
//!    included.
//! 5. [`costs`]: time and memory against `n`, measured by the `costs` example (`cargo
//!    run --release -p chapter11 --example costs`) and committed as one machine's run
//!    (`data/costs.tsv`); the slopes of the log-log lines and the speed-ups over full
//!    attention.
//! 6. [`accuracy`]: the relative error of each approximation on random inputs, on a
//!    task where nearby keys matter and on one where one far key does.
//! 7. [`side_by_side`]: multi-head attention beside PyTorch's fused kernel
//!    (committed).
//! 8. [`plots`]: the figures; [`tour::tour`]: everything the page prints (`cargo run
//!    -p chapter11`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

pub mod accuracy;
pub mod costs;
pub mod memory;
pub mod methods;
pub mod online;
pub mod patterns;
pub mod plots;
pub mod properties;
pub mod side_by_side;
pub mod tour;

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
    "chapter11: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The chapter's page, compiled as doctests (its Rust listings are included from this
/// crate; any other Rust block on the page is compiled and run).
#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch11-long-sequences.md")]
struct Book;
