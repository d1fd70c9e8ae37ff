//! Pitfall 4: the NaN of a fully masked row, found with anomaly mode and fixed by the
//! safe fill; what each fill sends to that row's gradients.

use attention::{Fill, Mask, masked_softmax};
use chapter10::nan_rows::{
    AnomalyReport, BATCH, EMPTY, KEYS, LENGTHS, RowFill, VALUE_SIZE, anomaly_check,
    anomaly_report, backward_anomaly_report, empty_row_batch, forward,
    gradient_table, health, locate, loss, masked_weights, neg_inf_refused,
    row_gradients,
};
use engine::Tensor;
use lesson::assert_close;

/// Row `b` of a tensor whose first dimension is the batch.
fn example(t: &Tensor, b: usize) -> Vec<f32> {
    let values = t.to_vec();
    let len = values.len() / t.size(0);
    values[b * len..(b + 1) * len].to_vec()
}

#[test]
fn the_batch_has_one_empty_example() {
    assert_eq!(LENGTHS[EMPTY], 0.0);
    let batch = empty_row_batch();
    let keep = Mask::valid_lens(&batch.lens)
        .keep_for("test", &[BATCH, 1, KEYS])
        .unwrap();
    assert_eq!(
        keep.to_vec(),
        vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    );
    // Seeded: two calls give the same numbers.
    assert_eq!(batch.query.to_vec(), empty_row_batch().query.to_vec());
}

#[test]
fn the_neg_inf_fill_turns_the_empty_row_and_the_loss_into_nan() {
    let pass = forward(&empty_row_batch(), RowFill::NegInf);
    assert!(example(&pass.weights, EMPTY).iter().all(|w| w.is_nan()));
    assert!(example(&pass.context, EMPTY).iter().all(|c| c.is_nan()));
    assert!(pass.loss.item().is_nan());
    // The other examples are untouched: finite, summing to 1, padding at exactly 0.
    for b in [0, 2] {
        let weights = example(&pass.weights, b);
        assert!(
            (weights.iter().sum::<f32>() - 1.0).abs() < 1e-6,
            "{weights:?}"
        );
        assert!(example(&pass.context, b).iter().all(|c| c.is_finite()));
    }
    assert_eq!(&example(&pass.weights, 2)[2..], &[0.0, 0.0]);
    assert!(loss(RowFill::NegInf).is_nan());
}

#[test]
fn health_finds_the_infinities_of_the_fill_and_the_first_nan_in_the_weights() {
    let pass = forward(&empty_row_batch(), RowFill::NegInf);
    let counts: Vec<(&str, usize, usize)> = health(&pass)
        .iter()
        .map(|h| (h.step, h.nan, h.inf))
        .collect();
    // 4 masked keys in the empty example and 2 in example 2 become -inf; the softmax
    // turns the 4 of the empty row into NaN, and they spread to its context and the
    // loss.
    assert_eq!(
        counts,
        vec![
            ("scores", 0, 0),
            ("filled", 0, 6),
            ("weights", 4, 0),
            ("values", 0, 0),
            ("context", VALUE_SIZE, 0),
            ("loss", 1, 0),
        ]
    );
    let safe = forward(&empty_row_batch(), RowFill::Safe);
    assert!(health(&safe).iter().all(|h| h.nan == 0 && h.inf == 0));
    assert_eq!(
        health(&safe)[1].to_string(),
        " weights [3, 1, 4]  NaN:  0  inf:  0"
    );
}

#[test]
fn anomaly_mode_stops_at_the_neg_inf_of_the_fill_in_the_empty_example() {
    let message = anomaly_report();
    assert_eq!(
        message,
        "anomaly: the forward pass of `where` produced -inf at element 4 of its \
         output\n  input shapes: [3, 1, 4], [], [3, 1, 4]"
    );
    let report = AnomalyReport::parse(&message).unwrap();
    assert_eq!(
        report,
        AnomalyReport {
            pass: "forward".into(),
            op: "where".into(),
            value: "-inf".into(),
            element: 4,
            input: None,
            input_shapes: vec![vec![3, 1, 4], vec![], vec![3, 1, 4]],
        }
    );
    // Element 4 of the [B, 1, K] scores: example 1, query 0, key 0, the empty
    // example.
    assert_eq!(
        locate(report.element, &report.input_shapes[0]),
        vec![EMPTY, 0, 0]
    );
}

#[test]
fn anomaly_mode_around_backward_only_names_the_loss_where_the_nan_arrives() {
    let report = AnomalyReport::parse(&backward_anomaly_report()).unwrap();
    assert_eq!(
        (
            report.pass.as_str(),
            report.op.as_str(),
            report.value.as_str()
        ),
        ("backward", "powf", "NaN")
    );
    assert_eq!(report.input, Some(0));
    assert_eq!(report.input_shapes, vec![vec![BATCH, VALUE_SIZE]]);
    // Element 2 of the [B, dv] context difference: example 1, the symptom, not the
    // cause.
    assert_eq!(locate(report.element, &[BATCH, VALUE_SIZE]), vec![EMPTY, 0]);
}

#[test]
fn anomaly_mode_sees_nothing_wrong_with_the_finite_fills() {
    for fill in [RowFill::D2l, RowFill::Article] {
        assert_eq!(anomaly_check(fill), Ok(loss(fill)), "{}", fill.name());
        // Yet the empty example attends to its padding, uniformly.
        let pass = forward(&empty_row_batch(), fill);
        assert_eq!(example(&pass.weights, EMPTY), vec![0.25; KEYS]);
    }
    assert_eq!(anomaly_check(RowFill::NegInf), Err(anomaly_report()));
}

#[test]
fn the_safe_fill_passes_anomaly_mode_with_a_finite_loss() {
    // The fix checked the way the failure was found: no report.
    let loss =
        anomaly_check(RowFill::Safe).expect("no op makes a NaN or an infinity");
    assert!(loss.is_finite());
    assert_eq!(loss, chapter10::nan_rows::loss(RowFill::Safe));
}

#[test]
fn locate_and_parse_read_any_shape_and_refuse_other_messages() {
    assert_eq!(locate(0, &[2, 3]), vec![0, 0]);
    assert_eq!(locate(5, &[2, 3]), vec![1, 2]);
    assert_eq!(locate(7, &[2, 2, 2]), vec![1, 1, 1]);
    assert_eq!(AnomalyReport::parse("matmul: [2, 3] × [4, 5]"), None);
}

#[test]
fn the_library_refuses_a_neg_inf_constant_and_says_why() {
    assert_eq!(
        neg_inf_refused(),
        "masked_softmax: Fill::Constant needs a finite value, found -inf; hint: -inf \
         makes a fully masked row 0/0 = NaN, and Fill::Safe excludes masked keys \
         exactly"
    );
}

#[test]
fn the_finite_fills_by_hand_are_the_library_s() {
    let pass = forward(&empty_row_batch(), RowFill::D2l);
    let lens = empty_row_batch().lens;
    let mask = Mask::valid_lens(&lens);
    let cases = [
        (RowFill::D2l, Fill::D2l),
        (RowFill::Article, Fill::Constant(-1e9)),
    ];
    for (fill, library) in cases {
        assert_eq!(
            masked_weights(&pass.scores, &lens, fill).to_vec(),
            masked_softmax(&pass.scores, &mask, library).to_vec()
        );
    }
}

#[test]
fn the_safe_fill_gives_the_empty_row_zero_weights_and_a_finite_loss() {
    let batch = empty_row_batch();
    let safe = forward(&batch, RowFill::Safe);
    assert_eq!(example(&safe.weights, EMPTY), vec![0.0; KEYS]);
    assert_eq!(example(&safe.context, EMPTY), vec![0.0; VALUE_SIZE]);
    assert!(safe.loss.item().is_finite());
    // The examples with keys get the weights of the finite fills.
    let d2l = forward(&batch, RowFill::D2l);
    for b in [0, 2] {
        assert_close(&example(&safe.weights, b), &example(&d2l.weights, b), 1e-6);
    }
    // The two losses differ by the empty example's term alone: its context is the
    // mean m of its padded values under -1e6 and 0 under the safe fill, so L(-1e6) −
    // L(safe) = (Σⱼ (mⱼ − tⱼ)² − Σⱼ tⱼ²) / (B · dv).
    let values = example(&d2l.values, EMPTY);
    let target = example(&batch.target, EMPTY);
    let difference: f32 = (0..VALUE_SIZE)
        .map(|j| {
            let m = (0..KEYS).map(|k| values[k * VALUE_SIZE + j]).sum::<f32>() / 4.0;
            (m - target[j]).powi(2) - target[j].powi(2)
        })
        .sum::<f32>()
        / (BATCH * VALUE_SIZE) as f32;
    let measured = d2l.loss.item() - safe.loss.item();
    assert!(
        (measured - difference).abs() < 1e-5,
        "{measured} {difference}"
    );
}

#[test]
fn the_finite_fills_send_a_quarter_of_the_row_s_gradient_to_each_padded_value() {
    let batch = empty_row_batch();
    for fill in [RowFill::D2l, RowFill::Article] {
        let g = row_gradients(fill);
        let pass = forward(&batch, fill);
        // dL/dcontext = 2 (context − target) / (B · dv) for the mean squared error.
        let context = example(&pass.context, EMPTY);
        let target = example(&batch.target, EMPTY);
        let n = (BATCH * VALUE_SIZE) as f32;
        let expected: Vec<f32> = (0..VALUE_SIZE)
            .map(|j| 2.0 * (context[j] - target[j]) / n)
            .collect();
        assert_close(&g.context_grad, &expected, 1e-6);
        // Uniform weights 1/K: each padded value gets 1/4 of the context's gradient.
        assert_eq!(g.weights, vec![0.25; KEYS]);
        let quarter: Vec<f32> = (0..KEYS * VALUE_SIZE)
            .map(|i| g.context_grad[i % VALUE_SIZE] / 4.0)
            .collect();
        assert_close(&g.value_grad, &quarter, 1e-7);
        assert!(g.value_grad.iter().all(|&v| v != 0.0));
        // masked_fill passes no gradient to what it overwrote: the scores get none.
        assert_eq!(g.score_grad, vec![0.0; KEYS]);
        // Padding in a row with visible keys gets nothing, under every fill.
        assert_eq!(g.other_padding_grad, vec![0.0; 2 * VALUE_SIZE]);
        assert!(g.poisoned.is_empty());
    }
}

#[test]
fn the_empty_row_leaks_into_the_shared_value_projection_under_a_finite_fill() {
    // dL/dW_v[i, j] = Σ_{b, k} dL/dvalues[b, k, i] · x[b, k, j]: the empty example
    // adds Σₖ (gᵢ / 4) x[1, k, j] = gᵢ · mean_k x[1, k, j], which the safe fill does
    // not.
    let d2l = row_gradients(RowFill::D2l);
    let safe = row_gradients(RowFill::Safe);
    let x = example(&empty_row_batch().inputs, EMPTY);
    let mut leak = Vec::new();
    for i in 0..VALUE_SIZE {
        for j in 0..VALUE_SIZE {
            let mean = (0..KEYS).map(|k| x[k * VALUE_SIZE + j]).sum::<f32>() / 4.0;
            leak.push(d2l.context_grad[i] * mean);
        }
    }
    let difference: Vec<f32> = d2l
        .w_v_grad
        .iter()
        .zip(&safe.w_v_grad)
        .map(|(a, b)| a - b)
        .collect();
    assert_close(&difference, &leak, 1e-5);
    assert!(leak.iter().any(|v| v.abs() > 1e-2), "{leak:?}");
}

#[test]
fn the_neg_inf_fill_poisons_the_values_and_their_projection_with_nan() {
    let g = row_gradients(RowFill::NegInf);
    assert!(g.loss.is_nan());
    assert!(g.weights.iter().all(|w| w.is_nan()));
    assert!(g.context_grad.iter().all(|c| c.is_nan()));
    assert!(g.value_grad.iter().all(|v| v.is_nan()));
    assert!(g.w_v_grad.iter().all(|v| v.is_nan()));
    // The scores' gradient is 0, not NaN: masked_fill sends nothing to overwritten
    // entries, so W_q, W_k and v stay finite here. Only W_v is poisoned.
    assert_eq!(g.score_grad, vec![0.0; KEYS]);
    assert_eq!(g.poisoned, vec!["W_v"]);
}

#[test]
fn the_safe_fill_sends_exactly_zero_to_the_empty_row() {
    let g = row_gradients(RowFill::Safe);
    assert!(g.loss.is_finite());
    assert_eq!(g.weights, vec![0.0; KEYS]);
    assert_eq!(g.score_grad, vec![0.0; KEYS]);
    assert_eq!(g.value_grad, vec![0.0; KEYS * VALUE_SIZE]);
    assert!(g.poisoned.is_empty());
}

#[test]
fn the_table_has_a_row_per_fill_and_the_two_finite_fills_agree() {
    let table = gradient_table();
    let fills: Vec<RowFill> = table.iter().map(|g| g.fill).collect();
    assert_eq!(fills, RowFill::ALL.to_vec());
    let (d2l, article) = (&table[0], &table[1]);
    assert_eq!(d2l.loss, article.loss);
    assert_eq!(d2l.weights, article.weights);
    assert_eq!(d2l.value_grad, article.value_grad);
    assert_eq!(d2l.w_v_grad, article.w_v_grad);
    let printed = table[3].to_string();
    assert!(printed.starts_with("Fill::Safe: loss = "), "{printed}");
    assert!(printed.contains("parameters with NaN gradients: none"));
    assert!(
        table[2]
            .to_string()
            .contains("parameters with NaN gradients: W_v")
    );
    for line in table
        .iter()
        .flat_map(|g| g.to_string().lines().map(String::from).collect::<Vec<_>>())
    {
        assert!(line.chars().count() <= 86, "{line}");
    }
}
