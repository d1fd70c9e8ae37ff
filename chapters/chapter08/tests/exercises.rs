//! The exercises of chapter 8, held to hand-computed values and to computations that do not
//! use the exercise's code. They run against the reference solutions by default and
//! against `src/exercises.rs` with `--features exercises`.

use attention::prelude::*;
use chapter08::exercises::{generate_with_cache, max_cached_tokens, sliding_window_decode};
use chapter08::{causal_layer, max_abs_diff, tiny_lm};

#[test]
fn exercise_1_max_cached_tokens_divides_the_budget_by_the_bytes_per_token() {
    // 12 layers, 12 heads of 64, f32: 2·12·12·64·4 = 73,728 bytes per token.
    assert_eq!(max_cached_tokens(72 << 20, 12, 1, 12, 64, 4), 1024);
    assert_eq!(max_cached_tokens((72 << 20) - 1, 12, 1, 12, 64, 4), 1023);
    assert_eq!(max_cached_tokens(72 << 20, 12, 4, 12, 64, 4), 256); // batch 4
    // 32 layers, 32 heads of 128, f16: 2·32·32·128·2 = 512 KiB per token; 16 GiB holds 32,768.
    assert_eq!(max_cached_tokens(16 << 30, 32, 1, 32, 128, 2), 32_768);
    // Grouped-query attention: 8 heads of keys and values instead of 32, four times more.
    assert_eq!(max_cached_tokens(16 << 30, 32, 1, 8, 128, 2), 131_072);
    // Less than one token's worth fits nothing.
    assert_eq!(max_cached_tokens(7, 1, 1, 1, 1, 4), 0);
    assert_eq!(max_cached_tokens(8, 1, 1, 1, 1, 4), 1);
}

/// 1 where query `q` may see key `k` in a window of `window` tokens ending at `q`:
/// `q − window < k ≤ q`, as `[1, T, T]`.
fn band(t: usize, window: usize) -> Tensor {
    let keep = (0..t * t)
        .map(|i| {
            let (q, k) = (i / t, i % t);
            f32::from(u8::from(k <= q && q - k < window))
        })
        .collect();
    Tensor::from_vec(keep, [1, t, t])
}

#[test]
fn exercise_2_sliding_window_decoding_equals_forward_with_a_band_mask() {
    manual_seed(21);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([2, 7, 8]);
    let mut cache = KvCache::new(2);
    for window in [1, 2, 3, 5, 7, 10] {
        let expected = no_grad(|| layer.forward(&x, &Mask::keep(&band(7, window))));
        let decoded = sliding_window_decode(&layer, &x, window, &mut cache);
        assert_eq!(decoded.shape(), &[2, 7, 8]);
        let diff = max_abs_diff(&decoded, &expected);
        assert!(diff <= 1e-5, "window {window}: largest difference {diff}");
        assert_eq!(cache.len(), window.min(7), "window {window}: tokens kept");
    }
    // A window as long as the sequence is plain causal attention.
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let decoded = sliding_window_decode(&layer, &x, 7, &mut cache);
    assert!(max_abs_diff(&decoded, &full) <= 1e-5);
}

#[test]
fn exercise_3_greedy_generation_with_the_cache_equals_generation_without_it() {
    let model = tiny_lm();
    let mut cache = KvCache::new(4);
    for (prompt, new_tokens) in [(vec![1, 2, 3], 8), (vec![5], 12), (vec![0, 15, 7, 7], 1)] {
        let expected = model.generate_without_cache(&prompt, new_tokens);
        let ids = generate_with_cache(&model, &prompt, new_tokens, &mut cache);
        assert_eq!(ids, expected, "prompt {prompt:?}");
        // The prompt and every new id but the last went through the cache.
        assert_eq!(
            cache.len(),
            prompt.len() + new_tokens - 1,
            "prompt {prompt:?}"
        );
    }
    assert_eq!(
        generate_with_cache(&model, &[4, 2], 0, &mut cache),
        vec![4, 2]
    );
}
