//! Mask semantics and fill policies of `masked_softmax`, including the safe mode on fully
//! masked rows (no NaN forward or backward).

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

fn lens(values: &[f32]) -> Mask {
    Mask::valid_lens(&Tensor::from_vec(values.to_vec(), [values.len()]))
}

fn rows(t: &Tensor) -> Vec<Vec<f32>> {
    let k = t.size(-1);
    t.to_vec().chunks(k).map(<[f32]>::to_vec).collect()
}

#[test]
fn valid_lengths_per_batch_hide_keys_past_the_length() {
    let scores = Tensor::randn([2, 3, 4]);
    let w = masked_softmax(&scores, &lens(&[1.0, 3.0]), Fill::Safe);
    for (r, row) in rows(&w).iter().enumerate() {
        let visible = if r < 3 { 1 } else { 3 };
        assert!(row[visible..].iter().all(|&x| x == 0.0), "row {r}: {row:?}");
        assert!(
            (row.iter().sum::<f32>() - 1.0).abs() < 1e-6,
            "row {r} sums to 1"
        );
    }
}

#[test]
fn valid_lengths_per_query_hide_keys_per_row() {
    let scores = Tensor::zeros([1, 3, 4]);
    let per_query = Mask::valid_lens(&Tensor::from_vec(vec![1.0, 2.0, 4.0], [1, 3]));
    let w = rows(&masked_softmax(&scores, &per_query, Fill::Safe));
    assert_eq!(w[0], vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(w[1], vec![0.5, 0.5, 0.0, 0.0]);
    assert_eq!(w[2], vec![0.25; 4]);
}

#[test]
fn valid_lengths_past_the_key_count_are_clamped() {
    let scores = Tensor::randn([2, 1, 3]);
    let clamped = masked_softmax(&scores, &lens(&[3.0, 100.0]), Fill::Safe);
    assert_eq!(clamped.to_vec(), scores.softmax(-1).to_vec());
}

#[test]
fn keep_mask_broadcasts_over_queries() {
    let scores = Tensor::zeros([2, 2, 3]);
    let rows_per_example =
        Tensor::from_vec(vec![1.0, 0.0, 1.0, 0.0, 1.0, 1.0], [2, 1, 3]);
    let keep = Mask::keep(&rows_per_example);
    let w = rows(&masked_softmax(&scores, &keep, Fill::Safe));
    assert_eq!(w[0], vec![0.5, 0.0, 0.5]);
    assert_eq!(w[1], vec![0.5, 0.0, 0.5]);
    assert_eq!(w[2], vec![0.0, 0.5, 0.5]);
    assert_eq!(w[3], vec![0.0, 0.5, 0.5]);
    // The same rows as a [B, K] padding mask.
    let padding = Mask::key_padding(&rows_per_example.reshape([2, 3]));
    let same = rows(&masked_softmax(&scores, &padding, Fill::Safe));
    assert_eq!(same, w);
}

#[test]
fn one_keep_mask_for_the_whole_batch_has_a_batch_dimension_of_one() {
    // A [Q, K] mask shared by every example is written [1, Q, K].
    let scores = Tensor::zeros([2, 2, 3]);
    let shared = Tensor::from_vec(vec![1.0, 1.0, 0.0, 0.0, 1.0, 1.0], [2, 3]);
    let w = rows(&masked_softmax(
        &scores,
        &Mask::keep(&shared.unsqueeze(0)),
        Fill::Safe,
    ));
    for example in 0..2 {
        assert_eq!(w[2 * example], vec![0.5, 0.5, 0.0]);
        assert_eq!(w[2 * example + 1], vec![0.0, 0.5, 0.5]);
    }
}

#[test]
fn causal_mask_lets_each_query_see_itself_and_the_past() {
    let w = rows(&masked_softmax(
        &Tensor::zeros([1, 3, 3]),
        &Mask::causal(),
        Fill::Safe,
    ));
    assert_eq!(w[0], vec![1.0, 0.0, 0.0]);
    assert_eq!(w[1], vec![0.5, 0.5, 0.0]);
    assert_eq!(w[2], vec![1.0 / 3.0; 3]);
}

#[test]
fn causal_offset_places_queries_after_the_cached_tokens() {
    // Two new queries at positions 2 and 3, against four keys.
    let w = rows(&masked_softmax(
        &Tensor::zeros([2, 4]),
        &Mask::causal_with_offset(2),
        Fill::Safe,
    ));
    assert_eq!(w[0], vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0]);
    assert_eq!(w[1], vec![0.25; 4]);
    // With two cached tokens, the queries are the last two of four keys: the default causal
    // mask, aligned to the last key, says the same.
    let aligned = rows(&masked_softmax(
        &Tensor::zeros([2, 4]),
        &Mask::causal(),
        Fill::Safe,
    ));
    assert_eq!(aligned, w);
}

#[test]
fn fully_masked_row_under_each_policy() {
    let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0, 0.5, -1.0, 4.0], [2, 1, 3]);
    let mask = lens(&[0.0, 2.0]);
    // d2l and a constant fill: every score of the row is the same constant, so uniform.
    for fill in [Fill::D2l, Fill::Constant(-1e9)] {
        let w = rows(&masked_softmax(&scores, &mask, fill));
        assert_eq!(w[0], vec![1.0 / 3.0; 3], "{fill:?}");
    }
    // Safe: no weight at all.
    let w = rows(&masked_softmax(&scores, &mask, Fill::Safe));
    assert_eq!(w[0], vec![0.0; 3]);
    // The partially masked row is the same under every policy.
    let reference = Tensor::from_vec(vec![0.5, -1.0], [2]).softmax(-1).to_vec();
    for fill in [Fill::D2l, Fill::Constant(-1e9), Fill::Safe] {
        let w = rows(&masked_softmax(&scores, &mask, fill));
        assert!(
            (w[1][0] - reference[0]).abs() < 1e-7
                && (w[1][1] - reference[1]).abs() < 1e-7
        );
        assert_eq!(w[1][2], 0.0, "{fill:?}");
    }
}

#[test]
fn safe_mode_gives_zero_gradients_and_no_nan_on_a_fully_masked_row() {
    let scores = Tensor::randn([2, 2, 3]).requires_grad_();
    let mask = Mask::valid_lens(&Tensor::from_vec(vec![0.0, 2.0, 0.0, 0.0], [2, 2]));
    let w = masked_softmax(&scores, &mask, Fill::Safe);
    assert!(w.to_vec().iter().all(|v| v.is_finite()));
    w.backward_with(&Tensor::randn([2, 2, 3]));
    let g = scores.grad().unwrap().to_vec();
    assert!(g.iter().all(|v| v.is_finite()), "{g:?}");
    // Rows 0, 2 and 3 are fully masked: zero gradient. Row 1 has a live gradient on keys 0, 1
    // and none on the masked key 2.
    for row in [0, 2, 3] {
        assert_eq!(&g[row * 3..row * 3 + 3], &[0.0; 3], "row {row}");
    }
    assert!(g[3] != 0.0 && g[4] != 0.0);
    assert_eq!(g[5], 0.0);
}

#[test]
fn filling_with_minus_infinity_would_give_nan_which_safe_mode_avoids() {
    // The motivating failure: -inf everywhere in a row, then softmax, gives 0/0.
    let all_masked = Tensor::full([1, 3], f32::NEG_INFINITY).softmax(-1);
    assert!(all_masked.to_vec().iter().all(|v| v.is_nan()));
    let safe = masked_softmax(&Tensor::zeros([1, 1, 3]), &lens(&[0.0]), Fill::Safe);
    assert_eq!(safe.to_vec(), vec![0.0; 3]);
}

#[test]
fn safe_mode_passes_anomaly_mode_on_an_empty_row_forward_and_backward() {
    // The fix must not look like the failure: no step of the safe softmax makes an
    // infinity of its own, so anomaly mode (which stops at the first non-finite output)
    // runs through an empty row without a report.
    let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 1, 3])
        .requires_grad_();
    let weights = engine::anomaly::detect_anomaly(|| {
        let w = masked_softmax(&scores, &lens(&[2.0, 0.0]), Fill::Safe);
        (&w * &Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 1, 3]))
            .sum()
            .backward();
        w
    });
    let w = weights.to_vec();
    assert_eq!(&w[3..], &[0.0; 3]);
    assert!((w[0] + w[1] - 1.0).abs() < 1e-6 && w[2] == 0.0);
    let g = scores.grad().unwrap().to_vec();
    assert_eq!(
        &g[2..],
        &[0.0; 4],
        "no gradient to masked keys or to the empty row"
    );
}

#[test]
fn a_fully_masked_row_of_huge_scores_is_not_shifted_into_an_overflow() {
    // Query 0 sees nothing and its scores are near f32::MAX; query 1 sees everything.
    // The empty row is shifted by 0, not by the lowest float (which would overflow
    // `scores - shift` to inf and stop anomaly mode), and gets zero weights.
    let scores = Tensor::from_vec(vec![1e38, 2e38, 3e38, 0.0, 1.0, 2.0], [1, 2, 3]);
    let keep = Mask::keep(&Tensor::from_vec(
        vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [1, 2, 3],
    ));
    let w = engine::anomaly::detect_anomaly(|| {
        masked_softmax(&scores, &keep, Fill::Safe)
    });
    let w = w.to_vec();
    assert_eq!(&w[..3], &[0.0; 3]);
    assert!((w[3..].iter().sum::<f32>() - 1.0).abs() < 1e-6);
}

#[test]
fn safe_mode_gives_zeros_where_every_visible_score_is_minus_infinity() {
    let scores = Tensor::from_vec(
        vec![
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            0.0,
            f32::MIN,
            f32::MIN,
            7.0,
        ],
        [2, 1, 3],
    )
    .requires_grad_();
    let w = masked_softmax(&scores, &lens(&[2.0, 2.0]), Fill::Safe);
    // Row 0 sees only -inf: zeros. Row 1 sees two equal lowest floats: half each.
    assert_eq!(w.to_vec(), vec![0.0, 0.0, 0.0, 0.5, 0.5, 0.0]);
    w.sum().backward();
    assert!(
        scores
            .grad()
            .unwrap()
            .to_vec()
            .iter()
            .all(|g| g.is_finite())
    );
}

#[test]
fn heads_repeat_each_batch_mask_in_place() {
    // Lengths [1, 3] over three keys, for heads folded into the batch as rows b·H + h.
    let repeated = lens(&[1.0, 3.0]).repeat_for_heads(2);
    let t = repeated.keep_for("test", &[4, 1, 3]).unwrap();
    assert_eq!(
        t.to_vec(),
        vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        "b·H + h order (lengths 1, 1, 3, 3), not tiled (1, 3, 1, 3)"
    );
    let keep = Mask::keep(&Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [2, 1, 2]))
        .repeat_for_heads(3);
    let t = keep.keep_for("test", &[6, 1, 2]).unwrap();
    assert_eq!(t.shape(), &[6, 1, 2]);
    assert_eq!(
        t.to_vec(),
        vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    );
    let padding =
        Mask::key_padding(&Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [2, 2]))
            .repeat_for_heads(3);
    let t = padding.keep_for("test", &[6, 1, 2]).unwrap();
    assert_eq!(
        t.to_vec(),
        vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    );
}

#[test]
#[should_panic(
    expected = "masked_softmax: valid lengths must have shape [2] (one per batch element) or [2, 3] (one per query) for attention scores [2, 3, 4], found [3]"
)]
fn valid_lengths_of_the_wrong_batch_size_are_refused() {
    masked_softmax(
        &Tensor::zeros([2, 3, 4]),
        &lens(&[1.0, 2.0, 3.0]),
        Fill::Safe,
    );
}

#[test]
#[should_panic(
    expected = "masked_softmax: valid lengths must be whole numbers ≥ 0, found -1"
)]
fn negative_valid_lengths_are_refused() {
    masked_softmax(&Tensor::zeros([2, 1, 4]), &lens(&[1.0, -1.0]), Fill::Safe);
}

#[test]
#[should_panic(
    expected = "masked_softmax: a keep mask must have the rank of the attention scores [2, 3, 4] with each dimension equal or 1, found [2, 1, 5]"
)]
fn a_mask_of_the_wrong_shape_is_refused() {
    masked_softmax(
        &Tensor::zeros([2, 3, 4]),
        &Mask::keep(&Tensor::ones([2, 1, 5])),
        Fill::Safe,
    );
}

#[test]
#[should_panic(
    expected = "masked_softmax: a keep mask must have the rank of the attention scores [2, 3, 4] with each dimension equal or 1, found [2, 4]; hint: a [B, K] padding mask is Mask::key_padding"
)]
fn a_keep_mask_of_lower_rank_is_refused_with_a_hint() {
    masked_softmax(
        &Tensor::zeros([2, 3, 4]),
        &Mask::keep(&Tensor::ones([2, 4])),
        Fill::Safe,
    );
}

#[test]
#[should_panic(
    expected = "masked_softmax: a key-padding mask must have shape [B, K] = [2, 4] for attention scores [2, 3, 4], found [2, 5]"
)]
fn a_padding_mask_of_the_wrong_shape_is_refused() {
    masked_softmax(
        &Tensor::zeros([2, 3, 4]),
        &Mask::key_padding(&Tensor::ones([2, 5])),
        Fill::Safe,
    );
}

#[test]
#[should_panic(expected = "an additive float mask (0 / -inf) is not accepted")]
fn an_additive_float_mask_is_refused_with_a_hint() {
    let additive = Tensor::from_vec(vec![0.0, f32::NEG_INFINITY], [1, 1, 2]);
    masked_softmax(
        &Tensor::zeros([1, 1, 2]),
        &Mask::keep(&additive),
        Fill::Safe,
    );
}

#[test]
fn safe_fill_with_no_keys_at_all_gives_empty_weights() {
    // Three queries, zero keys: nothing to weigh and nothing to take a maximum of.
    let scores = Tensor::zeros([2, 3, 0]).requires_grad_();
    let w = masked_softmax(&scores, &lens(&[0.0, 0.0]), Fill::Safe);
    assert_eq!(w.shape(), &[2, 3, 0]);
    w.sum().backward();
    assert_eq!(scores.grad().unwrap().shape(), &[2, 3, 0]);
}

#[test]
#[should_panic(
    expected = "masked_softmax: valid lengths must have shape [2] (one per batch element) or [2, 3] (one per query) for attention scores [2, 3, 4], found [2, 4]"
)]
fn per_query_valid_lengths_for_another_number_of_queries_are_refused() {
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![1.0; 8], [2, 4]));
    masked_softmax(&Tensor::zeros([2, 3, 4]), &lens, Fill::Safe);
}

#[test]
#[should_panic(expected = "found [3, 3]")]
fn per_query_valid_lengths_for_another_batch_size_are_refused() {
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![1.0; 9], [3, 3]));
    masked_softmax(&Tensor::zeros([2, 3, 4]), &lens, Fill::Safe);
}

#[test]
fn per_query_valid_lengths_reach_the_query_dimension_of_higher_rank_scores() {
    // Scores [B, H1, H2, Q, K]: the lengths [B, Q] apply to dimension -2 whatever the rank.
    let scores = Tensor::zeros([2, 1, 1, 3, 4]);
    let lens = Mask::valid_lens(&Tensor::from_vec(
        vec![1.0, 2.0, 4.0, 4.0, 3.0, 1.0],
        [2, 3],
    ));
    let w = rows(&masked_softmax(&scores, &lens, Fill::Safe));
    assert_eq!(w[0], vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(w[1], vec![0.5, 0.5, 0.0, 0.0]);
    assert_eq!(w[2], vec![0.25; 4]);
    assert_eq!(w[3], vec![0.25; 4]);
    assert_eq!(w[4], vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0]);
    assert_eq!(w[5], vec![1.0, 0.0, 0.0, 0.0]);
}

#[test]
fn is_none_says_whether_anything_is_hidden() {
    assert!(Mask::none().is_none());
    assert!(Mask::default().is_none());
    assert!(!Mask::causal().is_none());
    assert!(!(Mask::none() & Mask::causal()).is_none());
}

#[test]
fn masks_compose_by_reference_too() {
    let pad = Tensor::from_vec(vec![1.0, 1.0, 0.0], [1, 3]);
    let (causal, padding) = (Mask::causal(), Mask::key_padding(&pad));
    let both = &causal & &padding;
    let keep = both.keep_for("test", &[1, 3, 3]).unwrap();
    assert_eq!(
        keep.to_vec(),
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    );
}

#[test]
fn key_padding_ignore_reads_one_as_a_key_to_ignore_as_pytorch_does() {
    // torch.tensor([[False, True, False], [True, True, False]]): True = padding.
    let key_padding_mask =
        Tensor::from_vec(vec![0.0, 1.0, 0.0, 1.0, 1.0, 0.0], [2, 3]);
    let scores = Tensor::zeros([2, 2, 3]);
    let w = rows(&masked_softmax(
        &scores,
        &Mask::key_padding_ignore(&key_padding_mask),
        Fill::Safe,
    ));
    assert_eq!(w[0], vec![0.5, 0.0, 0.5]);
    assert_eq!(w[1], vec![0.5, 0.0, 0.5]);
    assert_eq!(w[2], vec![0.0, 0.0, 1.0]);
    assert_eq!(w[3], vec![0.0, 0.0, 1.0]);
    // Our sense is its complement.
    let keep = Mask::key_padding(&(1.0 - &key_padding_mask));
    assert_eq!(rows(&masked_softmax(&scores, &keep, Fill::Safe)), w);
}

#[test]
fn key_padding_ignore_is_repeated_per_head_like_key_padding() {
    let ignore = Tensor::from_vec(vec![0.0, 1.0, 1.0, 0.0], [2, 2]);
    let keep = Mask::key_padding_ignore(&ignore)
        .repeat_for_heads(2)
        .keep_for("test", &[4, 1, 2])
        .unwrap();
    assert_eq!(keep.to_vec(), vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
}

#[test]
#[should_panic(
    expected = "masked_softmax: a key-padding mask in PyTorch's sense (Mask::key_padding_ignore) holds only 1 (ignore the key) and 0 (a real key), found -inf"
)]
fn key_padding_ignore_refuses_an_additive_float_mask() {
    let additive = Tensor::from_vec(vec![0.0, f32::NEG_INFINITY], [1, 2]);
    masked_softmax(
        &Tensor::zeros([1, 1, 2]),
        &Mask::key_padding_ignore(&additive),
        Fill::Safe,
    );
}
