//! Three ways to get decoding with a cache wrong, each shown in code: a cache reused
//! without a reset, causal order aligned to the wrong key, and what happens past the
//! initial capacity (nothing wrong: the cache grows).

use attention::prelude::*;

use crate::decoding::{decode_token_by_token, max_abs_diff};

// ANCHOR: two_sequences
/// Decodes `first`, then `second`, token by token with one cache, resetting it in
/// between only when `reset` is true. Returns the outputs of `second` and how many
/// tokens the cache holds at the end.
pub fn two_sequences(
    layer: &CausalSelfAttention,
    first: &Tensor,
    second: &Tensor,
    reset: bool,
) -> (Tensor, usize) {
    let mut cache = KvCache::new(16);
    decode_token_by_token(layer, first, &mut cache);
    if reset {
        cache.reset(); // forget the first sequence, keep the memory
    }
    let outputs = decode_token_by_token(layer, second, &mut cache);
    (outputs, cache.len())
}
// ANCHOR_END: two_sequences

// ANCHOR: new_tokens_against_the_cache
/// The last `n` tokens of a sequence attending to all `K` of its keys, the way a
/// cache is read: queries `[B, n, d]` against keys and values `[B, K, d]`, with
/// `mask` saying which keys each query may see. Returns the largest difference from
/// the last `n` rows of full causal attention over the sequence (`q, k, v: [B, K,
/// d]`).
pub fn error_of_new_tokens(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    n: usize,
    mask: &Mask,
) -> f32 {
    let keys = k.size(1);
    let full = scaled_dot_product_attention(q, k, v, &Mask::causal()).0; // [B, K, d]
    let new_queries = q.narrow(1, keys - n, n); //                           [B, n, d]
    let chunk = scaled_dot_product_attention(&new_queries, k, v, mask).0; // [B, n, d]
    max_abs_diff(&chunk, &full.narrow(1, keys - n, n))
}
// ANCHOR_END: new_tokens_against_the_cache

// ANCHOR: growth
/// Decodes `x: [B, T, num_hiddens]` token by token with a cache that starts with room
/// for `initial_capacity` tokens; returns the outputs and the capacity after each
/// token.
pub fn decode_past_the_capacity(
    layer: &CausalSelfAttention,
    x: &Tensor,
    initial_capacity: usize,
) -> (Tensor, Vec<usize>) {
    let mut cache = KvCache::new(initial_capacity);
    let mut capacities = Vec::new();
    let outputs: Vec<Tensor> = no_grad(|| {
        (0..x.size(1))
            .map(|t| {
                let y = layer.step(&x.narrow(1, t, 1), &mut cache, &Mask::none());
                capacities.push(cache.capacity());
                y
            })
            .collect()
    });
    (Tensor::concat(&outputs, 1), capacities)
}
// ANCHOR_END: growth

/// Runs a closure that is expected to panic and returns its message (shared by the
/// chapters, in the `lesson` crate).
pub use lesson::panic_message;
