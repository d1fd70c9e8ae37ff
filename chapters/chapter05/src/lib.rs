//! # Chapter 5: additive attention
//!
//! The code of the fifth lesson (the page is `book/src/ch05-additive-attention.md`):
//!
//! 1. [`AdditiveByHand`]: d2l's batched additive attention, one engine op at a time,
//!    with the shape of every step recorded in a [`Trace`]; it gives the numbers of
//!    [`attention::AdditiveAttention`] with the same weights.
//! 2. [`BahdanauByHand`]: the single-query form a decoder runs once per step, with
//!    biases, a learned score vector `v` and a projection `W_o` after pooling; it
//!    gives the numbers of [`attention::BahdanauAttention`].
//! 3. [`initialise`] and [`weight_stats`]: three initialisations, and how close to
//!    uniform each leaves the weights.
//! 4. [`toy_run`]: a small task trained from scratch, to see what training does to
//!    those weights; [`plots`] draws them.
//! 5. [`pairs_bytes`], [`measure_forward`] and [`refused_forward`]: the memory of the
//!    `[B, Q, K, h]` tensor, by formula and measured.
//! 6. [`panic_message`]: the messages of the size mistakes the page shows.
//! 7. [`light`]: lighter forms of the score (a smaller `h`, no `W_q`, a low-rank
//!    `W_k`, tied projections), their parameters and multiply-adds counted, and the
//!    toy task trained with each.
//! 8. [`tour`]: everything the page prints (`cargo run -p chapter05`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

mod batched;
mod decoder;
mod init;
pub mod light;
mod memory;
pub mod plots;
mod training;

pub use batched::AdditiveByHand;
pub use decoder::BahdanauByHand;
pub use init::{Init, WeightStats, initialise, weight_stats};
pub use lesson::{Step, Trace, panic_message};
pub use memory::{
    ForwardMemory, MEMORY_SIZES, measure_forward, memory_row, pairs_bytes,
    refused_forward,
};
pub use training::{
    EVAL_EVERY, HIDDENS, KEY_SIZE, KEYS, QUERIES, STEPS, ToyBatch, ToyRun, ToyScore,
    toy_loss, toy_model, toy_run, toy_score,
};

use attention::prelude::*;
use engine::memory::human;

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
    "chapter05: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The largest absolute difference between two tensors of one shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape(), "max_abs_diff: shapes differ");
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The batched example of the page: `B = 2`, `Q = 3`, `K = 4`, `q_size = 5`, `k_size
/// = 6`, `h = 8`, `dv = 7`, valid lengths `[4, 2]`. Returns the library module (in
/// evaluation mode) and `(queries, keys, values, lens)`.
pub fn batched_example() -> (AdditiveAttention, [Tensor; 4]) {
    engine::manual_seed(0);
    // ANCHOR: batched_module
    let mut library = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 5,
        key_size: 6,
        num_hiddens: 8,
        scoring: AdditiveScoring::Broadcast, // d2l's ops, as written by hand below
        ..Default::default()
    });
    library.eval();
    let queries = Tensor::randn([2, 3, 5]); // B = 2, Q = 3, q_size = 5
    let keys = Tensor::randn([2, 4, 6]); //    B = 2, K = 4, k_size = 6
    let values = Tensor::randn([2, 4, 7]); //  B = 2, K = 4, dv = 7
    let lens = Tensor::from_vec(vec![4.0, 2.0], [2]); // example 1 has 2 real keys
    // ANCHOR_END: batched_module
    (library, [queries, keys, values, lens])
}

/// The decoder-step example of the page: `B = 2`, `q_size = 5`, `K = 4`, `k_size =
/// 6`, values equal to the keys (`dv = 6`), `h = 8`, the last key of example 1
/// padding. Returns the library module and `(query, keys, pad)`.
pub fn decoder_example() -> (BahdanauAttention, [Tensor; 3]) {
    engine::manual_seed(1);
    // ANCHOR: decoder_module
    let library = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 5,
        key_size: 6,
        value_size: 6,
        num_hiddens: 8,
        scoring: AdditiveScoring::Broadcast, // the ops written by hand below
        ..Default::default()
    });
    let query = Tensor::randn([2, 5]); //   one decoder state per example
    let keys = Tensor::randn([2, 4, 6]); // the encoder's outputs, also the values
    // 1 = a real key, 0 = padding: the last key of example 1.
    let pad = Tensor::from_vec(vec![1., 1., 1., 1., 1., 1., 1., 0.], [2, 4]);
    // ANCHOR_END: decoder_module
    (library, [query, keys, pad])
}

/// The weights of both forms under each initialisation, on the same 32 (query, keys)
/// pairs: random inputs with `B = 4`, `Q = 8`, `K = 10`, `q_size = 12`, `k_size = 8`,
/// `h = 16`. The decoder form sees them as 32 examples of one query each.
pub fn init_study() -> Vec<(&'static str, Init, WeightStats)> {
    let mut rows = Vec::new();
    for scheme in Init::ALL {
        // ANCHOR: init_study
        engine::manual_seed(2);
        let queries = Tensor::randn([4, 8, 12]);
        let keys = Tensor::randn([4, 10, 8]);
        let batched = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: 12,
            key_size: 8,
            num_hiddens: 16,
            ..Default::default()
        });
        initialise(&batched, scheme);
        batched.forward(&queries, &keys, &keys, &Mask::none());
        let weights = batched.last_attention_weights().expect("after forward");
        rows.push(("batched", scheme, weight_stats(&weights)));

        let decoder = BahdanauAttention::new(BahdanauAttentionConfig {
            query_size: 12,
            key_size: 8,
            value_size: 8,
            num_hiddens: 16,
            ..Default::default()
        });
        initialise(&decoder, scheme);
        let query = queries.reshape([32, 12]); // one query per example
        let keys = keys.repeat_interleave(8, 0); // [32, 10, 8]: each example's keys
        let (_, weights) = decoder.forward(&query, &keys, &keys, &Mask::none());
        rows.push(("decoder", scheme, weight_stats(&weights)));
        // ANCHOR_END: init_study
    }
    rows
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter05`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    line("== 1. The batched form, step by step".into());
    // ANCHOR: tour_batched
    let (library, [queries, keys, values, lens]) = batched_example();
    let by_hand = AdditiveByHand::from_state_dict(&library.state_dict());
    let mask = Mask::valid_lens(&lens);
    let mut trace = Trace::default();
    let (output, weights) =
        by_hand.forward(&queries, &keys, &values, &mask, &mut trace);
    line(trace.to_string().trim_end().to_string());
    let expected = library.forward(&queries, &keys, &values, &mask);
    let expected_weights = library.last_attention_weights().expect("after forward");
    line(format!(
        "largest difference from AdditiveAttention: output {}, weights {}",
        max_abs_diff(&output, &expected),
        max_abs_diff(&weights, &expected_weights)
    ));
    // The same weights in a module with the default, fused scores (section 5).
    let config = AdditiveAttentionConfig {
        query_size: 5,
        key_size: 6,
        num_hiddens: 8,
        ..Default::default()
    };
    let fused =
        AdditiveAttention::from_state_dict(config, &library.state_dict()).unwrap();
    let fused_output = fused.forward(&queries, &keys, &values, &mask);
    line(format!(
        "largest difference from the fused default: output {:.1e}",
        max_abs_diff(&output, &fused_output)
    ));
    line(format!(
        "weights of example 1 (2 real keys):\n{:.4}",
        weights.narrow(0, 1, 1).squeeze(0)
    ));
    // ANCHOR_END: tour_batched

    line("\n== 2. The single-query form: one decoder step".into());
    // ANCHOR: tour_decoder
    let (library, [query, keys, pad]) = decoder_example();
    let by_hand = BahdanauByHand::from_state_dict(&library.state_dict());
    let mask = Mask::key_padding(&pad);
    let mut trace = Trace::default();
    let (context, weights) = by_hand.forward(&query, &keys, &keys, &mask, &mut trace);
    line(trace.to_string().trim_end().to_string());
    let (expected, expected_weights) = library.forward(&query, &keys, &keys, &mask);
    line(format!(
        "largest difference from BahdanauAttention: context {}, weights {}",
        max_abs_diff(&context, &expected),
        max_abs_diff(&weights, &expected_weights)
    ));
    line(format!("weights:\n{:.4}", weights));
    // ANCHOR_END: tour_decoder

    line("\n== 3. Initialisation: how uniform are the weights? (K = 10)".into());
    line(format!(
        "{:<8} {:<21} {:>9} {:>13} {:>16} {:>14}",
        "form",
        "init",
        "score std",
        "entropy/ln K",
        "1 − σ²/(2 ln K)",
        "max weight·K"
    ));
    // ANCHOR: tour_init
    for (form, scheme, s) in init_study() {
        let predicted = 1.0 - s.score_std.powi(2) / (2.0 * 10f32.ln());
        line(format!(
            "{form:<8} {:<21} {:>9.4} {:>13.4} {:>16.4} {:>14.3}",
            scheme.name(),
            s.score_std,
            s.entropy_ratio,
            predicted,
            s.max_times_k
        ));
    }
    // ANCHOR_END: tour_init

    line(format!("\n== 4. Training on a toy task ({STEPS} steps)"));
    // ANCHOR: tour_training
    let runs = Init::ALL.map(toy_run);
    let run = &runs[0]; // the default initialisation
    line(format!(
        "{:<16} {:>5} {:>9} {:>16} {:>18}",
        "", "loss", "accuracy", "entropy/ln(len)", "weight on padding"
    ));
    for (when, s) in [
        ("before training", run.before),
        ("after training", run.after),
        ("after, no mask", run.after_unmasked),
    ] {
        line(format!(
            "{when:<16} {:>5.3} {:>9.3} {:>16.3} {:>18.3}",
            s.loss, s.accuracy, s.entropy_ratio, s.padding_weight
        ));
    }
    // ANCHOR_END: tour_training
    let (rows, cols) = (plots::query_labels(), plots::key_labels(run.len));
    let example = run.example;
    line(format!(
        "example {example}, before training:\n{}",
        table(&run.weights_before, &rows, &cols)
    ));
    line(format!(
        "after training:\n{}",
        table(&run.weights_after, &rows, &cols)
    ));
    let features = run.keys.narrow(1, 0, QUERIES).transpose(0, 1); // [3, 8]
    let names: Vec<String> = (0..QUERIES).map(|i| format!("f{i}")).collect();
    line(format!(
        "the keys' features 0 to 2:\n{}",
        table(&features, &names, &cols)
    ));
    line("held-out loss by initialisation:".into());
    line(format!(
        "{:<22}{}",
        "step",
        run.curve
            .iter()
            .map(|(step, _)| format!("{step:>7}"))
            .collect::<String>()
    ));
    for (scheme, r) in Init::ALL.iter().zip(&runs) {
        let losses: String =
            r.curve.iter().map(|(_, l)| format!("{l:>7.3}")).collect();
        line(format!("{:<22}{losses}", scheme.name()));
    }

    line("\n== 5. The memory of the [B, Q, K, h] tensor".into());
    line(format!(
        "{:>2} {:>2} {:>2} {:>2} {:>11} | {:>12} {:>6} {:>11} | {:>13} {:>11}",
        "B",
        "Q",
        "K",
        "h",
        "B·Q·K·h·4",
        "no_grad peak",
        "ratio",
        "held after",
        "training peak",
        "held after"
    ));
    // ANCHOR: tour_memory
    for sizes in MEMORY_SIZES {
        line(memory_row(sizes, AdditiveScoring::Broadcast));
    }
    // ANCHOR_END: tour_memory
    line(format!(
        "{:>2} {:>5} {:>3} {:>13} {:>17} {:>23}",
        "B",
        "Q = K",
        "h",
        "[B, Q, K, h]",
        "scores [B, Q, K]",
        "decoder step [B, K, h]"
    ));
    for (b, n, h) in [(64, 512, 256), (64, 1024, 256)] {
        line(format!(
            "{b:>2} {n:>5} {h:>3} {:>13} {:>17} {:>23}",
            human(pairs_bytes(b, n, n, h)),
            human(pairs_bytes(b, n, n, 1)),
            human(pairs_bytes(b, 1, n, h)),
        ));
    }
    // ANCHOR: tour_refused
    let message = refused_forward(8, 64, 64, 64, 6 << 20);
    // Broken at spaces to the page's width, continuations two spaces in.
    line(lesson::wrap(&message, lesson::COLUMNS));
    // ANCHOR_END: tour_refused
    // ANCHOR: tour_fused
    line("the same sizes with fused scores (the library's default):".into());
    for sizes in MEMORY_SIZES {
        line(memory_row(sizes, AdditiveScoring::Fused));
    }
    // ANCHOR_END: tour_fused

    line("\n== 6. Size mistakes".into());
    // ANCHOR: tour_mistakes
    let (library, [queries, keys, values, lens]) = batched_example();
    let mask = Mask::valid_lens(&lens);
    // Long messages broken at spaces to the page's width.
    let wrap = |message: String| lesson::wrap(&message, lesson::COLUMNS);
    // Keys of 5 features for a module built with key_size = 6.
    line(wrap(panic_message(|| {
        library.forward(&queries, &Tensor::randn([2, 4, 5]), &values, &mask);
    })));
    // 5 values for 4 keys.
    line(wrap(panic_message(|| {
        library.forward(&queries, &keys, &Tensor::randn([2, 5, 7]), &mask);
    })));
    // Adding queries to keys without projecting them first.
    line(wrap(panic_message(|| {
        let _ = queries.unsqueeze(2) + keys.unsqueeze(1);
    })));
    // A d2l-shaped query, [B, 1, q_size], handed to the one-query-per-step form.
    let (decoder, [query, keys, _]) = decoder_example();
    line(wrap(panic_message(|| {
        decoder.forward(&query.unsqueeze(1), &keys, &keys, &Mask::none());
    })));
    // ANCHOR_END: tour_mistakes

    line("\n== 7. Lighter forms".into());
    line(light::toy_table());
    line(light::counts_table());
    out
}

/// A weights matrix `[rows, cols]` as a text table with labelled rows and columns,
/// three decimals each.
pub fn table(weights: &Tensor, rows: &[String], cols: &[String]) -> String {
    let values = weights.to_vec();
    let width = rows.iter().map(String::len).max().unwrap_or(0);
    let mut text = format!("{:width$}", "");
    for c in cols {
        text.push_str(&format!(" {c:>6}"));
    }
    for (r, row) in rows.iter().zip(values.chunks(cols.len())) {
        text.push_str(&format!("\n{r:<width$}"));
        for v in row {
            text.push_str(&format!(" {v:>6.3}"));
        }
    }
    text
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch05-additive-attention.md")]
struct Book;
