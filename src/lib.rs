//! Workspace-level checks for the attention-from-scratch project.
//!
//! This package holds no library code of its own. It runs the example in the top-level
//! `README.md` as a doctest (so the README cannot drift from the engine), and its `tests/`
//! directory holds the checks that span crates.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
