//! # Chapter 8: Caching for autoregressive decoding
//!
//! The code of the eighth lesson (the page is `book/src/ch08-kv-caching.md`):
//!
//! 1. Why a cache is valid ([`validity`]): [`change_the_future`] changes the later
//!    tokens of a sequence and measures how much the earlier outputs move (not at
//!    all), and [`weights_two_ways`] / [`weights_heatmap`] draw the attention weights
//!    of the full computation beside those decoding computes.
//! 2. Decoding ([`decoding`]): [`decode_with_cache`] (`prefill`, then one `step` per
//!    token), [`decode_without_cache`] (the whole prefix again for every token), and
//!    [`decode_token_by_token`]; a tiny language model, [`TinyLm`], whose greedy
//!    generation ([`TinyLm::generate_without_cache`], [`greedy_next`]) is the loop a
//!    cache serves.
//! 3. What it saves and what it costs ([`cost`]): [`multiply_adds_per_token`] with
//!    and without the cache, and [`CacheShape::bytes_per_token`].
//! 4. Tokens per second ([`speed`]): the committed sample run ([`sample_run`]), its
//!    table ([`SpeedRun::table`]) and chart ([`speed_chart`]); the `speed` example
//!    measures your machine. The run from before a step read the cache in place
//!    ([`sample_run_before`]) and the cost of one copy of the cache
//!    ([`SAMPLE_COPIES`], the `copies` example) show why it must.
//! 5. The pitfalls ([`pitfalls`]): a cache reused without a reset
//!    ([`two_sequences`]), causal order aligned to the wrong key
//!    ([`error_of_new_tokens`]), and decoding past the initial capacity
//!    ([`decode_past_the_capacity`]).
//! 6. Self-attention and positions ([`positions`]): self-attention cannot tell the
//!    order of its tokens ([`positions::permutation_gap`]); the sinusoidal encoding,
//!    its relative-position property, and the cost of self-attention beside recurrent
//!    and convolutional layers ([`positions::LayerCost`]), with a convolution built
//!    from ops to time beside them ([`convolution::SequenceConvolution`]).
//! 7. [`tour`] and [`positions::tour`]: everything the page prints (`cargo run -p
//!    chapter08`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use attention::prelude::*;

pub mod convolution;
pub mod cost;
pub mod decoding;
pub mod pitfalls;
pub mod positions;
pub mod speed;
pub mod validity;

pub use cost::{CacheShape, multiply_adds_per_token};
pub use decoding::{
    TinyLm, TinyLmConfig, as_multi_head, causal_layer, decode_token_by_token,
    decode_with_cache, decode_without_cache, greedy_next, max_abs_diff,
};
pub use pitfalls::{
    decode_past_the_capacity, error_of_new_tokens, panic_message, two_sequences,
};
pub use speed::{
    COPY_LENGTHS, SAMPLE_CHART_TITLE, SAMPLE_COPIES, SAMPLE_SPEED,
    SAMPLE_SPEED_BEFORE, SPEED_HEADS, SPEED_NUM_HIDDENS, SPEED_POSITIONS, SpeedRow,
    SpeedRun, check_build_for_timing, sample_run, sample_run_before,
    sample_speed_chart, speed_chart,
};
pub use validity::{change_the_future, weights_heatmap, weights_two_ways};

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter08: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// How close decoding with a cache must come to the full computation: the largest
/// absolute difference of any output, for outputs of size about 1. The two compute
/// the same sums in different groupings, so they agree to `f32` rounding, not bit for
/// bit.
pub const TOLERANCE: f32 = 1e-5;

/// The layer and the sequence of the causality demonstration and the weights heatmap:
/// `num_hiddens = 8`, 2 heads, one sequence of 6 tokens (seed 8).
pub fn heatmap_example() -> (CausalSelfAttention, Tensor) {
    manual_seed(8);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([1, 6, 8]);
    (layer, x)
}

/// The prompt length of the heatmap: 3 tokens prefilled, 3 decoded by `step`.
pub const HEATMAP_PROMPT: usize = 3;

/// The book's heatmap of the attention weights computed both ways.
pub fn causal_weights_heatmap() -> String {
    let (layer, x) = heatmap_example();
    weights_heatmap(&layer, &x, HEATMAP_PROMPT)
}

/// The tiny language model of the page: 16 token ids, width 16, 2 heads, up to 32
/// positions (seed 80).
pub fn tiny_lm() -> TinyLm {
    manual_seed(80);
    TinyLm::new(TinyLmConfig {
        vocab: 16,
        num_hiddens: 16,
        num_heads: 2,
        max_len: 32,
    })
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter08` prints it,
/// and a test checks that the page quotes it exactly. No timing is printed here (the
/// `speed` example measures time).
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    let within = |diff: f32| diff <= TOLERANCE;

    // ANCHOR: tour_causality
    let (layer, x) = heatmap_example(); //       x: [1, 6, 8]
    let replacement = Tensor::randn([1, 3, 8]); // new tokens for positions 3, 4, 5
    let (past, future) = change_the_future(&layer, &x, 3, &replacement);
    line(format!(
        "tokens 3..6 replaced: outputs 0..3 moved by {past:.1e}, \
         outputs 3..6 by {future:.3}"
    ));
    let _ = no_grad(|| layer.forward(&x, &Mask::none()));
    // [B, H, T, T] = [1, 2, 6, 6]
    let weights = layer.last_attention_weights().expect("ran forward");
    line(format!("weights {:?}, head 0:", weights.shape()));
    line(format!("{:.3}", weights.narrow(1, 0, 1).reshape([6, 6])));
    // ANCHOR_END: tour_causality

    // ANCHOR: tour_api
    manual_seed(1);
    let layer = causal_layer(8, 2); // num_hiddens = 8, H = 2, so d_head = 4
    let x = Tensor::randn([2, 5, 8]); // B = 2 sequences of T = 5 tokens
    let mut cache = KvCache::new(4);
    line(format!(
        "new cache: len {}, capacity {} (nothing allocated yet)",
        cache.len(),
        cache.capacity()
    ));
    let mut outputs = Vec::new();
    no_grad(|| {
        let y = layer.prefill(&x.narrow(1, 0, 3), &mut cache, &Mask::none());
        line(format!(
            "prefill [2, 3, 8] -> {:?}; cache len {}, capacity {},",
            y.shape(),
            cache.len(),
            cache.capacity(),
        ));
        line(format!(
            "  keys {:?}, values {:?}",
            cache.keys().shape(),
            cache.values().shape()
        ));
        outputs.push(y);
        for t in 3..5 {
            let y = layer.step(&x.narrow(1, t, 1), &mut cache, &Mask::none());
            line(format!(
                "step {t}: [2, 1, 8] -> {:?}; cache len {}, capacity {}, keys {:?}",
                y.shape(),
                cache.len(),
                cache.capacity(),
                cache.keys().shape()
            ));
            outputs.push(y);
        }
    });
    let decoded = Tensor::concat(&outputs, 1);
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    line(format!(
        "prefill + 2 steps {:?} equal forward {:?} within {TOLERANCE:.0e}: {}",
        decoded.shape(),
        full.shape(),
        within(max_abs_diff(&decoded, &full))
    ));
    let recomputed = decode_without_cache(&layer, &x, 3);
    line(format!(
        "without a cache, within {TOLERANCE:.0e}: {}",
        within(max_abs_diff(&recomputed, &full))
    ));
    // ANCHOR_END: tour_api

    // ANCHOR: tour_work
    let d = SPEED_NUM_HIDDENS;
    line(format!(
        "multiply-adds for the token at position t, num_hiddens = {d}:"
    ));
    line(format!(
        "{:>5} {:>12} {:>14} {:>6}",
        "t", "with cache", "without", "ratio"
    ));
    for t in SPEED_POSITIONS {
        let with = multiply_adds_per_token(d, t, true);
        let without = multiply_adds_per_token(d, t, false);
        line(format!(
            "{t:>5} {with:>12} {without:>14} {:>6}",
            without / with
        ));
    }
    // ANCHOR_END: tour_work

    // ANCHOR: tour_memory
    let ours = CacheShape {
        layers: 1,
        batch: 2,
        heads: 2,
        d_head: 4,
    };
    let stored = (cache.keys().numel() + cache.values().numel()) * size_of::<f32>();
    line(format!(
        "this layer's cache: {} bytes per token; {} tokens: {} bytes",
        ours.bytes_per_token(),
        cache.len(),
        ours.bytes(cache.len()),
    ));
    line(format!("what keys() and values() hold: {stored} bytes"));
    line(format!(
        "capacity {}: {} bytes reserved",
        cache.capacity(),
        ours.bytes(cache.capacity())
    ));
    let gpt2_small = CacheShape {
        layers: 12,
        batch: 1,
        heads: 12,
        d_head: 64,
    };
    let seven_b = CacheShape {
        layers: 32,
        batch: 1,
        heads: 32,
        d_head: 128,
    };
    for (name, shape, context) in [
        ("GPT-2 small, 12 layers, 12 heads of 64", gpt2_small, 1024),
        (
            "the same, batch 8",
            CacheShape {
                batch: 8,
                ..gpt2_small
            },
            1024,
        ),
        ("7B-sized, 32 layers, 32 heads of 128", seven_b, 4096),
    ] {
        line(format!(
            "{name}: {} per token, {} for {context} tokens",
            engine::memory::human(shape.bytes_per_token()),
            engine::memory::human(shape.bytes(context))
        ));
    }
    // ANCHOR_END: tour_memory

    // ANCHOR: tour_generate
    let model = tiny_lm();
    let prompt = [1, 2, 3];
    let generated = model.generate_without_cache(&prompt, 8);
    line(format!("greedy, prompt {prompt:?}: {generated:?}"));
    // ANCHOR_END: tour_generate

    // ANCHOR: tour_reset
    manual_seed(2);
    let layer = causal_layer(8, 2);
    let first = Tensor::randn([1, 6, 8]);
    let second = Tensor::randn([1, 4, 8]);
    let full = no_grad(|| layer.forward(&second, &Mask::none()));
    let (stale, stale_len) = two_sequences(&layer, &first, &second, false);
    let (fresh, fresh_len) = two_sequences(&layer, &first, &second, true);
    line(format!(
        "no reset: cache len {stale_len}, largest error {:.3}",
        max_abs_diff(&stale, &full)
    ));
    line(format!(
        "reset:    cache len {fresh_len}, within {TOLERANCE:.0e}: {}",
        within(max_abs_diff(&fresh, &full))
    ));
    let message = panic_message(|| {
        let mut cache = KvCache::new(8);
        no_grad(|| {
            layer.prefill(&first, &mut cache, &Mask::none());
            layer.prefill(&second, &mut cache, &Mask::none()); // no reset in between
        });
    });
    line(lesson::wrap(&message, lesson::COLUMNS));
    // ANCHOR_END: tour_reset

    // ANCHOR: tour_offset
    manual_seed(3);
    let (q, k, v) = (
        Tensor::randn([1, 5, 4]),
        Tensor::randn([1, 5, 4]),
        Tensor::randn([1, 5, 4]),
    );
    line(format!(
        "{:<28} {:<16} {:<16} largest error",
        "mask", "position 3 sees", "position 4 sees"
    ));
    for (name, mask) in [
        ("Mask::causal()", Mask::causal()),
        ("Mask::causal_with_offset(3)", Mask::causal_with_offset(3)),
        ("Mask::causal_with_offset(0)", Mask::causal_with_offset(0)),
    ] {
        // [1, 2, 5]: which of the 5 keys the queries at positions 3 and 4 may see.
        let keep = mask.keep_for("tour", &[1, 2, 5]).expect("a causal mask");
        let row = |q: usize| -> String {
            let r = keep.narrow(1, q, 1).to_vec();
            r.iter()
                .map(|v| format!("{v}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        line(format!(
            "{name:<28} {:<16} {:<16} {:>13.3}",
            row(0),
            row(1),
            error_of_new_tokens(&q, &k, &v, 2, &mask)
        ));
    }
    let (layer, x) = heatmap_example();
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let last = no_grad(|| {
        let mut cache = KvCache::new(8);
        layer.prefill(&x.narrow(1, 0, 5), &mut cache, &Mask::none());
        layer.step(&x.narrow(1, 5, 1), &mut cache, &Mask::causal_with_offset(0))
    });
    // 1 for each key that head 0 of the new token weighs above zero, else 0.
    let seen: Vec<u8> = layer
        .last_attention_weights()
        .expect("ran step")
        .narrow(1, 0, 1)
        .to_vec()
        .iter()
        .map(|w| u8::from(*w > 0.0))
        .collect();
    line(format!(
        "step with Mask::causal_with_offset(0): sees keys {seen:?},"
    ));
    line(format!(
        "  largest error {:.3}",
        max_abs_diff(&last, &full.narrow(1, 5, 1))
    ));
    // ANCHOR_END: tour_offset

    // ANCHOR: tour_growth
    manual_seed(4);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([1, 9, 8]);
    let (decoded, capacities) = decode_past_the_capacity(&layer, &x, 2);
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    line(format!("capacity after each token: {capacities:?}"));
    line(format!(
        "9 tokens through a cache made for 2, within {TOLERANCE:.0e} of forward: {}",
        within(max_abs_diff(&decoded, &full))
    ));
    // ANCHOR_END: tour_growth

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch08-kv-caching.md")]
struct Book;
