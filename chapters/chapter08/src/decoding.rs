//! Decoding one attention layer token by token, with the cache and without it, and a
//! tiny language model whose greedy generation is the loop the cache serves.

use attention::prelude::*;

/// The settings of the layer the chapter decodes with: `num_hiddens` and `num_heads`,
/// no dropout.
pub fn causal_layer(num_hiddens: usize, num_heads: usize) -> CausalSelfAttention {
    let mut layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens,
        num_heads,
        ..Default::default()
    });
    layer.eval(); // a new module trains; decoding is inference
    layer
}

// ANCHOR: decode_with_cache
/// Decodes `x: [B, T, num_hiddens]` the way generation runs: the first `prompt`
/// tokens at once (`prefill`), then one token at a time (`step`), each attending to
/// the keys and values kept in `cache`. Returns every token's output, `[B, T,
/// num_hiddens]`.
///
/// The cache must be empty (a new one, or one that was [`reset`](KvCache::reset));
/// `prompt` is at least 1.
pub fn decode_with_cache(
    layer: &CausalSelfAttention,
    x: &Tensor,
    prompt: usize,
    cache: &mut KvCache,
) -> Tensor {
    assert!(prompt >= 1, "decode_with_cache: the prompt needs a token");
    let none = Mask::none(); // causal order is built in; no padding here
    no_grad(|| {
        // [B, prompt, num_hiddens]; the cache now holds `prompt` keys and values.
        let mut outputs = vec![layer.prefill(&x.narrow(1, 0, prompt), cache, &none)];
        for t in prompt..x.size(1) {
            let token = x.narrow(1, t, 1); //                    [B, 1, num_hiddens]
            outputs.push(layer.step(&token, cache, &none)); //  [B, 1, num_hiddens]
        }
        Tensor::concat(&outputs, 1) //                           [B, T, num_hiddens]
    })
}
// ANCHOR_END: decode_with_cache

// ANCHOR: decode_without_cache
/// The same outputs without a cache: for every new token, the whole prefix is run
/// through `forward` again and only the last row is kept. This is what a generation
/// loop does when it calls the model on the sequence so far.
pub fn decode_without_cache(
    layer: &CausalSelfAttention,
    x: &Tensor,
    prompt: usize,
) -> Tensor {
    assert!(
        prompt >= 1,
        "decode_without_cache: the prompt needs a token"
    );
    let none = Mask::none();
    no_grad(|| {
        let mut outputs = vec![layer.forward(&x.narrow(1, 0, prompt), &none)];
        for t in prompt..x.size(1) {
            // The whole prefix again, [B, t + 1, num_hiddens], for one new row.
            let prefix = x.narrow(1, 0, t + 1);
            let y = layer.forward(&prefix, &none); // [B, t + 1, num_hiddens]
            outputs.push(y.narrow(1, t, 1)); //       keep the new token's row
        }
        Tensor::concat(&outputs, 1)
    })
}
// ANCHOR_END: decode_without_cache

// ANCHOR: decode_token_by_token
/// Feeds every token of `x` through `step`, one at a time, continuing from whatever
/// `cache` holds. With an empty cache this equals [`decode_with_cache`]; with a cache
/// left over from another sequence, every token also attends to that sequence.
pub fn decode_token_by_token(
    layer: &CausalSelfAttention,
    x: &Tensor,
    cache: &mut KvCache,
) -> Tensor {
    no_grad(|| {
        let outputs: Vec<Tensor> = (0..x.size(1))
            .map(|t| layer.step(&x.narrow(1, t, 1), cache, &Mask::none()))
            .collect();
        Tensor::concat(&outputs, 1)
    })
}
// ANCHOR_END: decode_token_by_token

/// The largest absolute difference between two tensors of the same shape.
#[track_caller]
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape(), "max_abs_diff: shapes differ");
    (a - b).to_vec().iter().fold(0.0f32, |m, v| m.max(v.abs()))
}

/// The settings of a [`TinyLm`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TinyLmConfig {
    /// The number of token ids.
    pub vocab: usize,
    /// The width of every token's vector.
    pub num_hiddens: usize,
    /// The attention heads.
    pub num_heads: usize,
    /// The longest sequence the position table covers.
    pub max_len: usize,
}

// ANCHOR: tiny_lm
/// The smallest language model that generates: token and position embeddings, one
/// causal self-attention layer with a residual connection, and a linear layer to one
/// score (logit) per token id. Untrained (its weights are seeded at random): what it
/// generates means nothing, but every step of generation is real. Batch size 1.
///
/// `logits(ids) = head(h + attention(h))` with `h = tokens(ids) + positions(0..T)`.
#[derive(Debug)]
pub struct TinyLm {
    tokens: Embedding,
    positions: Embedding,
    attention: CausalSelfAttention,
    head: Linear,
    max_len: usize,
}

impl TinyLm {
    /// A model with seeded random weights, in evaluation mode.
    pub fn new(config: TinyLmConfig) -> TinyLm {
        let embedding = |n| {
            Embedding::new(EmbeddingConfig {
                num_embeddings: n,
                embedding_dim: config.num_hiddens,
            })
        };
        TinyLm {
            tokens: embedding(config.vocab),
            positions: embedding(config.max_len),
            attention: causal_layer(config.num_hiddens, config.num_heads),
            head: Linear::new(LinearConfig {
                in_features: config.num_hiddens,
                out_features: config.vocab,
                ..Default::default()
            }),
            max_len: config.max_len,
        }
    }

    /// `h = tokens(ids) + positions(start..start + n)`: `[1, n, num_hiddens]`.
    fn embed(&self, ids: &[usize], start: usize) -> Tensor {
        assert!(
            start + ids.len() <= self.max_len,
            "TinyLm: positions {start}..{} are past max_len = {}",
            start + ids.len(),
            self.max_len
        );
        let as_tensor = |v: Vec<f32>| Tensor::from_vec(v, [1, ids.len()]);
        let tokens = as_tensor(ids.iter().map(|&i| i as f32).collect());
        let positions =
            as_tensor((start..start + ids.len()).map(|p| p as f32).collect());
        self.tokens.forward(&tokens) + self.positions.forward(&positions)
    }

    /// The logits of every position of `ids`, all at once: `[1, T, vocab]`.
    pub fn logits(&self, ids: &[usize]) -> Tensor {
        no_grad(|| {
            let h = self.embed(ids, 0);
            self.head
                .forward(&(&h + &self.attention.forward(&h, &Mask::none())))
        })
    }

    /// The logits of the prompt `ids`, filling an empty `cache`: `[1, T, vocab]`.
    pub fn prefill(&self, ids: &[usize], cache: &mut KvCache) -> Tensor {
        no_grad(|| {
            let h = self.embed(ids, 0);
            let a = self.attention.prefill(&h, cache, &Mask::none());
            self.head.forward(&(&h + &a))
        })
    }

    /// The logits of one more token `id`, after those in `cache`: `[1, 1, vocab]`.
    /// Its position is the number of tokens already cached.
    pub fn step(&self, id: usize, cache: &mut KvCache) -> Tensor {
        no_grad(|| {
            // The new token stands at position cache.len().
            let h = self.embed(&[id], cache.len());
            let a = self.attention.step(&h, cache, &Mask::none());
            self.head.forward(&(&h + &a))
        })
    }

    /// Greedy generation without a cache: `new_tokens` times, run the whole sequence
    /// so far through [`logits`](TinyLm::logits) and append the id with the largest
    /// logit at the last position. Returns the prompt followed by the new ids.
    pub fn generate_without_cache(
        &self,
        prompt: &[usize],
        new_tokens: usize,
    ) -> Vec<usize> {
        let mut ids = prompt.to_vec();
        for _ in 0..new_tokens {
            let next = greedy_next(&self.logits(&ids));
            ids.push(next);
        }
        ids
    }
}
// ANCHOR_END: tiny_lm

// ANCHOR: greedy_next
/// The id with the largest logit at the last position of `logits: [1, T, vocab]` (the
/// first one on a tie).
pub fn greedy_next(logits: &Tensor) -> usize {
    let vocab = logits.size(-1);
    let last = logits.narrow(1, logits.size(1) - 1, 1).to_vec();
    assert_eq!(
        last.len(),
        vocab,
        "greedy_next: logits must be [1, T, vocab]"
    );
    let mut best = 0;
    for (i, &v) in last.iter().enumerate() {
        if v > last[best] {
            best = i;
        }
    }
    best
}
// ANCHOR_END: greedy_next

// ANCHOR: as_multi_head
/// The same attention as `layer`, as a [`MultiHeadAttention`] with the same weights
/// (read through `state_dict`): an independent implementation to compare against.
/// With `Mask::causal()` its `forward(&x, &x, &x, …)` is the full causal computation.
pub fn as_multi_head(layer: &CausalSelfAttention) -> MultiHeadAttention {
    let config = MultiHeadAttentionConfig {
        num_hiddens: layer.num_hiddens(),
        num_heads: layer.num_heads(),
        bias: true, // CausalSelfAttention's projections have biases
        ..Default::default()
    };
    let mut mha = MultiHeadAttention::from_state_dict(config, &layer.state_dict())
        .expect("the same parameter names and shapes");
    mha.eval();
    mha
}
// ANCHOR_END: as_multi_head
