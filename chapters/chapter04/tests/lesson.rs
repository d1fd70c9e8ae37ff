//! The lesson's code: masked softmax by hand against hand-derived values and against the
//! library, the fill values on fully masked rows (forward and backward), the 16-bit float
//! ranges, the sentinel-free softmax, and the masks of the page.

use attention::{Fill, Mask, masked_softmax};
use chapter04::{
    BF16, F16, F32, a_training_step, decoder_mask, decoder_weights, lens_per_row,
    masked_softmax_by_hand, padded_batch, padded_batch_lens, padded_batch_scores,
    sequence_keep, sequence_mask, softmax_over_visible, token_scores, tokens,
};
use engine::Tensor;
use engine::gradcheck::gradcheck;
use lesson::assert_close;

/// `e / (1 + e)` and `1 / (1 + e)`: the softmax of scores 1 and 2.
const LOW: f32 = 0.268_941_43;
const HIGH: f32 = 0.731_058_6;

#[test]
fn sequence_keep_marks_the_positions_below_each_length_and_clamps_long_ones() {
    let keep = sequence_keep(&Tensor::from_vec(vec![0.0, 2.0, 5.0], [3]), 4);
    assert_eq!(keep.shape(), &[3, 4]);
    assert_eq!(
        keep.to_vec(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    );
}

#[test]
fn sequence_mask_overwrites_only_the_positions_past_each_length() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let masked = sequence_mask(&x, &Tensor::from_vec(vec![1.0, 3.0], [2]), -9.0);
    assert_eq!(masked.to_vec(), vec![1.0, -9.0, -9.0, 4.0, 5.0, 6.0]);
}

#[test]
fn lens_per_row_repeats_lengths_per_example_and_flattens_lengths_per_query() {
    let per_example = lens_per_row(&Tensor::from_vec(vec![2.0, 3.0], [2]), 2);
    assert_eq!(per_example.to_vec(), vec![2.0, 2.0, 3.0, 3.0]);
    let per_query =
        lens_per_row(&Tensor::from_vec(vec![1.0, 3.0, 2.0, 4.0], [2, 2]), 2);
    assert_eq!(per_query.to_vec(), vec![1.0, 3.0, 2.0, 4.0]);
}

#[test]
#[should_panic(expected = "valid lengths must be [B] or [B, Q], found [1, 1, 2]")]
fn lens_per_row_refuses_lengths_of_rank_three() {
    lens_per_row(&Tensor::zeros([1, 1, 2]), 1);
}

#[test]
fn masked_softmax_by_hand_gives_the_hand_computed_weights() {
    // Row 0 sees keys 0 and 1 of scores [1, 2, 3]; row 1 sees all three of [0, 0, 0].
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0], [2, 1, 3]);
    let lens = Tensor::from_vec(vec![2.0, 3.0], [2]);
    let w = masked_softmax_by_hand(&x, Some(&lens), -1e6);
    assert_eq!(w.shape(), &[2, 1, 3]);
    assert_close(
        &w.to_vec(),
        &[LOW, HIGH, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        1e-6,
    );
    // Without lengths it is a plain softmax.
    let plain = masked_softmax_by_hand(&x, None, -1e6).to_vec();
    assert_eq!(plain, x.softmax(-1).to_vec());
}

#[test]
fn masked_softmax_by_hand_equals_the_library_d2l_fill_exactly() {
    engine::manual_seed(7);
    let x = Tensor::randn([3, 4, 5]) * 3.0;
    let per_example = Tensor::from_vec(vec![0.0, 2.0, 7.0], [3]); // empty, partial, clamped
    let per_query = Tensor::from_vec(
        vec![1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 5.0, 1.0, 3.0, 3.0, 2.0, 9.0],
        [3, 4],
    );
    for lens in [per_example, per_query] {
        let by_hand = masked_softmax_by_hand(&x, Some(&lens), -1e6);
        let library = masked_softmax(&x, &Mask::valid_lens(&lens), Fill::D2l);
        assert_eq!(
            by_hand.to_vec(),
            library.to_vec(),
            "lengths {:?}",
            lens.to_vec()
        );
    }
}

#[test]
fn masked_softmax_by_hand_has_the_gradient_of_finite_differences() {
    engine::manual_seed(3);
    let x = Tensor::randn([2, 3, 4]);
    let lens = Tensor::from_vec(vec![1.0, 2.0, 4.0, 3.0, 2.0, 1.0], [2, 3]);
    gradcheck(|t| masked_softmax_by_hand(&t[0], Some(&lens), -1e6), &[x]).unwrap();
}

#[test]
fn a_fully_masked_row_is_uniform_under_finite_fills_nan_under_minus_inf_and_zero_under_safe()
 {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0], [1, 1, 3]);
    let none = Tensor::from_vec(vec![0.0], [1]);
    for fill in [-1e6, -1e9] {
        let w = masked_softmax_by_hand(&x, Some(&none), fill).to_vec();
        assert_close(&w, &[1.0 / 3.0; 3], 1e-7);
    }
    let w = masked_softmax_by_hand(&x, Some(&none), f32::NEG_INFINITY).to_vec();
    assert!(w.iter().all(|v| v.is_nan()), "{w:?}");
    let w = masked_softmax(&x, &Mask::valid_lens(&none), Fill::Safe).to_vec();
    assert_eq!(w, vec![0.0; 3]);
}

#[test]
fn a_partially_masked_row_is_the_same_under_every_fill() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0], [1, 1, 3]);
    let two = Tensor::from_vec(vec![2.0], [1]);
    for fill in [-1e6, -1e9, f32::NEG_INFINITY] {
        let w = masked_softmax_by_hand(&x, Some(&two), fill).to_vec();
        assert_close(&w, &[LOW, HIGH, 0.0], 1e-6);
    }
}

#[test]
fn the_training_step_values_are_the_hand_derived_ones() {
    let lens = Tensor::from_vec(vec![2.0, 0.0], [2]);
    // -1e6: example 0 weights [LOW, HIGH, 0] on values 0.5·[1, 2, 3]; example 1 uniform on
    // 0.5·[4, 5, 6]. loss = 0.5·(LOW + 2·HIGH) + 0.5·5, dL/dw = (LOW + 2·HIGH) + 5.
    let g =
        a_training_step(|s| masked_softmax_by_hand(s, Some(&lens), -1e6), [1.0, 1.0]);
    let first = LOW + 2.0 * HIGH;
    assert!((g.loss - (0.5 * first + 2.5)).abs() < 1e-5, "{}", g.loss);
    assert!((g.shared - (first + 5.0)).abs() < 1e-5, "{}", g.shared);
    // dL/dvalues is the weight each value gets: the padding of example 1 gets 1/3 each.
    assert_close(
        &g.values,
        &[LOW, HIGH, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        1e-6,
    );

    let safe = a_training_step(
        |s| masked_softmax(s, &Mask::valid_lens(&lens), Fill::Safe),
        [1.0, 1.0],
    );
    assert!((safe.loss - 0.5 * first).abs() < 1e-5, "{}", safe.loss);
    assert!((safe.shared - first).abs() < 1e-5, "{}", safe.shared);
    assert_close(&safe.values, &[LOW, HIGH, 0.0, 0.0, 0.0, 0.0], 1e-6);
}

#[test]
fn minus_inf_makes_the_loss_and_the_shared_gradient_nan_even_when_the_row_counts_zero()
 {
    let lens = Tensor::from_vec(vec![2.0, 0.0], [2]);
    let attend =
        |s: &Tensor| masked_softmax_by_hand(s, Some(&lens), f32::NEG_INFINITY);
    for loss_weights in [[1.0, 1.0], [1.0, 0.0]] {
        let g = a_training_step(attend, loss_weights);
        assert!(g.loss.is_nan(), "{loss_weights:?}: loss {}", g.loss);
        assert!(g.shared.is_nan(), "{loss_weights:?}: dL/dw {}", g.shared);
        // Example 0's own values still get finite gradients: the NaN comes from example 1.
        assert_close(&g.values[..3], &[LOW, HIGH, 0.0], 1e-6);
        assert!(g.values[3..].iter().all(|v| v.is_nan()), "{:?}", g.values);
    }
    // Safe with the same loss weights: everything finite.
    let g = a_training_step(
        |s| masked_softmax(s, &Mask::valid_lens(&lens), Fill::Safe),
        [1.0, 0.0],
    );
    assert!(g.loss.is_finite() && g.shared.is_finite());
}

#[test]
fn a_fill_above_the_real_scores_takes_all_the_weight() {
    let x = Tensor::from_vec(vec![-2e6, -2_000_001.0, 0.0], [1, 1, 3]);
    let two = Tensor::from_vec(vec![2.0], [1]);
    let d2l = masked_softmax_by_hand(&x, Some(&two), -1e6).to_vec();
    assert_eq!(d2l, vec![0.0, 0.0, 1.0]); // every weight on the padding
    let expected = [HIGH, LOW, 0.0];
    assert_close(
        &masked_softmax_by_hand(&x, Some(&two), -1e9).to_vec(),
        &expected,
        1e-6,
    );
    let safe = masked_softmax(&x, &Mask::valid_lens(&two), Fill::Safe).to_vec();
    assert_close(&safe, &expected, 1e-6);
}

#[test]
fn the_float_formats_have_their_ieee_ranges() {
    assert_eq!(F16.max_exponent(), 15);
    assert_eq!(F16.largest_finite(), 65504.0);
    assert!(!F16.overflows(65504.0) && !F16.overflows(-65519.0));
    assert!(F16.overflows(65520.0) && F16.overflows(-1e6) && F16.overflows(-1e9));
    assert!(!F16.overflows(-1e4));
    assert_eq!(
        BF16.largest_finite(),
        (2.0 - 2f64.powi(-7)) * 2f64.powi(127)
    );
    assert!(!BF16.overflows(-1e9));
    assert_eq!(F32.largest_finite(), f64::from(f32::MAX));
}

#[test]
fn the_overflow_rule_agrees_with_rounding_f64_to_f32() {
    // The hardware rounds f64 to f32: the rule must predict exactly which values become inf.
    let top = f64::from(f32::MAX);
    let ulp = 2f64.powi(127 - 23);
    for x in [
        top,
        top + 0.49 * ulp,
        top + 0.5 * ulp,
        top + ulp,
        1e39,
        -top - 0.5 * ulp,
    ] {
        assert_eq!(F32.overflows(x), (x as f32).is_infinite(), "{x:e}");
    }
}

#[test]
fn softmax_over_visible_equals_the_library_safe_fill() {
    engine::manual_seed(11);
    let x = Tensor::randn([3, 2, 4]) * 4.0;
    let lens = Tensor::from_vec(vec![0.0, 3.0, 1.0, 4.0, 2.0, 0.0], [3, 2]);
    let keep = Mask::valid_lens(&lens)
        .keep_for("test", &[3, 2, 4])
        .unwrap();
    let by_hand = softmax_over_visible(&x, &keep).to_vec();
    let library = masked_softmax(&x, &Mask::valid_lens(&lens), Fill::Safe).to_vec();
    assert_close(&by_hand, &library, 1e-7);
    // Rows (0, 0) and (2, 1) see nothing: exactly zero.
    assert_eq!(&by_hand[0..4], &[0.0; 4]);
    assert_eq!(&by_hand[20..24], &[0.0; 4]);
}

#[test]
fn softmax_over_visible_ignores_the_real_scores_of_hidden_keys_however_extreme() {
    let keep = Tensor::from_vec(vec![1.0, 1.0, 0.0], [1, 1, 3]);
    for hidden in [0.0, 1e30, -1e30, f32::MAX, f32::INFINITY] {
        let x = Tensor::from_vec(vec![-2e6, -2_000_001.0, hidden], [1, 1, 3]);
        let w = softmax_over_visible(&x, &keep).to_vec();
        assert_close(&w, &[HIGH, LOW, 0.0], 1e-6);
    }
}

#[test]
fn softmax_over_visible_has_the_gradient_of_finite_differences_and_zero_on_empty_rows()
 {
    engine::manual_seed(5);
    let x = Tensor::randn([2, 3]);
    let keep = Tensor::from_vec(vec![1.0, 0.0, 1.0, 0.0, 0.0, 0.0], [2, 3]);
    gradcheck(
        |t| softmax_over_visible(&t[0], &keep),
        std::slice::from_ref(&x),
    )
    .unwrap();
    let x = x.requires_grad_();
    let w = softmax_over_visible(&x, &keep);
    (&w * &Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]))
        .sum()
        .backward();
    let g = x.grad().unwrap().to_vec();
    assert!(g.iter().all(|v| v.is_finite()), "{g:?}");
    assert_eq!(&g[3..], &[0.0, 0.0, 0.0]); // the empty row
    assert_eq!(g[1], 0.0); // the hidden key of row 0
}

#[test]
fn the_padded_batch_gives_no_weight_to_padding_once_masked() {
    let ids = padded_batch();
    assert_eq!(tokens(&ids.to_vec()[..4]), ["the", "cat", "sat", "<pad>"]);
    assert_eq!(tokens(&ids.to_vec()[4..]), ["a", "dog", "<pad>", "<pad>"]);
    let scores = padded_batch_scores();
    assert_eq!(scores.shape(), &[2, 4, 4]);
    let w =
        masked_softmax(&scores, &Mask::valid_lens(&padded_batch_lens()), Fill::Safe)
            .to_vec();
    for (row, weights) in w.chunks(4).enumerate() {
        let real = if row < 4 { 3 } else { 2 };
        assert!(
            weights[real..].iter().all(|&v| v == 0.0),
            "row {row}: {weights:?}"
        );
        assert!(
            (weights.iter().sum::<f32>() - 1.0).abs() < 1e-6,
            "row {row}: {weights:?}"
        );
    }
    // Unmasked, the padding takes a real share.
    let plain = scores.softmax(-1).to_vec();
    assert!(plain[16 + 2] + plain[16 + 3] > 0.1, "{plain:?}");
}

#[test]
fn token_scores_are_scaled_dot_products_of_the_embeddings() {
    // Two tokens with embeddings [1, 0] and [1, 1]: scores x·xᵀ / √2.
    let table = Tensor::from_vec(vec![1.0, 0.0, 1.0, 1.0], [2, 2]);
    let ids = Tensor::from_vec(vec![0.0, 1.0], [1, 2]);
    let s = token_scores(&ids, &table);
    assert_eq!(s.shape(), &[1, 2, 2]);
    let r = 2f32.sqrt();
    assert_close(&s.to_vec(), &[1.0 / r, 1.0 / r, 1.0 / r, 2.0 / r], 1e-6);
}

#[test]
fn the_left_padded_decoder_has_two_fully_masked_rows() {
    let keep = decoder_mask().keep_for("test", &[1, 5, 5]).unwrap();
    assert_eq!(keep.sum_dim(-1).to_vec(), vec![0.0, 0.0, 1.0, 2.0, 3.0]);
    let d2l = decoder_weights(Fill::D2l).to_vec();
    let safe = decoder_weights(Fill::Safe).to_vec();
    // Rows 0 and 1: uniform over all five keys (future included) with -1e6, zero with Safe.
    assert_close(&d2l[..10], &[0.2; 10], 1e-6);
    assert_eq!(&safe[..10], &[0.0; 10]);
    // Row 2 sees only itself; rows 2..5 agree between the fills.
    assert_eq!(&safe[10..15], &[0.0, 0.0, 1.0, 0.0, 0.0]);
    assert_close(&d2l[10..], &safe[10..], 1e-7);
}

#[test]
fn valid_lengths_one_two_three_per_query_are_the_causal_mask() {
    for n in 1..6 {
        let steps: Vec<f32> = (1..=n).map(|v| v as f32).collect();
        let lens = Mask::valid_lens(&Tensor::from_vec(steps, [1, n]));
        let a = lens.keep_for("test", &[1, n, n]).unwrap();
        let b = Mask::causal().keep_for("test", &[1, n, n]).unwrap();
        assert_eq!(a.to_vec(), b.to_vec(), "n = {n}");
    }
}

#[test]
fn causal_masks_align_to_the_last_key_unless_given_an_offset() {
    let last = Mask::causal().keep_for("test", &[1, 2, 4]).unwrap();
    assert_eq!(last.to_vec(), vec![1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    let first = Mask::causal_with_offset(0)
        .keep_for("test", &[1, 2, 4])
        .unwrap();
    assert_eq!(first.to_vec(), vec![1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
}

#[test]
#[should_panic(expected = "hint: a [B, K] padding mask is Mask::key_padding")]
fn a_padding_mask_passed_as_a_keep_mask_is_refused() {
    let _ = masked_softmax(
        &Tensor::zeros([2, 4, 4]),
        &Mask::keep(&Tensor::ones([2, 4])),
        Fill::Safe,
    );
}
