//! # Chapter 7: Multi-head attention
//!
//! The code of the seventh lesson (the page is
//! `book/src/ch07-multi-head-attention.md`):
//!
//! 1. [`split_heads`] and [`merge_heads`]: `[B, T, H·d] ↔ [B·H, T, d]` with `reshape`
//!    and `permute`, the same as [`attention::MultiHeadAttention::transpose_qkv`] and
//!    [`transpose_output`](attention::MultiHeadAttention::transpose_output); and
//!    [`MultiHeadByHand`], d2l's multi-head attention one op at a time, every shape
//!    recorded in a [`Trace`] and every number equal to the library's.
//! 2. The missing `permute` ([`split_without_permute`]): the right shape, the wrong
//!    heads.
//! 3. One heatmap panel per head: [`designed_heads`], three heads whose weights are
//!    written by hand (previous token, same word, next token), drawn by
//!    [`heads_heatmap`].
//! 4. The valid lengths, once per head ([`LensOrder`]): `repeat_interleave`, not a
//!    tiling, and what a tiling changes ([`two_sentences_weights`], drawn by
//!    [`tiled_mask_heatmap`]).
//! 5. The first article's multi-head additive attention beside d2l's scaled form
//!    ([`SideBySide`]), with parameter counts against [`scaled_parameter_formula`]
//!    and [`additive_parameter_formula`].
//! 6. The number of heads against the size of each head, the width fixed
//!    ([`head_count_study`]).
//! 7. [`tour`]: everything the page prints (`cargo run -p chapter07`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use attention::prelude::*;

pub mod designed;
pub mod heads;
pub mod side_by_side;

pub use designed::{
    DESIGNED_HEADS, HEAD_ROLES, HEAD_SIZE, MATCH_SCORE, PAD, POSITIONS, SENTENCE,
    SHORT_SENTENCE, TOKEN_SIZE, WORDS, designed_heads, embed, heads_heatmap, labels,
    sentence_heads, tiled_mask_heatmap, two_sentences_weights,
};
pub use heads::{
    Attended, LensOrder, MultiHeadByHand, Reshaper, merge_heads,
    merge_without_permute, split_heads, split_without_permute,
};
pub use lesson::{Step, Trace, panic_message};
pub use side_by_side::{
    BothForms, HeadCountRow, SideBySide, Sizes, additive_parameter_formula,
    head_count_study, largest_difference, scaled_parameter_formula,
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
    "chapter07: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// The sizes of the running example: queries of 10 features, keys and values of 8, a
/// hidden size of 12 shared by 3 heads of 4.
pub const EXAMPLE_SIZES: Sizes = Sizes {
    query_size: 10,
    key_size: 8,
    value_size: 8,
    num_hiddens: 12,
    num_heads: 3,
};

/// The running example's inputs.
#[derive(Clone, Debug)]
pub struct Example {
    /// `[B, Q, query_size] = [2, 5, 10]`.
    pub queries: Tensor,
    /// `[B, K, key_size] = [2, 7, 8]`.
    pub keys: Tensor,
    /// `[B, K, value_size] = [2, 7, 8]`.
    pub values: Tensor,
    /// One valid length per example, `[7, 3]`: example 1 has 3 real keys.
    pub lens: Tensor,
}

// ANCHOR: example
/// The running example: a batch of `B = 2`, `Q = 5` queries, `K = 7` keys and values,
/// and a d2l module with 3 heads of `d = 4` (every size different, so that each
/// number in a shape says which dimension it is), in evaluation mode.
pub fn example() -> (Example, MultiHeadAttention) {
    manual_seed(0);
    let s = EXAMPLE_SIZES;
    let inputs = Example {
        queries: Tensor::randn([2, 5, s.query_size]),
        keys: Tensor::randn([2, 7, s.key_size]),
        values: Tensor::randn([2, 7, s.value_size]),
        lens: Tensor::from_vec(vec![7.0, 3.0], [2]),
    };
    let mut mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: s.num_hiddens,
        num_heads: s.num_heads,
        query_size: Some(s.query_size),
        key_size: Some(s.key_size),
        value_size: Some(s.value_size),
        ..Default::default()
    });
    mha.eval();
    (inputs, mha)
}
// ANCHOR_END: example

/// The word with the largest of the five word features `features[0..5]` of a head's
/// slice of the designed module's output, and that feature.
fn strongest_word(features: &[f32]) -> (&'static str, f32) {
    let (w, &value) = features[..WORDS.len()]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .expect("five words");
    (WORDS[w], value)
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter07`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_trace
    let (ex, mha) = example();
    let h = mha.num_heads();
    let by_hand = MultiHeadByHand::from_state_dict(&mha.state_dict(), h);
    let mut trace = Trace::default();
    let mine = by_hand.forward(
        &ex.queries,
        &ex.keys,
        &ex.values,
        &ex.lens,
        LensOrder::Interleaved,
        &mut trace,
    );
    let library = mha.forward(
        &ex.queries,
        &ex.keys,
        &ex.values,
        &Mask::valid_lens(&ex.lens),
    );
    // [B, H, Q, K]
    let library_weights = mha.last_attention_weights().expect("ran forward");
    line("== 1. Splitting and merging heads, step by step".into());
    line(trace.to_string().trim_end().into());
    line(format!(
        "largest difference from MultiHeadAttention: output {}, weights {}",
        largest_difference(&mine.output, &library),
        largest_difference(
            &mine.weights.reshape(library_weights.shape()),
            &library_weights
        )
    ));
    line(format!(
        "last_attention_weights()  {:?}  [B, H, Q, K]",
        library_weights.shape()
    ));
    let projected = Tensor::randn([2, 5, 12]);
    line(format!(
        "split_heads = transpose_qkv: {}, merge_heads = transpose_output: {}",
        split_heads(&projected, h).to_vec() == mha.transpose_qkv(&projected).to_vec(),
        merge_heads(&split_heads(&projected, h), h).to_vec()
            == mha
                .transpose_output(&mha.transpose_qkv(&projected))
                .to_vec()
    ));
    // ANCHOR_END: tour_trace

    // ANCHOR: tour_permute
    line(String::new());
    line("== 2. The missing permute".into());
    let x = Tensor::arange(8).reshape([1, 2, 4]); // B = 1, T = 2 tokens, H = 2 heads of d = 2
    line(format!("x = {x:.0}"));
    line(format!("split_heads(x, 2) = {:.0}", split_heads(&x, 2)));
    line(format!(
        "x.reshape(2, 2, 2) = {:.0}",
        split_without_permute(&x, 2)
    ));
    let wrong = by_hand.forward_split_by(
        split_without_permute,
        merge_without_permute,
        &ex.queries,
        &ex.keys,
        &ex.values,
        &ex.lens,
    );
    line(format!(
        "reshape only: output {:?}, largest difference from MultiHeadAttention {:.4}",
        wrong.shape(),
        largest_difference(&wrong, &library)
    ));
    // ANCHOR_END: tour_permute

    // ANCHOR: tour_heads
    line(String::new());
    line("== 3. One heatmap panel per head".into());
    let (output, weights) = sentence_heads(); // [1, 6, 27], [1, 3, 6, 6]
    let (w, o) = (weights.to_vec(), output.to_vec());
    let n = POSITIONS;
    line(format!(
        "{:<6} {:<20} {:<20} {}",
        "query", "head 0: previous", "head 1: same word", "head 2: next"
    ));
    for (q, token) in SENTENCE.iter().enumerate() {
        let cells: Vec<String> = (0..DESIGNED_HEADS)
            .map(|head| {
                let row = &w[(head * n + q) * n..][..n];
                let (key, weight) = row
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(b.1))
                    .expect("six keys");
                format!("{:<20}", format!("{:<4} {weight:.3}", SENTENCE[key]))
            })
            .collect();
        line(format!("{token:<6} {}", cells.join(" ").trim_end()));
    }
    let e4 = libm::expf(MATCH_SCORE);
    line(format!(
        "one match in six: e⁴/(e⁴ + 5) = {:.3}, each other key 1/(e⁴ + 5) = {:.3};",
        e4 / (e4 + 5.0),
        1.0 / (e4 + 5.0),
    ));
    line(format!(
        "two matches: e⁴/(2e⁴ + 4) = {:.3}",
        e4 / (2.0 * e4 + 4.0)
    ));
    line(
        "what each head's slice of the output holds (W_o = I): the strongest word"
            .into(),
    );
    for (t, token) in SENTENCE.iter().enumerate() {
        let slices: Vec<String> = (0..DESIGNED_HEADS)
            .map(|head| {
                let (word, value) = strongest_word(
                    &o[t * DESIGNED_HEADS * HEAD_SIZE + head * HEAD_SIZE..],
                );
                format!("{word:<4} {value:.3}")
            })
            .collect();
        line(format!("{token:<6} {}", slices.join(" | ")));
    }
    manual_seed(1);
    let fresh = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: DESIGNED_HEADS * HEAD_SIZE,
        num_heads: DESIGNED_HEADS,
        query_size: Some(TOKEN_SIZE),
        key_size: Some(TOKEN_SIZE),
        value_size: Some(TOKEN_SIZE),
        ..Default::default()
    });
    let x = embed(&[&SENTENCE]);
    fresh.forward(&x, &x, &x, &Mask::none());
    let largest = fresh
        .last_attention_weights()
        .expect("ran forward")
        .max_dim(-1) // [1, H, Q]
        .mean_dim(-1) // [1, H]
        .to_vec();
    let largest: Vec<String> = largest.iter().map(|v| format!("{v:.3}")).collect();
    line(format!(
        "freshly initialised, mean largest weight per head: {} (uniform: {:.3})",
        largest.join(" "),
        1.0 / n as f32
    ));
    // ANCHOR_END: tour_heads

    // ANCHOR: tour_mask
    line(String::new());
    line("== 4. The mask, once per head".into());
    let orders = [LensOrder::Interleaved, LensOrder::Tiled];
    let [right, tiled] = orders.map(|order| {
        let lens = order.repeat(&ex.lens, h).to_vec();
        lens.iter().map(|&l| l as usize).collect::<Vec<_>>()
    });
    for (order, lens) in orders.iter().zip([&right, &tiled]) {
        line(format!("{:<28} = {lens:?}", order.expression()));
    }
    line("row  example  head  interleaved  tiled".into());
    for row in 0..right.len() {
        let verdict = if right[row] == tiled[row] {
            ""
        } else {
            "  wrong"
        };
        line(format!(
            "{row:>3}  {:>7}  {:>4}  {:>11}  {:>5}{verdict}",
            row / h,
            row % h,
            right[row],
            tiled[row]
        ));
    }
    let tiled_output = by_hand
        .forward(
            &ex.queries,
            &ex.keys,
            &ex.values,
            &ex.lens,
            LensOrder::Tiled,
            &mut Trace::default(),
        )
        .output;
    line(format!(
        "largest difference from MultiHeadAttention: interleaved {}, tiled {:.4}",
        largest_difference(&mine.output, &library),
        largest_difference(&tiled_output, &library)
    ));
    let equal = Tensor::from_vec(vec![5.0, 5.0], [2]);
    let [a, b] = orders.map(|order| {
        let (q, k, v) = (&ex.queries, &ex.keys, &ex.values);
        (by_hand.forward(q, k, v, &equal, order, &mut Trace::default())).output
    });
    line(format!(
        "lengths [5, 5]: tiled against interleaved, largest difference {}",
        largest_difference(&a, &b)
    ));
    // ANCHOR_END: tour_mask

    // ANCHOR: tour_mask_sentences
    let [right_w, tiled_w] = orders.map(two_sentences_weights);
    let the = |w: &Tensor| {
        w.narrow(0, 0, 1)
            .narrow(1, 1, 1)
            .narrow(2, 4, 1)
            .reshape([POSITIONS])
    };
    line(format!("keys: {}", labels(&SENTENCE).join(" ")));
    line("example 0, head 1, query 4 (\"the\"):".into());
    line(format!("  interleaved: {:.3}", the(&right_w)));
    line(format!("  tiled:       {:.3}", the(&tiled_w)));
    // ANCHOR_END: tour_mask_sentences

    // ANCHOR: tour_side_by_side
    line(String::new());
    line("== 5. Multi-head additive attention beside the scaled form".into());
    let s = EXAMPLE_SIZES;
    let both = SideBySide::new(s);
    let query = ex.queries.narrow(1, 0, 1).squeeze(1); // [B, query_size]: one decoder step
    let r = no_grad(|| both.run(&query, &ex.keys, &ex.values, &ex.lens));
    let row = |what: &str, scaled: String, additive: String| {
        format!("{what:<18} {scaled:<20} {additive}")
    };
    line(row(
        "",
        "MultiHeadAttention".into(),
        "MultiHeadAdditiveAttention".into(),
    ));
    line(row(
        "query",
        format!("{:?}", query.unsqueeze(1).shape()),
        format!("{:?}", query.shape()),
    ));
    line(row(
        "keys, values",
        format!("{:?}", ex.keys.shape()),
        format!("{:?}", ex.values.shape()),
    ));
    line(row(
        "output",
        format!("{:?}", r.scaled_output.shape()),
        format!("{:?}", r.additive_output.shape()),
    ));
    line(row(
        "weights",
        format!("{:?}", r.scaled_weights.shape()),
        format!("{:?}", r.additive_weights.shape()),
    ));
    line(row(
        "parameters",
        both.scaled.num_parameters().to_string(),
        both.additive.num_parameters().to_string(),
    ));
    line(row(
        "by the formula",
        scaled_parameter_formula(s, false).to_string(),
        additive_parameter_formula(s).to_string(),
    ));
    line("weights of example 1 (3 real keys), one row per head:".into());
    line(format!(
        "scaled   = {:.3}",
        r.scaled_weights.narrow(0, 1, 1).reshape([h, 7])
    ));
    line(format!(
        "additive = {:.3}",
        r.additive_weights.narrow(0, 1, 1).reshape([h, 7])
    ));
    // ANCHOR_END: tour_side_by_side

    // ANCHOR: tour_head_count
    line(String::new());
    line(
        "== 6. Heads against head size, num_hiddens = 12 (B = 2, T = 6, self-attention)"
            .into(),
    );
    line(format!(
        "{:>2} {:>2} {:>6} {:>13} {:>15} {:>7} {:>13} {:>11}",
        "H",
        "d",
        "1/√d",
        "scaled params",
        "additive params",
        "weights",
        "multiply-adds",
        "vs one head"
    ));
    for r in head_count_study(2, 6, 12, &[1, 2, 3, 4, 6, 12]) {
        line(format!(
            "{:>2} {:>2} {:>6.3} {:>13} {:>15} {:>7} {:>13} {:>11.4}",
            r.num_heads,
            r.head_size,
            1.0 / (r.head_size as f32).sqrt(),
            r.scaled_parameters,
            r.additive_parameters,
            r.weights,
            r.score_multiply_adds,
            r.difference_from_one_head
        ));
    }
    // ANCHOR_END: tour_head_count

    // ANCHOR: tour_mistakes
    line(String::new());
    line("== 7. Mistakes".into());
    let wrapped = |message: String| lesson::wrap(&message, lesson::COLUMNS);
    line(wrapped(panic_message(|| {
        let _ = MultiHeadAttention::new(MultiHeadAttentionConfig {
            num_hiddens: 10,
            num_heads: 3,
            ..Default::default()
        });
    })));
    // [B·H]: the module repeats the lengths itself
    let repeated = ex.lens.repeat_interleave(h, 0);
    line(wrapped(panic_message(|| {
        let _ = mha.forward(
            &ex.queries,
            &ex.keys,
            &ex.values,
            &Mask::valid_lens(&repeated),
        );
    })));
    // ANCHOR_END: tour_mistakes

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch07-multi-head-attention.md")]
struct Book;
