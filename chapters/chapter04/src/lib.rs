//! # Chapter 4: masked softmax
//!
//! The code of the fourth lesson (the page is `book/src/ch04-masked-softmax.md`):
//!
//! 1. [`padded_batch`] and [`token_scores`]: why a batch needs a mask, on two
//!    sentences padded to one length.
//! 2. [`sequence_keep`], [`sequence_mask`], [`lens_per_row`] and
//!    [`masked_softmax_by_hand`]: d2l's masked softmax written from scratch with
//!    engine ops, for valid lengths `[B]` and `[B, Q]`, checked against the library's
//!    [`attention::masked_softmax`].
//! 3. [`a_training_step`] and [`FloatFormat`]: what the fill value (`-1e6`, `-1e9`,
//!    `-inf`) does to a fully masked row, to its gradients, and in 16-bit floats.
//! 4. [`softmax_over_visible`]: a softmax that leaves hidden keys out without any
//!    sentinel value, the idea of the library's `Fill::Safe`.
//! 5. [`decoder_mask`]: causal order and padding combined with `&`, and the fully
//!    masked rows a left-padded decoder batch has.
//! 6. [`causal_padding_bias`], [`BiasTable`] and [`mask_bytes`]: masks of fixed-length
//!    batches built once and looked up at each call, and what that saves.
//! 7. [`valid_lens_figure`] and [`causal_figure`]: the page's heatmaps.
//! 8. [`tour`]: everything the page prints (`cargo run -p chapter04`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use attention::{D2L_FILL, Fill, Mask, masked_softmax};
use engine::Tensor;
use lesson::panic_message;

mod batch;
mod by_hand;
mod fill;
mod precomputed;

pub use batch::{
    PAD, VOCAB, causal_figure, decoder_mask, decoder_weights, embedding_table,
    left_padded_sequence, padded_batch, padded_batch_lens, padded_batch_scores,
    token_scores, tokens, valid_lens_figure,
};
pub use by_hand::{
    lens_per_row, masked_softmax_by_hand, sequence_keep, sequence_mask,
    softmax_over_visible,
};
pub use fill::{BF16, F16, F32, FloatFormat, StepGradients, a_training_step};
pub use precomputed::{BiasTable, attend, causal_padding_bias, mask_bytes};

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
    "chapter04: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// Scores in, weights out: one way of masking, as the tour's fill table compares
/// them.
type Attend<'a> = &'a dyn Fn(&Tensor) -> Tensor;

/// Values as rows of `row_len`, four decimals: `[0.2689 0.7311 0.0000] [NaN NaN
/// NaN]`.
fn rows(values: &[f32], row_len: usize) -> String {
    values
        .chunks(row_len)
        .map(|row| {
            let row: Vec<String> = row.iter().map(|v| format!("{v:.4}")).collect();
            format!("[{}]", row.join(" "))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter04`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    line("== 1. A padded batch".into());
    // ANCHOR: tour_batch
    // [2, 4]: "the cat sat <pad>" and "a dog <pad> <pad>"
    let ids = padded_batch();
    let scores = padded_batch_scores(); //        [2, 4, 4]
    line(format!(
        "ids.shape() = {:?}, scores.shape() = {:?}",
        ids.shape(),
        scores.shape()
    ));
    // The weight each query of "a dog <pad> <pad>" gives the two <pad> keys.
    let on_padding =
        |w: &Tensor| w.narrow(0, 1, 1).narrow(2, 2, 2).sum_dim(-1).squeeze(0);
    line(format!(
        "no mask:   weight on <pad> = {:.4}",
        on_padding(&scores.softmax(-1))
    ));
    let lens = padded_batch_lens(); //            [2]: 3 and 2 real tokens
    let masked = masked_softmax(&scores, &Mask::valid_lens(&lens), Fill::Safe);
    line(format!(
        "with mask: weight on <pad> = {:.4}",
        on_padding(&masked)
    ));
    // ANCHOR_END: tour_batch

    line("== 2. Masked softmax by hand, step by step".into());
    // ANCHOR: tour_steps
    engine::manual_seed(1);
    let x = Tensor::rand([2, 2, 4], 0.0, 1.0); // d2l: torch.rand(2, 2, 4)
    let valid_lens = Tensor::from_vec(vec![2.0, 3.0], [2]); // [B]
    line(format!(
        "x.shape() = {:?}, valid_lens = {valid_lens:.0}",
        x.shape()
    ));
    let lens = lens_per_row(&valid_lens, x.size(1));
    line(format!("lens_per_row = {lens:.0}"));
    let x_rows = x.reshape((-1, x.size(2)));
    line(format!("rows.shape() = {:?}", x_rows.shape()));
    line(format!(
        "keep = {:.0}",
        sequence_keep(&lens, x_rows.size(1))
    ));
    line(format!(
        "filled = {:.4}",
        sequence_mask(&x_rows, &lens, D2L_FILL)
    ));
    let weights = masked_softmax_by_hand(&x, Some(&valid_lens), D2L_FILL);
    line(format!("weights = {weights:.4}"));
    // ANCHOR_END: tour_steps

    // ANCHOR: tour_per_query
    let per_query = Tensor::from_vec(vec![1.0, 3.0, 2.0, 4.0], [2, 2]); // [B, Q]
    let weights_per_query = masked_softmax_by_hand(&x, Some(&per_query), D2L_FILL);
    line(format!(
        "weights (lengths per query) = {weights_per_query:.4}"
    ));
    // ANCHOR_END: tour_per_query

    // ANCHOR: tour_library
    let library = masked_softmax(&x, &Mask::valid_lens(&valid_lens), Fill::D2l);
    let same = weights.to_vec() == library.to_vec();
    line(format!("by hand == library, lengths [B]:    {same}"));
    let library = masked_softmax(&x, &Mask::valid_lens(&per_query), Fill::D2l);
    let same = weights_per_query.to_vec() == library.to_vec();
    line(format!("by hand == library, lengths [B, Q]: {same}"));
    // ANCHOR_END: tour_library

    line("== 3. Fill values: a row with 2 visible keys, a row with none".into());
    // ANCHOR: tour_fill
    let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [2, 1, 3]);
    let lens = Tensor::from_vec(vec![2.0, 0.0], [2]); // example 1 may see no key
    let d2l = |s: &Tensor| masked_softmax_by_hand(s, Some(&lens), -1e6);
    let article = |s: &Tensor| masked_softmax_by_hand(s, Some(&lens), -1e9);
    let neg_inf =
        |s: &Tensor| masked_softmax_by_hand(s, Some(&lens), f32::NEG_INFINITY);
    let safe = |s: &Tensor| masked_softmax(s, &Mask::valid_lens(&lens), Fill::Safe);
    let fills: [(&str, Attend<'_>); 4] = [
        ("-1e6 (d2l)", &d2l),
        ("-1e9 (first article)", &article),
        ("-inf", &neg_inf),
        ("Fill::Safe", &safe),
    ];
    for (name, attend) in &fills {
        line(format!(
            "{name:>20}: {}",
            rows(&attend(&scores).to_vec(), 3)
        ));
    }
    // ANCHOR_END: tour_fill

    line("== 4. Gradients of a training step".into());
    // ANCHOR: tour_gradients
    for (name, attend) in &fills {
        let g = a_training_step(attend, [1.0, 1.0]);
        line(format!(
            "{name:>20}: loss = {:.4}, dL/dw = {:.4}",
            g.loss, g.shared
        ));
        let values = rows(&g.values, 3);
        line(format!("{:>20}  dL/dvalues = {values}", ""));
    }
    let g = a_training_step(neg_inf, [1.0, 0.0]); // example 1 left out of the loss
    line(format!(
        "-inf, example 1 weighted 0 in the loss: loss = {:.4}, dL/dw = {:.4}",
        g.loss, g.shared
    ));
    // ANCHOR_END: tour_gradients

    line("== 5. Real scores below the fill value".into());
    // ANCHOR: tour_extreme
    let extreme = Tensor::from_vec(vec![-2e6, -2_000_001.0, 0.0], [1, 1, 3]);
    let two = Tensor::from_vec(vec![2.0], [1]); // the third key is padding
    let d2l = masked_softmax_by_hand(&extreme, Some(&two), -1e6);
    let article = masked_softmax_by_hand(&extreme, Some(&two), -1e9);
    let safe = masked_softmax(&extreme, &Mask::valid_lens(&two), Fill::Safe);
    for (name, weights) in [
        ("-1e6 (d2l)", d2l),
        ("-1e9 (first article)", article),
        ("Fill::Safe", safe),
    ] {
        line(format!("{name:>20}: {}", rows(&weights.to_vec(), 3)));
    }
    // ANCHOR_END: tour_extreme

    line("== 6. Fill values in 16-bit floats".into());
    // ANCHOR: tour_formats
    for format in [F16, BF16, F32] {
        let overflow = [-1e4, -1e6, -1e9].map(|fill| format.overflows(fill));
        line(format!(
            "{:>4}: largest finite {:.4e}; -1e4, -1e6, -1e9 become -inf: {overflow:?}",
            format.name,
            format.largest_finite()
        ));
    }
    // ANCHOR_END: tour_formats

    line("== 7. Leaving hidden keys out, by hand".into());
    // ANCHOR: tour_visible
    let keep = sequence_keep(&lens, 3).reshape([2, 1, 3]); // lengths [2, 0]
    let by_hand = softmax_over_visible(&scores, &keep);
    line(format!(
        "softmax_over_visible: {}",
        rows(&by_hand.to_vec(), 3)
    ));
    let library = masked_softmax(&scores, &Mask::valid_lens(&lens), Fill::Safe);
    line(format!(
        "same as Fill::Safe: {}",
        by_hand.to_vec() == library.to_vec()
    ));
    let keep = sequence_keep(&two, 3).reshape([1, 1, 3]);
    let by_hand = softmax_over_visible(&extreme, &keep);
    line(format!("extreme scores: {}", rows(&by_hand.to_vec(), 3)));
    // ANCHOR_END: tour_visible

    line("== 8. Masks as values".into());
    // ANCHOR: tour_lens_masks
    let per_example = Mask::valid_lens(&Tensor::from_vec(vec![3.0, 1.0], [2]));
    let keep = per_example.keep_for("tour", &[2, 3, 4]).expect("a mask");
    line(format!(
        "valid_lens [B] for scores [2, 3, 4]: keep = {keep:.0}"
    ));
    let steps = Mask::valid_lens(&Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [1, 4]));
    let as_lens = steps.keep_for("tour", &[1, 4, 4]).expect("a mask");
    let causal = Mask::causal().keep_for("tour", &[1, 4, 4]).expect("a mask");
    line(format!(
        "valid_lens [[1, 2, 3, 4]] == causal: {}",
        as_lens.to_vec() == causal.to_vec()
    ));
    // ANCHOR_END: tour_lens_masks

    // ANCHOR: tour_causal
    let last = Mask::causal().keep_for("tour", &[1, 2, 4]).expect("a mask");
    line(format!("causal, 2 queries, 4 keys: {last:.0}"));
    let first = Mask::causal_with_offset(0)
        .keep_for("tour", &[1, 2, 4])
        .expect("a mask");
    line(format!("causal_with_offset(0):     {first:.0}"));
    // ANCHOR_END: tour_causal

    // ANCHOR: tour_packed
    // Two sequences packed into one row of 5 tokens: segment 0 then segment 1.
    let segment = Tensor::from_vec(vec![0.0, 0.0, 1.0, 1.0, 1.0], [5]);
    // [5, 5]: 1 where query and key belong to the same segment.
    let same_segment = segment.reshape([5, 1]).eq_mask(&segment.reshape([1, 5]));
    // keep: [1, 5, 5]
    let packed = Mask::keep(&same_segment.unsqueeze(0)) & Mask::causal();
    let keep = packed.keep_for("tour", &[1, 5, 5]).expect("a mask");
    line(format!("packed & causal: {keep:.0}"));
    // ANCHOR_END: tour_packed

    line("== 9. Causal order and left padding".into());
    // ANCHOR: tour_decoder
    let keep = decoder_mask().keep_for("tour", &[1, 5, 5]).expect("a mask");
    line(format!(
        "keys visible to each query: {:.0}",
        keep.sum_dim(-1)
    ));
    let d2l = decoder_weights(Fill::D2l).to_vec();
    let safe = decoder_weights(Fill::Safe).to_vec();
    line(format!("query 0, Fill::D2l:  {}", rows(&d2l[..5], 5)));
    line(format!("query 0, Fill::Safe: {}", rows(&safe[..5], 5)));
    line(format!("query 4, Fill::Safe: {}", rows(&safe[20..], 5)));
    // ANCHOR_END: tour_decoder

    line("== 10. A padding mask passed as a keep mask".into());
    // ANCHOR: tour_error
    let message = panic_message(|| {
        let scores = Tensor::zeros([2, 4, 4]); //          [B, Q, K]
        let padding = Tensor::ones([2, 4]); //             [B, K]: a padding mask…
        // …passed as keep
        let _ = masked_softmax(&scores, &Mask::keep(&padding), Fill::Safe);
    });
    // Broken at spaces to the page's width.
    line(lesson::wrap(&message, lesson::COLUMNS));
    // ANCHOR_END: tour_error

    line("== 11. Masks built once for fixed-length batches".into());
    // ANCHOR: tour_precomputed
    let t = 8;
    let table = BiasTable::new(&[3, 5, 8], t); // built once, before any batch
    engine::manual_seed(2);
    let scores = Tensor::randn([4, t, t]);
    let lens = [8, 3, 5, 3];
    let as_tensor = Tensor::from_vec(lens.map(|l| l as f32).to_vec(), [4]);
    let looked_up = table.bias(&lens);
    let rebuilt = causal_padding_bias(&as_tensor, t);
    line(format!(
        "T = {t}, lengths 3, 5, 8: a table {:?}; a batch with lengths {lens:?}:",
        [3, t, t]
    ));
    line(format!(
        "  looked up == rebuilt: bias {}, weights {}",
        looked_up.to_vec() == rebuilt.to_vec(),
        attend(&scores, &looked_up).to_vec() == attend(&scores, &rebuilt).to_vec()
    ));
    let full = Tensor::full([4], t as f32);
    line(format!(
        "  every sequence full: table.causal() [1, {t}, {t}] == rebuilt: weights {}",
        attend(&scores, table.causal()).to_vec()
            == attend(&scores, &causal_padding_bias(&full, t)).to_vec()
    ));
    // ANCHOR_END: tour_precomputed

    // ANCHOR: tour_mask_bytes
    let (b, t) = (32, 64);
    let table = BiasTable::new(&[16, 32, 48, 64], t);
    let lens: Vec<usize> = (0..b).map(|i| 16 * (1 + i % 4)).collect();
    let as_tensor = Tensor::from_vec(lens.iter().map(|&l| l as f32).collect(), [b]);
    line(format!(
        "tensor bytes of the mask at each call, B = {b}, T = {t}:"
    ));
    let (peak, held) = mask_bytes(|| causal_padding_bias(&as_tensor, t));
    line(format!("  rebuilt:      peak {peak:>7}, held {held:>6}"));
    let (peak, held) = mask_bytes(|| table.bias(&lens));
    line(format!("  looked up:    peak {peak:>7}, held {held:>6}"));
    let (peak, held) = mask_bytes(|| table.causal().clone());
    line(format!("  causal only:  peak {peak:>7}, held {held:>6}"));
    // ANCHOR_END: tour_mask_bytes

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch04-masked-softmax.md")]
struct Book;
