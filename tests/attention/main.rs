//! The attention library's integration tests, one module a file: parity with PyTorch,
//! gradients, masks, the KV cache, configs, state dicts and error messages. Run one file's
//! tests with its name as a filter, e.g. `cargo test --test attention kv_cache`.
//!
//! They belong to the workspace's package rather than the library's: a test of the library's
//! own package is compiled with its optimisations (the dev profile's `opt-level = 2`, there
//! so that lessons train in seconds), which made its tests slow to build. Here the tests
//! compile fast and unoptimised, against the optimised library; and they are one program,
//! linked once.

mod common;
#[path = "../../engine/tests/devices/harness.rs"]
mod harness;

mod additive_scoring;
mod api_regressions;
mod attention_weights;
mod blocked_paths;
mod configs;
mod errors;
mod extreme_arguments;
mod gradients;
mod hybrid;
mod kv_cache;
mod kv_cache_memory;
mod long_sequences;
mod masks;
mod on_devices;
mod parity;
mod sdpa_options;
mod state_dicts;
mod transformer_layers;
mod transformer_parity;
