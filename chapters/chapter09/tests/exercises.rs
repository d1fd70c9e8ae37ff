//! The exercises of chapter 9, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use attention::prelude::*;
use chapter09::DecoderAttention;
use chapter09::exercises::{ScaledDotProduct, beam_search, smoothed_cross_entropy};

#[test]
fn exercise_1_scaled_dot_product_attention_for_the_decoder() {
    // Two examples, H = 2. Example 0 sees its 3 outputs, example 1 only its first 2.
    let query = Tensor::from_vec(vec![2.0, 0.0, 0.0, 1.0], [2, 2]);
    let outputs = Tensor::from_vec(
        vec![
            1.0, 0.0, /**/ 0.0, 1.0, /**/ 1.0, 1.0, // example 0
            0.0, 2.0, /**/ 0.0, 0.0, /**/ 0.0,
            9.0, // example 1 (the last is padding)
        ],
        [2, 3, 2],
    );
    let lens = Tensor::from_vec(vec![3.0, 2.0], [2]);
    let (context, weights) =
        ScaledDotProduct.attend(&query, &outputs, &Mask::valid_lens(&lens));
    assert_eq!(
        (context.shape(), weights.shape()),
        (&[2, 2][..], &[2, 3][..])
    );
    // Example 0: scores q · k / √2 = [√2, 0, √2].
    let e = 2f32.sqrt().exp();
    let w0 = [
        e / (2.0 * e + 1.0),
        1.0 / (2.0 * e + 1.0),
        e / (2.0 * e + 1.0),
    ];
    // Example 1: scores [2/√2, 0] over the two real outputs.
    let f = 2f32.sqrt().exp();
    let w1 = [f / (f + 1.0), 1.0 / (f + 1.0), 0.0];
    let w = weights.to_vec();
    for (got, want) in w.iter().zip(w0.iter().chain(&w1)) {
        assert!((got - want).abs() < 1e-6, "weights {w:?}");
    }
    let c = context.to_vec();
    let want = [w0[0] + w0[2], w0[1] + w0[2], 0.0, 2.0 * w1[0]];
    for (got, want) in c.iter().zip(&want) {
        assert!((got - want).abs() < 1e-5, "context {c:?}");
    }
    assert_eq!(ScaledDotProduct.num_parameters(), 0);
}

/// Tokens: 0 = <eos>, 1 = a, 2 = b. After "a" the best is to stop (0.4), after "b" too
/// (0.9); "a" is the better first token (0.5 against 0.4), "b" the better sequence
/// (0.4 · 0.9 = 0.36 against 0.5 · 0.4 = 0.20).
fn toy_step(prefix: &[usize]) -> Vec<f32> {
    let p: [f32; 3] = match prefix {
        [] => [0.1, 0.5, 0.4],
        [1] => [0.4, 0.3, 0.3],
        [2] => [0.9, 0.05, 0.05],
        _ => [0.98, 0.01, 0.01],
    };
    p.map(f32::ln).to_vec()
}

#[test]
fn exercise_2_beam_search_finds_what_greedy_misses() {
    assert_eq!(
        beam_search(&toy_step, 1, 0, 5),
        vec![1],
        "a beam of 1 is greedy"
    );
    assert_eq!(beam_search(&toy_step, 2, 0, 5), vec![2]);
    assert_eq!(beam_search(&toy_step, 3, 0, 5), vec![2]);
    // A model that never stops: every sequence ends at max_len, the best is "a a a".
    let never = |_: &[usize]| [0.0f32, 0.6, 0.4].map(f32::ln).to_vec();
    assert_eq!(beam_search(&never, 2, 0, 3), vec![1, 1, 1]);
}

#[test]
fn exercise_3_label_smoothing_spreads_epsilon_over_the_classes() {
    // One example of 2 real tokens and one padding position, V = 2 classes.
    // Token 0: logits [0, ln 3], p = [1/4, 3/4], target 1.
    // Token 1: logits [0, 0], p = [1/2, 1/2], target 0. Position 2: padding, any values.
    let logits =
        Tensor::from_vec(vec![0.0, 3f32.ln(), 0.0, 0.0, 30.0, -30.0], [1, 3, 2]);
    let targets = Tensor::from_vec(vec![1.0, 0.0, 1.0], [1, 3]);
    let lens = Tensor::from_vec(vec![2.0], [1]);
    let eps = 0.2;
    let (p0, p1) = ([0.25f32, 0.75], [0.5f32, 0.5]);
    let token0 = -(1.0 - eps) * p0[1].ln() - eps / 2.0 * (p0[0].ln() + p0[1].ln());
    let token1 = -(1.0 - eps) * p1[0].ln() - eps / 2.0 * (p1[0].ln() + p1[1].ln());
    let loss = smoothed_cross_entropy(&logits, &targets, &lens, eps).item();
    assert!((loss - (token0 + token1) / 2.0).abs() < 1e-6, "{loss}");
    // With ε = 0 it is the plain masked cross-entropy: (ln 4/3 + ln 2) / 2.
    let plain = smoothed_cross_entropy(&logits, &targets, &lens, 0.0).item();
    assert!(
        (plain - ((4.0f32 / 3.0).ln() + 2f32.ln()) / 2.0).abs() < 1e-6,
        "{plain}"
    );
}
