//! The lesson's code: the data, the general pooling form and its uniform baseline, the
//! Gaussian kernel by hand, leave-one-out keys, the learned width (its gradient and its
//! training), the measures of a row of weights, and the two softmaxes.

use chapter03::charts::tick_labels;
use chapter03::{
    Dataset, NwKernelRegression, attention_pool, average_pooling, effective_keys,
    gaussian_scores, leave_one_out, mse, nadaraya_watson, naive_softmax,
    rows_with_nan, stable_softmax, train, true_function, true_function_of,
    weight_within, width_sweep,
};
use engine::Tensor;
use engine::gradcheck::gradcheck;
use lesson::assert_close;

fn t(values: &[f32]) -> Tensor {
    Tensor::from_vec(values.to_vec(), [values.len()])
}

/// The chapter's data set, small enough for fast tests.
fn small_data(seed: u64) -> Dataset {
    engine::manual_seed(seed);
    Dataset::generate(30, 20)
}

#[test]
fn the_true_function_is_two_sine_plus_x_to_the_point_eight() {
    assert_eq!(true_function(0.0), 0.0);
    let half_pi = std::f32::consts::FRAC_PI_2;
    assert!((true_function(half_pi) - (2.0 + half_pi.powf(0.8))).abs() < 1e-6);
    assert!((true_function(1.0) - (2.0 * 1f32.sin() + 1.0)).abs() < 1e-6);
    assert_eq!(
        true_function_of(&t(&[0.0, 1.0])).to_vec(),
        vec![0.0, true_function(1.0)]
    );
}

#[test]
fn the_data_set_is_sorted_seeded_and_shaped() {
    let data = small_data(7);
    assert_eq!(data.x_train.shape(), &[30]);
    assert_eq!(data.y_train.shape(), &[30]);
    assert_eq!(data.x_test.shape(), &[20]);
    assert_eq!(data.y_test.shape(), &[20]);
    let x = data.x_train.to_vec();
    assert!(
        x.windows(2).all(|p| p[0] <= p[1]),
        "keys must be sorted: {x:?}"
    );
    assert!(x.iter().all(|&v| (0.0..5.0).contains(&v)), "{x:?}");
    assert_close(&data.x_test.to_vec()[..3], &[0.0, 0.25, 0.5], 1e-6);
    assert_eq!(
        data.y_test.to_vec(),
        true_function_of(&data.x_test).to_vec()
    );
    // The same seed draws the same data; another seed, other data.
    assert_eq!(small_data(7).y_train.to_vec(), data.y_train.to_vec());
    assert_ne!(small_data(8).x_train.to_vec(), x);
}

#[test]
fn the_noise_has_mean_zero_and_standard_deviation_one_half() {
    engine::manual_seed(3);
    let data = Dataset::generate(4000, 1);
    let noise = (&data.y_train - true_function_of(&data.x_train)).to_vec();
    let n = noise.len() as f32;
    let mean = noise.iter().sum::<f32>() / n;
    let std = (noise.iter().map(|e| (e - mean).powi(2)).sum::<f32>() / n).sqrt();
    assert!(mean.abs() < 0.03, "mean {mean}");
    assert!((std - 0.5).abs() < 0.03, "standard deviation {std}");
}

#[test]
fn attention_pool_is_the_weighted_sum_of_the_values() {
    let weights = Tensor::from_vec(vec![0.5, 0.5, 0.0, 0.1, 0.2, 0.7], [2, 3]);
    let values = t(&[2.0, 4.0, 10.0]);
    let shared = attention_pool(&weights, &values);
    assert_close(&shared.to_vec(), &[3.0, 0.2 + 0.8 + 7.0], 1e-6);
    // One row of values per query gives the same when the rows are equal.
    let per_query = attention_pool(&weights, &values.unsqueeze(0).expand([2, 3]));
    assert_eq!(per_query.to_vec(), shared.to_vec());
}

#[test]
fn average_pooling_predicts_the_mean_of_the_values_for_every_query() {
    let queries = t(&[0.0, 2.0, 100.0]);
    let values = t(&[1.0, 2.0, 6.0]);
    assert_close(
        &average_pooling(&queries, &values).to_vec(),
        &[3.0; 3],
        1e-6,
    );
}

#[test]
fn mse_is_the_mean_of_the_squared_differences() {
    let m = mse(&t(&[1.0, 2.0, 3.0]), &t(&[1.0, 0.0, 6.0]));
    assert_eq!(m.shape(), &[] as &[usize]);
    assert!((m.item() - (0.0 + 4.0 + 9.0) / 3.0).abs() < 1e-6);
}

#[test]
fn gaussian_scores_are_minus_the_squared_distance_over_two_sigma_squared() {
    let s = gaussian_scores(&t(&[0.0, 1.0]), &t(&[0.0, 1.0, 3.0]), 2.0);
    assert_eq!(s.shape(), &[2, 3]);
    // (q − k)² for q = 0: 0, 1, 9; for q = 1: 1, 0, 4; divided by 2σ² = 8.
    assert_close(
        &s.to_vec(),
        &[0.0, -1.0 / 8.0, -9.0 / 8.0, -1.0 / 8.0, 0.0, -4.0 / 8.0],
        1e-7,
    );
}

#[test]
fn nadaraya_watson_matches_the_softmax_written_out() {
    let (pred, weights) =
        nadaraya_watson(&t(&[0.0]), &t(&[0.0, 1.0, 2.0]), &t(&[3.0, 6.0, 9.0]), 1.0);
    let e = [1.0f32, (-0.5f32).exp(), (-2.0f32).exp()];
    let total: f32 = e.iter().sum();
    let alpha: Vec<f32> = e.iter().map(|v| v / total).collect();
    assert_eq!(weights.shape(), &[1, 3]);
    assert_close(&weights.to_vec(), &alpha, 1e-6);
    let expected = 3.0 * alpha[0] + 6.0 * alpha[1] + 9.0 * alpha[2];
    assert_close(&pred.to_vec(), &[expected], 1e-5);
}

#[test]
fn the_weights_are_non_negative_and_every_row_sums_to_one() {
    let data = small_data(1);
    for sigma in [0.01, 0.3, 1.0, 100.0] {
        let (_, weights) =
            nadaraya_watson(&data.x_test, &data.x_train, &data.y_train, sigma);
        assert_eq!(weights.shape(), &[20, 30]);
        assert!(weights.to_vec().iter().all(|&a| a >= 0.0), "sigma {sigma}");
        for s in weights.sum_dim(-1).to_vec() {
            assert!((s - 1.0).abs() < 1e-5, "sigma {sigma}: a row sums to {s}");
        }
    }
}

#[test]
fn a_very_wide_kernel_collapses_to_average_pooling() {
    let data = small_data(2);
    let (pred, weights) =
        nadaraya_watson(&data.x_test, &data.x_train, &data.y_train, 1000.0);
    assert!(
        weights
            .to_vec()
            .iter()
            .all(|&a| (a - 1.0 / 30.0).abs() < 1e-5)
    );
    let average = average_pooling(&data.x_test, &data.y_train);
    assert_close(&pred.to_vec(), &average.to_vec(), 1e-4);
    assert_close(&effective_keys(&weights).to_vec(), &[30.0; 20], 1e-2);
}

#[test]
fn a_very_narrow_kernel_copies_the_value_of_the_nearest_key() {
    let keys = t(&[0.0, 1.0, 2.0]);
    let values = t(&[5.0, 7.0, 11.0]);
    // 10.0 is far outside the keys: every score is below −10⁷, yet the weights are exact.
    let queries = t(&[0.1, 1.2, 1.9, 10.0]);
    let (pred, weights) = nadaraya_watson(&queries, &keys, &values, 0.001);
    assert_eq!(
        weights.to_vec(),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(pred.to_vec(), vec![5.0, 7.0, 11.0, 11.0]);
    assert_eq!(effective_keys(&weights).to_vec(), vec![1.0; 4]);
}

#[test]
fn leave_one_out_drops_exactly_the_diagonal() {
    let rest = leave_one_out(&t(&[10.0, 20.0, 30.0, 40.0]));
    assert_eq!(rest.shape(), &[4, 3]);
    assert_eq!(
        rest.to_vec(),
        vec![
            20.0, 30.0, 40.0, 10.0, 30.0, 40.0, 10.0, 20.0, 40.0, 10.0, 20.0, 30.0
        ]
    );
}

#[test]
fn the_model_with_w_one_over_sigma_is_the_fixed_width_estimator() {
    let data = small_data(4);
    for sigma in [0.2, 1.0, 3.0] {
        let model = NwKernelRegression::new(1.0 / sigma);
        assert!((model.sigma() - sigma).abs() < 1e-6);
        let learned = model.forward(&data.x_test, &data.x_train, &data.y_train);
        let (fixed, _) =
            nadaraya_watson(&data.x_test, &data.x_train, &data.y_train, sigma);
        assert_close(&learned.to_vec(), &fixed.to_vec(), 1e-5);
    }
}

#[test]
fn the_model_shares_w_and_lists_it_as_its_one_parameter() {
    use engine::nn::Module;
    let w = Tensor::from_vec(vec![2.0], [1]).requires_grad_();
    let model = NwKernelRegression::from_w(&w);
    let names: Vec<String> = model
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["w"]);
    assert!(model.parameters()[0].same(&w));
    assert_eq!(model.w(), 2.0);
    assert_eq!(NwKernelRegression::new(-4.0).sigma(), 0.25);
}

#[test]
fn the_gradient_of_the_learned_width_matches_finite_differences() {
    let queries = t(&[0.3, 1.1, 2.0]);
    let keys = t(&[0.0, 0.5, 1.0, 1.5, 2.5]);
    let values = t(&[1.0, -1.0, 2.0, 0.5, 3.0]);
    let w = Tensor::from_vec(vec![1.3], [1]);
    gradcheck(
        |x| NwKernelRegression::from_w(&x[0]).forward(&queries, &keys, &values),
        std::slice::from_ref(&w),
    )
    .unwrap();
    // Through the leave-one-out loss too, and with respect to the queries as well.
    let x = t(&[0.2, 0.9, 1.4, 2.2]);
    let y = t(&[1.0, 2.0, 0.0, -1.0]);
    let (kl, vl) = (leave_one_out(&x), leave_one_out(&y));
    gradcheck(
        |p| {
            mse(
                &NwKernelRegression::from_w(&p[0]).forward(&p[1], &kl, &vl),
                &y,
            )
        },
        &[w, x.clone()],
    )
    .unwrap();
}

#[test]
fn training_lowers_the_leave_one_out_loss_and_sharpens_the_weights() {
    let data = small_data(5);
    let (kl, vl) = (leave_one_out(&data.x_train), leave_one_out(&data.y_train));
    let model = NwKernelRegression::new(1.0);
    let history = train(&model, &data.x_train, &kl, &vl, &data.y_train, 60, 0.2);
    assert_eq!(history.len(), 60);
    assert_eq!(history[0].w, 1.0);
    let (first, last) = (history[0].loss, history[59].loss);
    assert!(last < 0.8 * first, "loss {first} -> {last}");
    assert!(model.w() > 1.5, "w = {}", model.w());
    // A larger w is a narrower kernel: fewer keys carry the weight.
    let before = effective_keys(
        &NwKernelRegression::new(1.0).weights(&data.x_test, &data.x_train),
    );
    let after = effective_keys(&model.weights(&data.x_test, &data.x_train));
    assert!(after.mean().item() < 0.7 * before.mean().item());
}

#[test]
fn training_finds_the_bottom_of_the_leave_one_out_curve() {
    let data = small_data(6);
    let (kl, vl) = (leave_one_out(&data.x_train), leave_one_out(&data.y_train));
    let model = NwKernelRegression::new(1.0);
    let history = train(&model, &data.x_train, &kl, &vl, &data.y_train, 150, 0.2);
    let trained = history.last().expect("150 steps").loss;
    let grid: Vec<f32> = (-16..=16).map(|k| 10f32.powf(k as f32 / 8.0)).collect();
    let best = width_sweep(&data, &grid)
        .iter()
        .map(|r| r.loo_mse)
        .fold(f32::INFINITY, f32::min);
    assert!(
        trained <= best + 1e-3,
        "trained {trained}, best on the grid {best}"
    );
}

#[test]
fn without_leave_one_out_the_loss_keeps_falling_as_the_kernel_narrows() {
    let data = small_data(8);
    let (x, y) = (&data.x_train, &data.y_train);
    let model = NwKernelRegression::new(1.0);
    let history = train(&model, x, x, y, y, 100, 0.2);
    assert!(history.windows(2).all(|p| p[1].w > p[0].w), "w only grows");
    assert!(
        history.windows(2).all(|p| p[1].loss < p[0].loss),
        "the loss only falls"
    );
    // In the limit each point attends only to itself and predicts its own target exactly.
    let memorised = NwKernelRegression::new(1000.0).forward(x, x, y);
    assert!(mse(&memorised, y).item() < 1e-6);
}

#[test]
fn the_width_sweep_is_worst_at_both_ends_on_the_leave_one_out_loss() {
    let data = small_data(9);
    let sweep = width_sweep(&data, &[0.01, 0.3, 100.0]);
    assert_eq!(sweep.len(), 3);
    let (narrow, middle, wide) = (sweep[0], sweep[1], sweep[2]);
    assert!(
        middle.loo_mse < narrow.loo_mse && middle.loo_mse < wide.loo_mse,
        "{sweep:?}"
    );
    // Too wide is average pooling: every key in use, and its test error.
    let average =
        mse(&average_pooling(&data.x_test, &data.y_train), &data.y_test).item();
    assert!((wide.test_mse - average).abs() < 1e-4);
    assert!((wide.effective_keys - 30.0).abs() < 1e-2);
    assert!(narrow.effective_keys < 1.5);
}

#[test]
fn effective_keys_count_uniform_rows_fully_and_one_hot_rows_once() {
    let w = Tensor::from_vec(
        vec![
            0.25, 0.25, 0.25, 0.25, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0,
        ],
        [3, 4],
    );
    assert_close(&effective_keys(&w).to_vec(), &[4.0, 1.0, 2.0], 1e-6);
}

#[test]
fn weight_within_adds_the_weights_of_the_keys_inside_the_radius() {
    let weights =
        Tensor::from_vec(vec![0.1, 0.2, 0.3, 0.4, 0.4, 0.3, 0.2, 0.1], [2, 4]);
    let (queries, keys) = (t(&[0.0, 3.0]), t(&[0.0, 0.4, 1.0, 3.2]));
    // Query 0 keeps keys 0 and 0.4; query 3 keeps key 3.2 only.
    let near = weight_within(&weights, &queries, &keys, 0.5);
    assert_close(&near.to_vec(), &[0.3, 0.1], 1e-6);
}

#[test]
fn the_naive_softmax_turns_underflowing_scores_into_nan_and_the_stable_one_does_not()
{
    let scores = Tensor::from_vec(vec![-1000.0, -1001.0, 0.0, 1.0], [2, 2]);
    let naive = naive_softmax(&scores).to_vec();
    assert!(naive[0].is_nan() && naive[1].is_nan(), "{naive:?}");
    let e = (-1f32).exp();
    let expected = [
        1.0 / (1.0 + e),
        e / (1.0 + e),
        e / (1.0 + e),
        1.0 / (1.0 + e),
    ];
    assert_close(&naive[2..], &expected[2..], 1e-6);
    assert_close(&stable_softmax(&scores).to_vec(), &expected, 1e-6);
    assert_eq!(rows_with_nan(&naive_softmax(&scores)), 1);
    assert_eq!(rows_with_nan(&stable_softmax(&scores)), 0);
}

#[test]
fn the_stable_softmax_is_the_engines_softmax_with_the_same_gradient() {
    engine::manual_seed(11);
    let scores = Tensor::randn([3, 5]) * 4.0;
    assert_close(
        &stable_softmax(&scores).to_vec(),
        &scores.softmax(-1).to_vec(),
        1e-6,
    );
    gradcheck(|x| stable_softmax(&x[0]), &[scores]).unwrap();
}

#[test]
fn heatmap_ticks_label_every_tenth_entry() {
    let values: Vec<f32> = (0..25).map(|i| i as f32 * 0.1).collect();
    let labels = tick_labels(&values, 10);
    assert_eq!(labels.len(), 25);
    assert_eq!(
        (labels[0].as_str(), labels[10].as_str(), labels[20].as_str()),
        ("0.0", "1.0", "2.0")
    );
    assert!(
        labels
            .iter()
            .enumerate()
            .all(|(i, l)| (i % 10 == 0) != l.is_empty())
    );
}
