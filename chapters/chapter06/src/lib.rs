//! # Chapter 6: scaled dot-product attention
//!
//! The code of the sixth lesson (the page is `book/src/ch06-scaled-dot-product.md`):
//!
//! 1. [`attention_step_by_step`]: `softmax(Q Kᵀ / √d) V` written with the engine's
//!    ops, keeping every intermediate ([`Steps`]) so its shape can be printed and
//!    checked, and the same numbers as [`attention::scaled_dot_product_attention`]
//!    and [`attention::DotProductAttention`].
//! 2. Why `√d`, measured ([`why_sqrt_d`]): [`random_scores`] of unit-variance queries
//!    and keys, what each [`Scale`] makes of them ([`softmax_saturation`]: the
//!    variance, the largest weight, the gradient that reaches the softmax's input),
//!    over `d = 4, 8, …, 1024` ([`scaling_study`]), and the charts
//!    ([`variance_chart`], [`saturation_chart`], [`gradient_chart`]).
//! 3. [`sentence_weights`] and [`weights_heatmap`]: the weights of six tokens with
//!    and without the scale, as a heatmap.
//! 4. [`dropout_on_weights`]: dropout on the attention weights, in training mode and
//!    after `eval()` ([`DroppedWeights`]).
//! 5. Additive against dot-product attention on the same shapes ([`side_by_side`]):
//!    [`SameShapes`], parameters and [`forward_peak_bytes`] ([`Costs`]); the example
//!    `compare` adds the time on your machine.
//! 6. The pitfalls ([`pitfalls`]): the softmax over the wrong dimension
//!    ([`weights_over_the_wrong_dim`], caught by [`rows_sum_to_one`]), and the
//!    missing transpose of the keys ([`scores_without_transpose`], caught by
//!    [`panic_message`] when the shapes disagree and by a comparison when they happen
//!    to agree).
//! 7. [`tour`]: everything the page prints (`cargo run -p chapter06`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use attention::prelude::*;

pub mod pitfalls;
pub mod side_by_side;
pub mod why_sqrt_d;

pub use pitfalls::{
    largest_difference, panic_message, rows_sum_to_one, scores_without_transpose,
    weights_over_the_wrong_dim,
};
pub use side_by_side::{Costs, SameShapes, forward_peak_bytes};
pub use why_sqrt_d::{
    SCORED_BATCH, SCORED_KEYS, SCORED_QUERIES, STUDY_DIMS, STUDY_SEED, Saturation,
    Scale, ScaleRow, gradient_chart, median, random_scores, saturation_chart,
    scaling_study, softmax_saturation, variance, variance_chart,
};

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
    "chapter06: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

// ANCHOR: steps
/// Every intermediate of scaled dot-product attention, in the order it is computed.
#[derive(Clone, Debug)]
pub struct Steps {
    /// The keys with their last two dimensions swapped: `[B, d, K]`.
    pub keys_t: Tensor,
    /// The dot product of every query with every key, `q · k`: `[B, Q, K]`.
    pub scores: Tensor,
    /// The scores times `1/√d`: `[B, Q, K]`.
    pub scaled: Tensor,
    /// The masked softmax of the scaled scores over the keys: `[B, Q, K]`.
    pub weights: Tensor,
    /// The weighted sum of the values for every query: `[B, Q, dv]`.
    pub output: Tensor,
}
// ANCHOR_END: steps

// ANCHOR: step_by_step
/// Scaled dot-product attention written out, one op per line:
/// `output = masked_softmax(Q Kᵀ / √d) V`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, d]` |
/// | `keys` | `[B, K, d]` |
/// | `values` | `[B, K, dv]` |
/// | `mask` | which keys each query may see (chapter 4) |
pub fn attention_step_by_step(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    mask: &Mask,
) -> Steps {
    let d = queries.size(-1);
    let keys_t = keys.transpose(1, 2); //         [B, K, d] -> [B, d, K]
    let scores = queries.matmul(&keys_t); //      [B, Q, d] x [B, d, K] -> [B, Q, K]
    let scale = 1.0 / (d as f32).sqrt();
    let scaled = &scores * scale; //              [B, Q, K]
    // [B, Q, K], over the keys
    let weights = masked_softmax(&scaled, mask, Fill::Safe);
    let output = weights.bmm(values); //          [B, Q, K] x [B, K, dv] -> [B, Q, dv]
    Steps {
        keys_t,
        scores,
        scaled,
        weights,
        output,
    }
}
// ANCHOR_END: step_by_step

/// The six tokens of the heatmap, as its row (query) and column (key) labels.
pub const TOKENS: [&str; 6] = ["the", "cat", "sat", "on", "a", "mat"];

/// The size of the queries and keys of the heatmap's example.
pub const SENTENCE_D: usize = 64;

// ANCHOR: sentence_weights
/// The attention weights of the six [`TOKENS`] over each other, without the scale and
/// with it: `(weights of q · k, weights of q · k / √d)`, each `[1, 6, 6]`.
///
/// The queries and keys are drawn at random with unit-variance entries, `d = 64`:
/// stand-ins for the projections a trained model would compute, with the spread such
/// projections start with.
pub fn sentence_weights() -> (Tensor, Tensor) {
    manual_seed(6);
    let n = TOKENS.len();
    let queries = Tensor::randn([1, n, SENTENCE_D]);
    let keys = Tensor::randn([1, n, SENTENCE_D]);
    let values = keys.clone(); // any values: only the weights are drawn
    let unscaled = DotProductAttention::new(DotProductAttentionConfig {
        scale: Some(1.0), // q · k as it is
        ..Default::default()
    });
    // 1/√d, the default scale
    let scaled = DotProductAttention::new(DotProductAttentionConfig::default());
    unscaled.forward(&queries, &keys, &values, &Mask::none());
    scaled.forward(&queries, &keys, &values, &Mask::none());
    let weights =
        |m: &DotProductAttention| m.last_attention_weights().expect("ran forward");
    (weights(&unscaled), weights(&scaled))
}
// ANCHOR_END: sentence_weights

/// The heatmap of [`sentence_weights`]: two panels, without and with the scale, on
/// one colour scale from 0 to 1, query tokens down and key tokens across.
pub fn weights_heatmap() -> String {
    let (unscaled, scaled) = sentence_weights();
    let labels: Vec<String> = TOKENS.iter().map(|t| t.to_string()).collect();
    let (unscaled, scaled) = (unscaled.to_vec(), scaled.to_vec());
    figures::heatmap(&figures::Heatmap {
        title: "attention weights of six tokens, d = 64",
        row_desc: "query",
        col_desc: "key",
        panels: &[
            figures::Panel {
                title: "softmax(q · k)".into(),
                values: &unscaled,
                row_labels: &labels,
                col_labels: &labels,
            },
            figures::Panel {
                title: "softmax(q · k / √d)".into(),
                values: &scaled,
                row_labels: &labels,
                col_labels: &labels,
            },
        ],
        range: Some((0.0, 1.0)),
    })
}

/// What dropout does to the attention weights of one module: [`dropout_on_weights`].
#[derive(Clone, Debug)]
pub struct DroppedWeights {
    /// The weights the softmax gave, `[1, Q, K]` (what `last_attention_weights`
    /// returns).
    pub before: Tensor,
    /// The weights the values were averaged with, in training mode: `[1, Q, K]`.
    pub training: Tensor,
    /// The weights the values were averaged with after `eval()`: `[1, Q, K]`.
    pub eval: Tensor,
}

// ANCHOR: dropout
/// Runs a [`DotProductAttention`] with dropout `p` on three queries and five keys,
/// first in training mode (a new module trains), then after `eval()`.
///
/// The values are the identity matrix, so the output *is* the weights the values were
/// averaged with: row `i` of `weights · I` is row `i` of the weights.
pub fn dropout_on_weights(p: f32) -> DroppedWeights {
    manual_seed(3);
    let (q, k) = (3, 5);
    let queries = Tensor::randn([1, q, 8]);
    let keys = Tensor::randn([1, k, 8]);
    let identity: Vec<f32> = (0..k * k)
        .map(|i| if i / k == i % k { 1.0 } else { 0.0 })
        .collect();
    let values = Tensor::from_vec(identity, [1, k, k]);

    let mut attention = DotProductAttention::new(DotProductAttentionConfig {
        dropout: p,
        ..Default::default()
    });
    let training = attention.forward(&queries, &keys, &values, &Mask::none());
    let before = attention.last_attention_weights().expect("ran forward");
    attention.eval(); // dropout off
    let eval = attention.forward(&queries, &keys, &values, &Mask::none());
    DroppedWeights {
        before,
        training,
        eval,
    }
}
// ANCHOR_END: dropout

/// Everything the chapter's page shows, in order: `cargo run -p chapter06`
/// prints it, and a test checks that the page quotes it exactly. No timing is printed
/// here (the `compare` example measures time).
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_steps
    manual_seed(0);
    let queries = Tensor::randn([2, 3, 8]); // B = 2, Q = 3, d = 8
    let keys = Tensor::randn([2, 4, 8]); //    B = 2, K = 4, d = 8
    let values = Tensor::randn([2, 4, 5]); //  B = 2, K = 4, dv = 5
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![4.0, 2.0], [2]));
    let s = attention_step_by_step(&queries, &keys, &values, &lens);
    line(format!(
        "queries {:?}, keys {:?}, values {:?}",
        queries.shape(),
        keys.shape(),
        values.shape()
    ));
    line(format!("keys_t  {:?}", s.keys_t.shape()));
    line(format!("scores  {:?}", s.scores.shape()));
    line(format!(
        "scaled  {:?} (x 1/√8 = {:.4})",
        s.scaled.shape(),
        1.0 / 8f32.sqrt()
    ));
    line(format!("weights {:?}", s.weights.shape()));
    line(format!("output  {:?}", s.output.shape()));
    line(format!("weights = {:.3}", s.weights));
    // ANCHOR_END: tour_steps

    // ANCHOR: tour_same_numbers
    let (output, weights) =
        scaled_dot_product_attention(&queries, &keys, &values, &lens);
    let module = DotProductAttention::new(DotProductAttentionConfig::default());
    let module_output = module.forward(&queries, &keys, &values, &lens);
    line(format!(
        "same as scaled_dot_product_attention: weights {}, output {}",
        weights.to_vec() == s.weights.to_vec(),
        output.to_vec() == s.output.to_vec()
    ));
    line(format!(
        "same as DotProductAttention: output {}",
        module_output.to_vec() == s.output.to_vec()
    ));
    // ANCHOR_END: tour_same_numbers

    // ANCHOR: tour_study
    let rows = scaling_study();
    line(format!(
        "scores [{SCORED_BATCH}, {SCORED_QUERIES}, {SCORED_KEYS}]: {} dot products per d, entries ~ N(0, 1)",
        SCORED_BATCH * SCORED_QUERIES * SCORED_KEYS
    ));
    line(format!(
        "{:>5} {:>9} {:>11} {:>10}",
        "d", "var(q·k)", "var(q·k/√d)", "var(q·k/d)"
    ));
    for r in &rows {
        let v = |s: Scale| r.get(s).variance;
        line(format!(
            "{:>5} {:>9.1} {:>11.3} {:>10.6}",
            r.d,
            v(Scale::Unscaled),
            v(Scale::InvSqrtD),
            v(Scale::InvD)
        ));
    }
    line(format!(
        "{:>5} {:>25} | {:>28}",
        "", "mean largest weight", "median gradient norm"
    ));
    line(format!(
        "{:>5} {:>7} {:>8} {:>8} | {:>8} {:>9} {:>9}",
        "d", "q·k", "q·k/√d", "q·k/d", "q·k", "q·k/√d", "q·k/d"
    ));
    for r in &rows {
        let m = |s: Scale| r.get(s).max_weight;
        let g = |s: Scale| r.get(s).grad_norm;
        line(format!(
            "{:>5} {:>7.3} {:>8.3} {:>8.3} | {:>8.2e} {:>9.2e} {:>9.2e}",
            r.d,
            m(Scale::Unscaled),
            m(Scale::InvSqrtD),
            m(Scale::InvD),
            g(Scale::Unscaled),
            g(Scale::InvSqrtD),
            g(Scale::InvD)
        ));
    }
    // ANCHOR_END: tour_study

    // ANCHOR: tour_sentence
    let (unscaled, scaled) = sentence_weights();
    let largest = |w: &Tensor| -> Vec<String> {
        w.max_dim(-1)
            .to_vec()
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect()
    };
    line(format!("tokens: {}", TOKENS.join(" ")));
    line(format!(
        "largest weight per query, q · k:      {}",
        largest(&unscaled).join(" ")
    ));
    line(format!(
        "largest weight per query, q · k / √d: {}",
        largest(&scaled).join(" ")
    ));
    // ANCHOR_END: tour_sentence

    // ANCHOR: tour_dropout
    let dropped = dropout_on_weights(0.5);
    line(format!("before dropout = {:.3}", dropped.before));
    line(format!("training (p = 0.5) = {:.3}", dropped.training));
    line(format!(
        "row sums in training = {:.3}",
        dropped.training.sum_dim(-1)
    ));
    line(format!(
        "after eval(): equal to the weights before dropout: {}",
        dropped.eval.to_vec() == dropped.before.to_vec()
    ));
    // ANCHOR_END: tour_dropout

    // ANCHOR: tour_side_by_side
    let (batch, d) = (2, 32);
    let shapes = SameShapes::new(batch, 8, d);
    line(format!(
        "parameters (d = h = {d}): additive {}, dot product {}",
        shapes.additive.num_parameters(),
        shapes.dot_product.num_parameters()
    ));
    line(format!(
        "{:>4} {:>16} {:>16} {:>6}",
        "n", "additive peak", "dot-product peak", "ratio"
    ));
    for n in [8, 16, 32, 64] {
        let costs = SameShapes::new(batch, n, d).peak_bytes();
        line(format!(
            "{n:>4} {:>16} {:>16} {:>6.1}",
            engine::memory::human(costs.additive),
            engine::memory::human(costs.dot_product),
            costs.additive as f64 / costs.dot_product as f64
        ));
    }
    // ANCHOR_END: tour_side_by_side

    // ANCHOR: tour_wrong_dim
    let wrong = weights_over_the_wrong_dim(&queries, &keys);
    line(format!(
        "softmax(1): weights {:?}, rows sum to one: {}",
        wrong.shape(),
        rows_sum_to_one(&wrong)
    ));
    line(format!("sums over the keys = {:.3}", wrong.sum_dim(-1)));
    line(format!("sums over the queries = {:.3}", wrong.sum_dim(1)));
    line(format!(
        "softmax(-1): rows sum to one: {}",
        rows_sum_to_one(&s.weights)
    ));
    // ANCHOR_END: tour_wrong_dim

    // ANCHOR: tour_transpose
    let message = panic_message(|| {
        let _ = scores_without_transpose(
            &Tensor::zeros([2, 3, 8]),
            &Tensor::zeros([2, 4, 8]),
        );
    });
    line(lesson::wrap(&message, lesson::COLUMNS));
    let square_q = Tensor::randn([1, 2, 4]); // Q = 2, d = 4
    // K = 4 = d: the wrong product has the right shape
    let square_k = Tensor::randn([1, 4, 4]);
    let wrong = scores_without_transpose(&square_q, &square_k);
    let right = square_q.matmul(&square_k.transpose(1, 2));
    let gap = largest_difference(&wrong, &right);
    line(format!(
        "K = d = 4: no error, shape {:?}, largest |wrong - right| = {gap:.3}",
        wrong.shape()
    ));
    // ANCHOR_END: tour_transpose

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch06-scaled-dot-product.md")]
struct Book;
