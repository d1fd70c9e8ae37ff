//! # Chapter 16: the Transformer, end to end
//!
//! The Transformer built from this book's pieces: the library's layers
//! ([`attention::transformer`]) assembled into two models, trained on this machine
//! in minutes, and decoded.
//!
//! 1. [`seq2seq`]: the encoder–decoder of "Attention Is All You Need", small, with
//!    greedy decoding and the cross-attention of each head; [`translation`] trains it
//!    on chapter 9's task with chapter 9's data, budget and schedule.
//! 2. [`corpus`]: a public-domain book, character by character; [`lm`]: a decoder-only
//!    model over it (GPT's shape), sampled with temperature and top-k, with the KV
//!    cache or without; [`lm_train`]: its training, validation loss and checkpoints
//!    that resume exactly; [`baseline`]: the unigram and bigram losses its validation
//!    loss is compared with.
//! 3. [`placement`]: post-norm against pre-norm in an eight-layer model: gradient
//!    norms at initialisation, and training at a learning rate without warmup.
//! 4. [`recipe`]: the training recipe of "Attention Is All You Need" (the
//!    inverse-square-root warmup, label smoothing, tied embeddings) measured on a
//!    small character model.
//! 5. [`record`]: the recorded runs in `trained/` and `data/`, written by the
//!    examples; [`store`]: their file format; [`plots`]: the figures; [`tour`]:
//!    everything the page prints (`cargo run -p chapter16`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

pub mod baseline;
pub mod corpus;
pub mod lm;
pub mod lm_train;
pub mod placement;
pub mod plots;
pub mod recipe;
pub mod record;
pub mod seq2seq;
pub mod store;
pub mod tour;
pub mod translation;

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
    "chapter16: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The chapter's page, compiled as doctests (its Rust listings are included from this
/// crate; any other Rust block on the page is compiled and run).
#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch16-transformer.md")]
struct Book;
