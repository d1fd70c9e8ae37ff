//! The engine's integration tests, one module a file: ops against finite differences and
//! PyTorch's values, autograd, `nn`, `optim`, error messages, memory accounting and the
//! CPU/GPU parity harness. Run one file's tests with its name as a filter, e.g.
//! `cargo test --test engine gradcheck_ops`.
//!
//! They belong to the workspace's package rather than the engine's: a test of the engine's
//! own package is compiled with its optimisations (the dev profile's `opt-level = 2`, there so
//! that lessons train in seconds), which made these tests alone take most of a first build.
//! Here the tests compile fast and unoptimised, against the optimised engine; and they are one
//! program, linked once.

mod common;
#[path = "../../engine/tests/devices/harness.rs"]
mod harness;
mod nn_golden;

mod additive_scores;
mod anomaly_mode;
mod api_regressions;
mod autocast;
mod autograd;
mod blocked_attention;
mod comparisons;
mod display;
mod error_messages;
mod extreme_arguments;
mod grad_scaler;
mod gradcheck_ops;
mod gradcheck_staples;
mod memory_accounting;
mod memory_budget;
mod nn;
mod on_devices;
mod optim;
mod parity_ops;
mod precision;
mod properties;
mod safe_softmax;
mod spare_buffers;
mod staple_errors;
mod weight_norm;
