// ANCHOR: all
//! Reference solutions to the chapter 8 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::{CausalSelfAttention, KvCache, Mask};
use engine::{Tensor, no_grad};

use crate::{TinyLm, greedy_next};

// ANCHOR: max_cached_tokens
/// Exercise 1. How many tokens of context fit in `budget_bytes` of KV cache, for a
/// model of `layers` layers, decoding `batch` sequences, with `kv_heads` heads of
/// keys and values of `d_head` numbers each, stored in `bytes_per_value` bytes (4 for
/// `f32`, 2 for `f16`).
///
/// One token takes a key and a value per layer, sequence and head:
/// `2 · layers · batch · kv_heads · d_head · bytes_per_value` bytes.
pub fn max_cached_tokens(
    budget_bytes: usize,
    layers: usize,
    batch: usize,
    kv_heads: usize,
    d_head: usize,
    bytes_per_value: usize,
) -> usize {
    let per_token = 2 * layers * batch * kv_heads * d_head * bytes_per_value;
    budget_bytes / per_token
}
// ANCHOR_END: max_cached_tokens

// ANCHOR: sliding_window_decode
/// Exercise 2. Decodes `x: [B, T, num_hiddens]` token by token with `layer.step`,
/// keeping at most `window` tokens in `cache`: each token attends to itself and the
/// `window − 1` tokens before it. Returns the outputs `[B, T, num_hiddens]`;
/// afterwards the cache holds the last `min(window, T)` tokens. `cache` may hold an
/// earlier sequence.
///
/// `KvCache` only appends, so the window slides by copying: when the cache is full,
/// read its last `window − 1` keys and values, reset it, and append them back.
pub fn sliding_window_decode(
    layer: &CausalSelfAttention,
    x: &Tensor,
    window: usize,
    cache: &mut KvCache,
) -> Tensor {
    assert!(
        window >= 1,
        "sliding_window_decode: the window needs a token"
    );
    cache.reset();
    no_grad(|| {
        let mut outputs = Vec::new();
        for t in 0..x.size(1) {
            if cache.len() == window {
                let keep = window - 1; // the new token takes the last place
                let keys = cache.keys().narrow(2, 1, keep); //   [B, H, window − 1, d]
                let values = cache.values().narrow(2, 1, keep);
                cache.reset();
                cache.append(&keys, &values);
            }
            outputs.push(layer.step(&x.narrow(1, t, 1), cache, &Mask::none()));
        }
        Tensor::concat(&outputs, 1)
    })
}
// ANCHOR_END: sliding_window_decode

// ANCHOR: generate_with_cache
/// Exercise 3. Greedy generation with the cache: the prompt with `model.prefill`,
/// then one `model.step` per new token, each time appending the id with the largest
/// logit. Returns the prompt followed by `new_tokens` ids. `cache` may hold an
/// earlier sequence.
///
/// The last new id is never fed back: its keys and values would serve only a token
/// after it. So the cache ends with `prompt.len() + new_tokens − 1` tokens.
pub fn generate_with_cache(
    model: &TinyLm,
    prompt: &[usize],
    new_tokens: usize,
    cache: &mut KvCache,
) -> Vec<usize> {
    cache.reset(); // a new sequence
    let mut ids = prompt.to_vec();
    if new_tokens == 0 {
        return ids;
    }
    let mut logits = model.prefill(prompt, cache); // [1, prompt, vocab]
    loop {
        let next = greedy_next(&logits);
        ids.push(next);
        if ids.len() == prompt.len() + new_tokens {
            return ids;
        }
        logits = model.step(next, cache); // [1, 1, vocab]
    }
}
// ANCHOR_END: generate_with_cache

// ANCHOR: shift_encoding
/// Exercise 4. The sinusoidal encoding of position `p + k` from the encoding `row` of
/// position `p` alone (`row.len() = d`, even): each pair `(sin pωᵢ, cos pωᵢ)` rotated
/// by the angle `k·ωᵢ`, with `ωᵢ` = [`frequency(i, d)`](crate::positions::frequency).
pub fn shift_encoding(row: &[f32], k: usize) -> Vec<f32> {
    let d = row.len();
    let mut out = Vec::with_capacity(d);
    for (i, pair) in row.chunks_exact(2).enumerate() {
        let angle = k as f64 * crate::positions::frequency(i, d);
        let (sin_k, cos_k) = (libm::sin(angle), libm::cos(angle));
        let (sin_p, cos_p) = (f64::from(pair[0]), f64::from(pair[1]));
        // sin(a + b) = sin a cos b + cos a sin b; cos(a + b) = cos a cos b − sin a
        // sin b
        out.push((sin_p * cos_k + cos_p * sin_k) as f32);
        out.push((cos_p * cos_k - sin_p * sin_k) as f32);
    }
    out
}
// ANCHOR_END: shift_encoding
// ANCHOR_END: all
