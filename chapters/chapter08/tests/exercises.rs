//! The exercises of chapter 8, held to hand-computed values and to computations that do not
//! use the exercise's code. They run against the reference solutions by default and
//! against `src/exercises.rs` with `--features exercises`.

use attention::prelude::*;
use chapter08::exercises::{
    generate_with_cache, max_cached_tokens, shift_encoding, sliding_window_decode,
};
use chapter08::positions::sinusoidal_encoding;
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
    for (prompt, new_tokens) in
        [(vec![1, 2, 3], 8), (vec![5], 12), (vec![0, 15, 7, 7], 1)]
    {
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

#[test]
fn exercise_4_shift_encoding_rotates_to_the_later_position() {
    // d = 2, one pair with ω = 1: position 0 is (sin 0, cos 0) = (0, 1); one step on is
    // (sin 1, cos 1).
    let moved = shift_encoding(&[0.0, 1.0], 1);
    assert!(
        (moved[0] - 1f32.sin()).abs() < 1e-6 && (moved[1] - 1f32.cos()).abs() < 1e-6
    );
    // Against the encoding itself, width 16, for several starts and distances; k = 0
    // changes nothing.
    let pe = sinusoidal_encoding(200, 16).to_vec();
    let row = |p: usize| &pe[p * 16..(p + 1) * 16];
    assert_eq!(shift_encoding(row(7), 0), row(7));
    for p in [0, 3, 50] {
        for k in [1, 7, 30, 120] {
            let moved = shift_encoding(row(p), k);
            let gap = moved
                .iter()
                .zip(row(p + k))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(gap < 1e-5, "p = {p}, k = {k}: {gap}");
        }
    }
}
