//! The attention library's integration tests, one module a file: parity with PyTorch,
//! gradients, masks, the KV cache, configs, state dicts and error messages. Run one file's
//! tests with its name as a filter, e.g. `cargo test -p attention --test suite kv_cache`.

mod common;
#[path = "../../engine/tests/devices/harness.rs"]
mod harness;

mod additive_scoring;
mod api_regressions;
mod attention_weights;
mod configs;
mod errors;
mod gradients;
mod kv_cache;
mod kv_cache_memory;
mod masks;
mod on_devices;
mod parity;
mod sdpa_options;
mod state_dicts;
