//! A second solution to each chapter 8 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::{CausalSelfAttention, KvCache, Mask};
use engine::{Tensor, no_grad};

use crate::TinyLm;

/// Exercise 1, by dividing the budget step by step (bytes per value, then per head
/// entry, per sequence, per layer, and 2 for keys and values) instead of forming the
/// bytes per token first. Integer division in steps gives the same floor.
pub fn max_cached_tokens(
    budget_bytes: usize,
    layers: usize,
    batch: usize,
    kv_heads: usize,
    d_head: usize,
    bytes_per_value: usize,
) -> usize {
    [bytes_per_value, d_head, kv_heads, batch, layers, 2]
        .iter()
        .fold(budget_bytes, |left, &per| left / per)
}

/// Exercise 2, keeping the last `window − 1` tokens measured from the end of the
/// cache (`len − (window − 1)` onwards) whenever it holds `window` or more, and
/// emptying it outright when the window is a single token.
pub fn sliding_window_decode(
    layer: &CausalSelfAttention,
    x: &Tensor,
    window: usize,
    cache: &mut KvCache,
) -> Tensor {
    assert!(
        window > 0,
        "sliding_window_decode: a window of at least 1 token"
    );
    cache.reset();
    no_grad(|| {
        let outputs: Vec<Tensor> = (0..x.size(1))
            .map(|t| {
                let len = cache.len();
                if len >= window {
                    let keep = window - 1;
                    let (keys, values) = (cache.keys(), cache.values());
                    cache.reset();
                    if keep > 0 {
                        cache.append(
                            &keys.narrow(2, len - keep, keep),
                            &values.narrow(2, len - keep, keep),
                        );
                    }
                }
                layer.step(&x.narrow(1, t, 1), cache, &Mask::none())
            })
            .collect();
        Tensor::concat(&outputs, 1)
    })
}

/// The id of the largest of the last position's logits `[1, T, vocab]`, the first
/// one on a tie.
fn last_argmax(logits: &Tensor) -> usize {
    let vocab = logits.size(-1);
    let all = logits.to_vec();
    let last = &all[all.len() - vocab..];
    let mut best = 0;
    for (id, &x) in last.iter().enumerate() {
        if x > last[best] {
            best = id;
        }
    }
    best
}

/// Exercise 3, as a `for` loop over the new tokens that steps on each one except the
/// last, with the argmax written out.
pub fn generate_with_cache(
    model: &TinyLm,
    prompt: &[usize],
    new_tokens: usize,
    cache: &mut KvCache,
) -> Vec<usize> {
    cache.reset();
    let mut ids = prompt.to_vec();
    if new_tokens == 0 {
        return ids;
    }
    let mut logits = model.prefill(prompt, cache);
    for made in 1..=new_tokens {
        let next = last_argmax(&logits);
        ids.push(next);
        if made < new_tokens {
            logits = model.step(next, cache);
        }
    }
    ids
}

/// Exercise 4, in `f32` throughout: each pair multiplied by the rotation matrix of
/// the angle `k·ωᵢ`, the angle rounded to `f32` and its sine and cosine taken there.
pub fn shift_encoding(row: &[f32], k: usize) -> Vec<f32> {
    let d = row.len();
    row.chunks_exact(2)
        .enumerate()
        .flat_map(|(i, pair)| {
            let omega = crate::positions::frequency(i, d) as f32;
            let (s, c) = (k as f32 * omega).sin_cos();
            let (sin_p, cos_p) = (pair[0], pair[1]);
            // [sin(p + k); cos(p + k)] = [[c, s], [−s, c]] · [sin p; cos p]
            [c * sin_p + s * cos_p, -s * sin_p + c * cos_p]
        })
        .collect()
}
