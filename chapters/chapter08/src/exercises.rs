//! Your solutions to the chapter 8 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter08 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use attention::{CausalSelfAttention, KvCache};
use engine::Tensor;

use crate::TinyLm;

/// Exercise 1. How many tokens of context fit in `budget_bytes` of KV cache, for a model of
/// `layers` layers, decoding `batch` sequences, with `kv_heads` heads of keys and values of
/// `d_head` numbers each, stored in `bytes_per_value` bytes (4 for `f32`, 2 for `f16`).
pub fn max_cached_tokens(
    budget_bytes: usize,
    layers: usize,
    batch: usize,
    kv_heads: usize,
    d_head: usize,
    bytes_per_value: usize,
) -> usize {
    let _ = (
        budget_bytes,
        layers,
        batch,
        kv_heads,
        d_head,
        bytes_per_value,
    );
    todo!(
        "exercise 1: divide the budget by the bytes one token takes (keys and values)"
    )
}

/// Exercise 2. Decodes `x: [B, T, num_hiddens]` token by token with `layer.step`, keeping at
/// most `window` tokens in `cache`: each token attends to itself and the `window − 1`
/// tokens before it. Returns the outputs `[B, T, num_hiddens]`; afterwards the cache holds the
/// last `min(window, T)` tokens. `cache` may hold an earlier sequence.
pub fn sliding_window_decode(
    layer: &CausalSelfAttention,
    x: &Tensor,
    window: usize,
    cache: &mut KvCache,
) -> Tensor {
    let _ = (layer, x, window, cache);
    todo!(
        "exercise 2: before each step, when the cache is full, keep only its last window − 1 keys and values"
    )
}

/// Exercise 3. Greedy generation with the cache: the prompt with `model.prefill`, then one
/// `model.step` per new token, each time appending the id with the largest logit. Returns
/// the prompt followed by `new_tokens` ids. `cache` may hold an earlier sequence; afterwards
/// it holds `prompt.len() + new_tokens − 1` tokens (the last new id is never fed back).
pub fn generate_with_cache(
    model: &TinyLm,
    prompt: &[usize],
    new_tokens: usize,
    cache: &mut KvCache,
) -> Vec<usize> {
    let _ = (model, prompt, new_tokens, cache);
    todo!("exercise 3: reset the cache, prefill the prompt, then step on each new id")
}

/// Exercise 4. The sinusoidal encoding of position `p + k` from the encoding `row` of
/// position `p` alone (`row.len() = d`, even): each pair `(sin pωᵢ, cos pωᵢ)` rotated by
/// the angle `k·ωᵢ`, with `ωᵢ` = [`frequency(i, d)`](crate::positions::frequency).
pub fn shift_encoding(row: &[f32], k: usize) -> Vec<f32> {
    let _ = (row, k);
    todo!("exercise 4: rotate each (sin, cos) pair with the angle-addition formulas")
}
