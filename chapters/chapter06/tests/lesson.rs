//! The lesson's code: attention step by step against hand-computed values and against the
//! library, the √d study's measurements, dropout on the weights, the side-by-side costs,
//! and the pitfalls each caught by a test.

use lesson::assert_close;
use std::sync::OnceLock;

use attention::prelude::*;
use chapter06::*;
use engine::gradcheck::gradcheck;

/// The √d study, run once for all the tests that read it.
fn study() -> &'static [ScaleRow] {
    static ROWS: OnceLock<Vec<ScaleRow>> = OnceLock::new();
    ROWS.get_or_init(scaling_study)
}

/// Queries `[2, 3, 8]`, keys `[2, 4, 8]`, values `[2, 4, 5]` and valid lengths [4, 2].
fn example() -> (Tensor, Tensor, Tensor, Mask) {
    manual_seed(11);
    (
        Tensor::randn([2, 3, 8]),
        Tensor::randn([2, 4, 8]),
        Tensor::randn([2, 4, 5]),
        Mask::valid_lens(&Tensor::from_vec(vec![4.0, 2.0], [2])),
    )
}

#[test]
fn step_by_step_gives_the_hand_computed_weights_and_output() {
    // d = 4, so the scale is 1/2. q · k₀ = 0 and q · k₁ = 2 ln 3; scaled: [0, ln 3];
    // softmax: [1, 3] / 4; output: 4/4 + 8·3/4 = 7.
    let ln3 = 3f32.ln();
    let queries = Tensor::from_vec(vec![2.0 * ln3, 0.0, 0.0, 0.0], [1, 1, 4]);
    let keys =
        Tensor::from_vec(vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [1, 2, 4]);
    let values = Tensor::from_vec(vec![4.0, 8.0], [1, 2, 1]);
    let s = attention_step_by_step(&queries, &keys, &values, &Mask::none());
    assert_close(&s.scores.to_vec(), &[0.0, 2.0 * ln3], 1e-6);
    assert_close(&s.scaled.to_vec(), &[0.0, ln3], 1e-6);
    assert_close(&s.weights.to_vec(), &[0.25, 0.75], 1e-6);
    assert_close(&s.output.to_vec(), &[7.0], 1e-5);
}

#[test]
fn every_step_has_the_documented_shape() {
    let (q, k, v, mask) = example();
    let s = attention_step_by_step(&q, &k, &v, &mask);
    assert_eq!(s.keys_t.shape(), &[2, 8, 4]);
    assert_eq!(s.scores.shape(), &[2, 3, 4]);
    assert_eq!(s.scaled.shape(), &[2, 3, 4]);
    assert_eq!(s.weights.shape(), &[2, 3, 4]);
    assert_eq!(s.output.shape(), &[2, 3, 5]);
}

#[test]
fn a_score_is_the_dot_product_of_one_query_with_one_key() {
    let (q, k, v, mask) = example();
    let s = attention_step_by_step(&q, &k, &v, &mask);
    let (qv, kv, scores) = (q.to_vec(), k.to_vec(), s.scores.to_vec());
    for b in 0..2 {
        for i in 0..3 {
            for j in 0..4 {
                let dot: f32 = (0..8)
                    .map(|f| qv[(b * 3 + i) * 8 + f] * kv[(b * 4 + j) * 8 + f])
                    .sum();
                let got = scores[(b * 3 + i) * 4 + j];
                assert!(
                    (dot - got).abs() < 1e-5,
                    "[{b}, {i}, {j}]: {got} against {dot}"
                );
            }
        }
    }
}

#[test]
fn step_by_step_matches_scaled_dot_product_attention_exactly() {
    let (q, k, v, mask) = example();
    let s = attention_step_by_step(&q, &k, &v, &mask);
    let (output, weights) = scaled_dot_product_attention(&q, &k, &v, &mask);
    assert_eq!(s.weights.to_vec(), weights.to_vec());
    assert_eq!(s.output.to_vec(), output.to_vec());
}

#[test]
fn step_by_step_matches_the_dot_product_attention_module() {
    let (q, k, v, mask) = example();
    let s = attention_step_by_step(&q, &k, &v, &mask);
    // Without dropout, and with dropout switched off by eval().
    let plain = DotProductAttention::new(DotProductAttentionConfig::default());
    assert_eq!(plain.forward(&q, &k, &v, &mask).to_vec(), s.output.to_vec());
    let mut with_dropout = DotProductAttention::new(DotProductAttentionConfig {
        dropout: 0.3,
        ..Default::default()
    });
    with_dropout.eval();
    assert_eq!(
        with_dropout.forward(&q, &k, &v, &mask).to_vec(),
        s.output.to_vec()
    );
    assert_eq!(
        with_dropout.last_attention_weights().unwrap().to_vec(),
        s.weights.to_vec()
    );
}

#[test]
fn keys_past_the_valid_length_get_zero_weight_and_rows_sum_to_one() {
    let (q, k, v, mask) = example();
    let w = attention_step_by_step(&q, &k, &v, &mask).weights.to_vec();
    // Batch element 1 has 2 valid keys: keys 2 and 3 of its three queries get nothing.
    for i in 0..3 {
        let row = &w[(3 + i) * 4..(4 + i) * 4];
        assert_eq!(&row[2..], &[0.0, 0.0], "query {i}: {row:?}");
    }
    assert!(rows_sum_to_one(&Tensor::from_vec(w, [2, 3, 4])));
}

#[test]
fn step_by_step_gradients_match_finite_differences() {
    manual_seed(4);
    let q = Tensor::randn([1, 2, 4]);
    let k = Tensor::randn([1, 3, 4]);
    let v = Tensor::randn([1, 3, 2]);
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0], [1]));
    gradcheck(
        |t| attention_step_by_step(&t[0], &t[1], &t[2], &lens).output,
        &[q, k, v],
    )
    .unwrap();
}

#[test]
fn variance_of_known_values() {
    // Mean 2.5; squared distances 2.25, 0.25, 0.25, 2.25; their mean 1.25.
    assert_eq!(
        variance(&Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [4])),
        1.25
    );
    assert_eq!(variance(&Tensor::full([3, 2], 7.0)), 0.0);
}

#[test]
fn random_scores_have_one_row_of_key_scores_per_query() {
    manual_seed(0);
    assert_eq!(random_scores(8, 2, 5, 3).shape(), &[2, 5, 3]);
}

#[test]
fn softmax_saturation_of_two_scores_by_hand() {
    // Scores [0, ln 3]: weights [1/4, 3/4]. With upstream [1, 0] the gradient at the
    // softmax's input is p ⊙ (g − p · g) = [1/4 · 3/4, 3/4 · (−1/4)] = ±3/16, of length
    // 3√2/16. The variance of [0, ln 3] is (ln 3 / 2)².
    let ln3 = 3f32.ln();
    let scores = Tensor::from_vec(vec![0.0, ln3], [1, 1, 2]);
    let upstream = Tensor::from_vec(vec![1.0, 0.0], [1, 1, 2]);
    let m = softmax_saturation(&scores, 1.0, &upstream);
    assert!((m.max_weight - 0.75).abs() < 1e-6, "{m:?}");
    assert!(
        (m.grad_norm - 3.0 * 2f32.sqrt() / 16.0).abs() < 1e-6,
        "{m:?}"
    );
    assert!((m.variance - (ln3 / 2.0).powi(2)).abs() < 1e-6, "{m:?}");
    // Scale 2: scores [0, 2 ln 3], weights [1/10, 9/10], gradient ±9/100.
    let m = softmax_saturation(&scores, 2.0, &upstream);
    assert!((m.max_weight - 0.9).abs() < 1e-6, "{m:?}");
    assert!((m.grad_norm - 0.09 * 2f32.sqrt()).abs() < 1e-6, "{m:?}");
}

#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
}

#[test]
fn scale_factors_are_one_one_over_root_d_and_one_over_d() {
    assert_eq!(Scale::Unscaled.factor(64), 1.0);
    assert_eq!(Scale::InvSqrtD.factor(64), 0.125);
    assert_eq!(Scale::InvD.factor(64), 1.0 / 64.0);
    let row = ScaleRow {
        d: 4,
        measured: [0.0, 1.0, 2.0].map(|v| Saturation {
            variance: v,
            max_weight: v,
            grad_norm: v,
        }),
    };
    assert_eq!(row.get(Scale::InvSqrtD).variance, 1.0);
    assert_eq!(row.get(Scale::InvD).variance, 2.0);
}

#[test]
fn the_variance_of_the_scores_is_d_unscaled_one_scaled_and_one_over_d_divided_by_d() {
    let rows = study();
    assert_eq!(rows.iter().map(|r| r.d).collect::<Vec<_>>(), STUDY_DIMS);
    for r in rows {
        let d = r.d as f32;
        let near = |v: f32, expected: f32| (v / expected - 1.0).abs() < 0.2;
        assert!(near(r.get(Scale::Unscaled).variance, d), "{r:?}");
        assert!(near(r.get(Scale::InvSqrtD).variance, 1.0), "{r:?}");
        assert!(near(r.get(Scale::InvD).variance, 1.0 / d), "{r:?}");
    }
}

#[test]
fn without_the_scale_the_softmax_saturates_and_its_gradient_vanishes() {
    let rows = study();
    let (first, last) = (rows[0], rows[rows.len() - 1]);
    assert_eq!(last.d, 1024);
    // Unscaled: nearly one-hot at d = 1024, and far sharper than at d = 4.
    let unscaled = last.get(Scale::Unscaled);
    assert!(unscaled.max_weight > 0.9, "{unscaled:?}");
    assert!(first.get(Scale::Unscaled).max_weight < 0.7, "{first:?}");
    // Scaled by 1/√d: the same softness at every d.
    let scaled: Vec<f32> = rows
        .iter()
        .map(|r| r.get(Scale::InvSqrtD).max_weight)
        .collect();
    let (lo, hi) = scaled
        .iter()
        .fold((1.0f32, 0.0f32), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(hi - lo < 0.1 && hi < 0.5, "{scaled:?}");
    // For a typical query, the gradient at the softmax's input all but vanishes without the
    // scale (a thousand times smaller), and stays put with it.
    assert!(unscaled.grad_norm > 0.0, "{unscaled:?}");
    assert!(
        unscaled.grad_norm * 1000.0 < last.get(Scale::InvSqrtD).grad_norm,
        "{last:?}"
    );
    let scaled_grads: Vec<f32> = rows
        .iter()
        .map(|r| r.get(Scale::InvSqrtD).grad_norm)
        .collect();
    assert!(
        scaled_grads.iter().all(|&g| (0.2..0.35).contains(&g)),
        "{scaled_grads:?}"
    );
    // Divided by d: nearly uniform over the 16 keys, the weights ignore the content.
    let over_d = last.get(Scale::InvD).max_weight;
    assert!((over_d - 1.0 / SCORED_KEYS as f32).abs() < 0.01, "{over_d}");
}

#[test]
fn the_unscaled_sentence_weights_are_nearly_one_hot() {
    let (unscaled, scaled) = sentence_weights();
    assert_eq!(unscaled.shape(), &[1, 6, 6]);
    assert!(rows_sum_to_one(&unscaled) && rows_sum_to_one(&scaled));
    let mean_max = |w: &Tensor| w.max_dim(-1).mean().item();
    assert!(mean_max(&unscaled) > 0.9, "{unscaled}");
    assert!(mean_max(&scaled) < mean_max(&unscaled), "{scaled}");
}

#[test]
fn dropout_zeroes_or_doubles_each_weight_in_training_only() {
    let d = dropout_on_weights(0.5);
    let (before, training) = (d.before.to_vec(), d.training.to_vec());
    assert_eq!(d.training.shape(), &[1, 3, 5]);
    for (b, t) in before.iter().zip(&training) {
        assert!(*t == 0.0 || (t - 2.0 * b).abs() < 1e-6, "{b} became {t}");
    }
    assert!(training.contains(&0.0), "{training:?}");
    assert!(!rows_sum_to_one(&d.training), "{}", d.training);
    assert!(rows_sum_to_one(&d.before));
    assert_eq!(d.eval.to_vec(), before);
}

#[test]
fn dropout_keeps_the_expected_weights() {
    // Inverted dropout: each weight survives with probability 1 − p and is divided by
    // 1 − p, so its average over many draws is the weight itself.
    manual_seed(1);
    let q = Tensor::randn([1, 1, 4]);
    let k = Tensor::randn([1, 3, 4]);
    let identity = Tensor::from_vec(
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        [1, 3, 3],
    );
    let attention = DotProductAttention::new(DotProductAttentionConfig {
        dropout: 0.25,
        ..Default::default()
    });
    let draws = 4000;
    let mut sum = [0.0f32; 3];
    for _ in 0..draws {
        let w = attention.forward(&q, &k, &identity, &Mask::none()).to_vec();
        sum.iter_mut().zip(&w).for_each(|(s, v)| *s += v);
    }
    let mean: Vec<f32> = sum.iter().map(|s| s / draws as f32).collect();
    let weights = attention.last_attention_weights().unwrap().to_vec();
    assert_close(&mean, &weights, 0.03);
}

#[test]
fn forward_peak_bytes_counts_every_buffer_alive_at_once() {
    // One 256-value result: 1024 bytes.
    assert_eq!(forward_peak_bytes(|| Tensor::zeros([256])), 1024);
    // The operand, the scalar 1.0 (a tensor of one value) and the result are alive
    // together: 1024 + 4 + 1024 bytes.
    assert_eq!(forward_peak_bytes(|| &Tensor::zeros([256]) + 1.0), 2052);
}

#[test]
fn additive_attention_has_parameters_and_a_batch_by_query_by_key_by_hidden_peak() {
    let (b, n, d) = (2, 16, 8);
    let shapes = SameShapes::new(b, n, d);
    assert_eq!(shapes.additive.num_parameters(), 2 * d * d + d);
    assert_eq!(shapes.dot_product.num_parameters(), 0);
    let costs = shapes.peak_bytes();
    let bqk = b * n * n * 4; // bytes of one [B, Q, K] tensor
    // Additive: the [B, Q, K, h] sum and its tanh are alive at once.
    assert!(costs.additive >= 2 * bqk * d, "{costs:?}");
    // Dot product: at least the scores and the weights, but nothing with a factor d.
    assert!(costs.dot_product >= 2 * bqk, "{costs:?}");
    assert!(costs.dot_product < bqk * d, "{costs:?}");
    // Both give outputs of the values' shape.
    assert_eq!(shapes.additive_forward().shape(), &[b, n, d]);
    assert_eq!(shapes.dot_product_forward().shape(), &[b, n, d]);
}

#[test]
fn a_softmax_over_the_queries_keeps_the_shape_but_not_the_row_sums() {
    let (q, k, v, _) = example();
    let wrong = weights_over_the_wrong_dim(&q, &k);
    let right = attention_step_by_step(&q, &k, &v, &Mask::none()).weights;
    assert_eq!(wrong.shape(), right.shape());
    assert!(rows_sum_to_one(&right));
    assert!(!rows_sum_to_one(&wrong));
    // What it normalises instead: every key's column over the queries.
    assert!(
        wrong
            .sum_dim(1)
            .to_vec()
            .iter()
            .all(|s| (s - 1.0).abs() < 1e-5)
    );
}

#[test]
fn rows_sum_to_one_rejects_a_row_that_does_not() {
    assert!(rows_sum_to_one(&Tensor::from_vec(
        vec![0.5, 0.5, 0.25, 0.75],
        [1, 2, 2]
    )));
    assert!(!rows_sum_to_one(&Tensor::from_vec(
        vec![0.5, 0.5, 0.25, 0.7],
        [1, 2, 2]
    )));
}

#[test]
fn a_missing_transpose_is_a_shape_error_that_suggests_the_fix() {
    let message = panic_message(|| {
        let _ = scores_without_transpose(
            &Tensor::zeros([2, 3, 8]),
            &Tensor::zeros([2, 4, 8]),
        );
    });
    assert!(
        message.starts_with("matmul: cannot multiply [2, 3, 8] by [2, 4, 8]"),
        "{message}"
    );
    assert!(
        message.contains("did you mean rhs.transpose(-2, -1)?"),
        "{message}"
    );
}

#[test]
fn a_missing_transpose_with_as_many_keys_as_features_is_silently_wrong() {
    manual_seed(2);
    let q = Tensor::randn([1, 2, 4]);
    let k = Tensor::randn([1, 4, 4]);
    let wrong = scores_without_transpose(&q, &k);
    let right = q.matmul(&k.transpose(1, 2));
    assert_eq!(wrong.shape(), right.shape());
    assert!(largest_difference(&wrong, &right) > 0.1);
}

#[test]
fn largest_difference_is_the_largest_absolute_gap() {
    let a = Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]);
    let b = Tensor::from_vec(vec![1.5, 0.0, 3.0], [3]);
    assert_eq!(largest_difference(&a, &b), 2.0);
}
