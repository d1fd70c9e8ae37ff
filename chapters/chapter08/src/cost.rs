//! What the cache saves and what it costs: multiply-adds per token with and without
//! it, and the bytes it holds per token.

// ANCHOR: multiply_adds
/// The multiply-adds one causal self-attention layer of width `num_hiddens` spends on
/// the token at position `t` (counting from 1: the `t`-th token, which attends to `t`
/// keys), ignoring biases and the softmax:
/// - with a cache: project the one new token (`W_q`, `W_k`, `W_v`, `W_o`: `4·d²`),
///   score it against `t` keys and average `t` values (`2·t·d`, over all heads
///   together);
/// - without: run `forward` on all `t` tokens, `4·t·d² + 2·t²·d`.
///
/// The second is exactly `t` times the first: recomputing does the whole sequence's
/// work for every new token.
pub fn multiply_adds_per_token(num_hiddens: usize, t: usize, cached: bool) -> usize {
    let d = num_hiddens;
    let one_token = 4 * d * d + 2 * t * d;
    if cached { one_token } else { t * one_token }
}
// ANCHOR_END: multiply_adds

// ANCHOR: cache_shape
/// The sizes that fix how much a KV cache holds: one key and one value vector of
/// `d_head` numbers per layer, per sequence of the batch, per head and per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheShape {
    /// Attention layers, each with its own cache.
    pub layers: usize,
    /// Sequences decoded together, `B`.
    pub batch: usize,
    /// Heads per layer, `H`.
    pub heads: usize,
    /// The size of each head's keys and values, `num_hiddens / H`.
    pub d_head: usize,
}

impl CacheShape {
    /// Bytes per token of context: `2 · layers · B · H · d_head · 4` (keys and
    /// values, `f32`).
    pub fn bytes_per_token(&self) -> usize {
        2 * self.layers * self.batch * self.heads * self.d_head * size_of::<f32>()
    }

    /// Bytes for `tokens` tokens of context.
    pub fn bytes(&self, tokens: usize) -> usize {
        tokens * self.bytes_per_token()
    }
}
// ANCHOR_END: cache_shape
