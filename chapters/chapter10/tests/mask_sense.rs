//! Pitfall 5: masks the wrong way round, after the softmax, or over the wrong axis;
//! each check fails on the wrong version and passes on the right one.

use attention::{Fill, Mask, masked_softmax};
use chapter10::mask_sense::{
    BATCH, TOKENS, columns_sum_to_one, keep_mask, key_padding_mask,
    mask_after_softmax, mask_after_softmax_renormalised, mask_before_softmax,
    no_weight_on_padding, pitfalls, pytorch_mask_as_ignore, pytorch_mask_as_keep,
    rows_sum_to_one, scores, softmax_over_keys, softmax_over_queries,
};
use lesson::assert_close;

#[test]
fn the_masks_mark_the_padding_of_lengths_3_and_2() {
    assert_eq!(
        key_padding_mask().to_vec(),
        vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    );
    assert_eq!(
        keep_mask().to_vec(),
        vec![1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    );
    assert_eq!(scores().shape(), &[BATCH, TOKENS, TOKENS]);
}

#[test]
fn pytorch_s_padding_mask_read_as_keep_puts_all_the_weight_on_padding() {
    let weights = pytorch_mask_as_keep(&scores(), &key_padding_mask());
    let on_padding = no_weight_on_padding(&weights, &key_padding_mask());
    assert!(!on_padding.passed);
    assert_close(&on_padding.values, &[1.0; BATCH * TOKENS], 1e-6);
    // Example 0 has one padding key, the only one it now sees: weight exactly 1.
    let w = weights.to_vec();
    for q in 0..TOKENS {
        assert_eq!(&w[q * TOKENS..(q + 1) * TOKENS], &[0.0, 0.0, 0.0, 1.0]);
    }
    // The rows still sum to 1: that check misses this mistake.
    assert!(rows_sum_to_one(&weights).passed);
}

#[test]
fn pytorch_s_padding_mask_read_as_ignore_puts_no_weight_on_padding() {
    let weights = pytorch_mask_as_ignore(&scores(), &key_padding_mask());
    let on_padding = no_weight_on_padding(&weights, &key_padding_mask());
    assert!(on_padding.passed, "{on_padding}");
    assert_eq!(on_padding.values, vec![0.0; BATCH * TOKENS]);
    assert!(rows_sum_to_one(&weights).passed);
    // The same as the library's own sense with 1 − mask.
    let keep =
        masked_softmax(&scores(), &Mask::key_padding(&keep_mask()), Fill::Safe);
    assert_eq!(weights.to_vec(), keep.to_vec());
}

#[test]
fn the_mask_after_the_softmax_leaves_rows_summing_to_their_real_keys_share() {
    let scores = scores();
    let weights = mask_after_softmax(&scores, &keep_mask());
    let rows = rows_sum_to_one(&weights);
    assert!(!rows.passed);
    // By hand: each row sums to the share the real keys had in the plain softmax.
    let s = scores.to_vec();
    let lengths = [3, 2];
    let expected: Vec<f32> = (0..BATCH * TOKENS)
        .map(|row| {
            let r = &s[row * TOKENS..(row + 1) * TOKENS];
            let exps: Vec<f64> = r.iter().map(|&x| f64::from(x).exp()).collect();
            let real: f64 = exps[..lengths[row / TOKENS]].iter().sum();
            (real / exps.iter().sum::<f64>()) as f32
        })
        .collect();
    assert_close(&rows.values, &expected, 1e-6);
    assert!(rows.values.iter().all(|&v| v < 1.0));
    // The padding gets no weight: that check misses this mistake.
    assert!(no_weight_on_padding(&weights, &key_padding_mask()).passed);
}

#[test]
fn the_mask_before_the_softmax_gives_rows_summing_to_one() {
    let weights = mask_before_softmax(&scores(), &keep_mask());
    assert!(rows_sum_to_one(&weights).passed);
    assert!(no_weight_on_padding(&weights, &key_padding_mask()).passed);
    // Renormalising the after-the-softmax version gives the same weights back.
    let renormalised = mask_after_softmax_renormalised(&scores(), &keep_mask());
    assert_close(&renormalised.to_vec(), &weights.to_vec(), 1e-6);
}

#[test]
fn the_softmax_over_the_queries_makes_columns_sum_to_one_not_rows() {
    let weights = softmax_over_queries(&scores(), &keep_mask());
    // A square score matrix: the shape is right.
    assert_eq!(weights.shape(), &[BATCH, TOKENS, TOKENS]);
    assert!(columns_sum_to_one(&weights).passed);
    assert!(!rows_sum_to_one(&weights).passed);
    // A padding column holds -1e9 for every query: 1/Q = 1/4 each.
    let w = weights.to_vec();
    for q in 0..TOKENS {
        assert_eq!(w[q * TOKENS + 3], 0.25);
        let row = (TOKENS + q) * TOKENS;
        assert_eq!(&w[row + 2..row + 4], &[0.25, 0.25]);
    }
    let on_padding = no_weight_on_padding(&weights, &key_padding_mask());
    assert!(!on_padding.passed);
    assert_eq!(
        on_padding.values,
        vec![0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5]
    );
}

#[test]
fn the_softmax_over_the_keys_makes_rows_sum_to_one() {
    let weights = softmax_over_keys(&scores(), &keep_mask());
    assert!(rows_sum_to_one(&weights).passed);
    assert!(!columns_sum_to_one(&weights).passed);
    assert!(no_weight_on_padding(&weights, &key_padding_mask()).passed);
    let mask = Mask::key_padding(&keep_mask());
    let library = masked_softmax(&scores(), &mask, Fill::Constant(-1e9));
    assert_eq!(weights.to_vec(), library.to_vec());
}

#[test]
fn each_check_catches_some_mistakes_and_every_fix_passes_both() {
    // [rows_sum_to_one, no_weight_on_padding] on the wrong version of each pitfall.
    let expected = [[true, false], [false, true], [false, false]];
    for (pitfall, expected) in pitfalls().iter().zip(expected) {
        let [wrong, right] = pitfall.checks();
        let passed = [wrong[0].passed, wrong[1].passed];
        assert_eq!(passed, expected, "{}", pitfall.name);
        assert!(right.iter().all(|c| c.passed), "{}", pitfall.name);
        assert_eq!(pitfall.wrong.shape(), pitfall.right.shape());
    }
}

#[test]
fn a_check_prints_its_verdict_and_its_numbers() {
    let weights = mask_after_softmax(&scores(), &keep_mask());
    let printed = no_weight_on_padding(&weights, &key_padding_mask()).to_string();
    assert_eq!(
        printed,
        "no_weight_on_padding: passed, weight on padding per row: 0.0000 0.0000 \
         0.0000 0.0000 0.0000 0.0000 0.0000 0.0000"
    );
    let printed = rows_sum_to_one(&weights).to_string();
    assert!(
        printed.starts_with("rows_sum_to_one: FAILED, row sums: 0."),
        "{printed}"
    );
}
