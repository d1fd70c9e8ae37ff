//! The lesson's code: both step-by-step forms against the library modules, hand-derived
//! values, gradients, the initialisations and their weights, the toy training run, the
//! memory measurements and the error messages the page reads.

use attention::prelude::*;
use chapter05::{
    AdditiveByHand, BahdanauByHand, Init, KEYS, QUERIES, ToyBatch, Trace,
    batched_example, decoder_example, init_study, initialise, max_abs_diff,
    measure_forward, pairs_bytes, panic_message, refused_forward, table, toy_run,
    weight_stats,
};
use engine::gradcheck::gradcheck;

#[test]
fn the_batched_form_by_hand_gives_the_numbers_of_additive_attention() {
    let (library, [queries, keys, values, lens]) = batched_example();
    let by_hand = AdditiveByHand::from_state_dict(&library.state_dict());
    let mask = Mask::valid_lens(&lens);
    let (output, weights) =
        by_hand.forward(&queries, &keys, &values, &mask, &mut Trace::default());
    let expected = library.forward(&queries, &keys, &values, &mask);
    assert_eq!(output.to_vec(), expected.to_vec());
    assert_eq!(
        weights.to_vec(),
        library.last_attention_weights().unwrap().to_vec()
    );
}

#[test]
fn weights_given_by_hand_load_into_both_the_library_module_and_the_step_by_step_one()
{
    engine::manual_seed(3);
    let state = StateDict::from([
        ("W_q.weight", Tensor::randn([4, 3])),
        ("W_k.weight", Tensor::randn([4, 2])),
        ("w_v.weight", Tensor::randn([1, 4])),
    ]);
    let config = AdditiveAttentionConfig {
        query_size: 3,
        key_size: 2,
        num_hiddens: 4,
        scoring: AdditiveScoring::Broadcast,
        ..Default::default()
    };
    let library = AdditiveAttention::from_state_dict(config, &state).unwrap();
    let by_hand = AdditiveByHand::from_state_dict(&state);
    let (queries, keys, values) = (
        Tensor::randn([2, 2, 3]),
        Tensor::randn([2, 5, 2]),
        Tensor::randn([2, 5, 3]),
    );
    let (output, _) = by_hand.forward(
        &queries,
        &keys,
        &values,
        &Mask::none(),
        &mut Trace::default(),
    );
    let expected = library.forward(&queries, &keys, &values, &Mask::none());
    assert_eq!(max_abs_diff(&output, &expected), 0.0);
}

#[test]
fn the_decoder_form_by_hand_gives_the_numbers_of_bahdanau_attention() {
    let (library, [query, keys, pad]) = decoder_example();
    let by_hand = BahdanauByHand::from_state_dict(&library.state_dict());
    let mask = Mask::key_padding(&pad);
    let (context, weights) =
        by_hand.forward(&query, &keys, &keys, &mask, &mut Trace::default());
    let (expected, expected_weights) = library.forward(&query, &keys, &keys, &mask);
    assert_eq!(context.to_vec(), expected.to_vec());
    assert_eq!(weights.to_vec(), expected_weights.to_vec());
    assert_eq!(weights.to_vec()[7], 0.0, "the padding key of example 1");
}

#[test]
fn the_trace_holds_every_step_with_a_layout_of_its_rank() {
    let (library, [queries, keys, values, lens]) = batched_example();
    let by_hand = AdditiveByHand::from_state_dict(&library.state_dict());
    let mut trace = Trace::default();
    by_hand.forward(
        &queries,
        &keys,
        &values,
        &Mask::valid_lens(&lens),
        &mut trace,
    );
    assert_eq!(trace.shape_of("tanh(q + k)"), Some(&[2, 3, 4, 8][..]));
    assert_eq!(trace.shape_of("scores"), Some(&[2, 3, 4][..]));
    assert_eq!(trace.shape_of("weights.bmm(values)"), Some(&[2, 3, 7][..]));
    assert_eq!(trace.steps().len(), 12);
    for step in trace.steps() {
        let names = step.layout.split(',').count();
        assert_eq!(
            names,
            step.shape.len(),
            "{} is {:?} but reads {}",
            step.name,
            step.shape,
            step.layout
        );
    }
    let (decoder, [query, keys, pad]) = decoder_example();
    let mut trace = Trace::default();
    BahdanauByHand::from_state_dict(&decoder.state_dict()).forward(
        &query,
        &keys,
        &keys,
        &Mask::key_padding(&pad),
        &mut trace,
    );
    assert_eq!(trace.shape_of("tanh(q + k)"), Some(&[2, 4, 8][..]));
    for step in trace.steps() {
        assert_eq!(
            step.layout.split(',').count(),
            step.shape.len(),
            "{}",
            step.name
        );
    }
}

#[test]
fn with_one_feature_and_unit_weights_the_score_is_tanh_of_the_sum() {
    let one = Tensor::ones([1, 1]);
    let state = StateDict::from([
        ("W_q.weight", one.clone()),
        ("W_k.weight", one.clone()),
        ("w_v.weight", one),
    ]);
    let by_hand = AdditiveByHand::from_state_dict(&state);
    let query = Tensor::from_vec(vec![0.5], [1, 1, 1]);
    let keys = Tensor::from_vec(vec![0.0, 1.0], [1, 2, 1]);
    let values = Tensor::from_vec(vec![10.0, 20.0], [1, 2, 1]);
    let (output, weights) =
        by_hand.forward(&query, &keys, &values, &Mask::none(), &mut Trace::default());
    // scores tanh(0.5) and tanh(1.5); α₀ = 1 / (1 + e^(s₁ − s₀)).
    let a0 = 1.0 / (1.0 + (1.5f32.tanh() - 0.5f32.tanh()).exp());
    let w = weights.to_vec();
    assert!(
        (w[0] - a0).abs() < 1e-6 && (w[1] - (1.0 - a0)).abs() < 1e-6,
        "{w:?}"
    );
    assert!((output.item() - (10.0 * a0 + 20.0 * (1.0 - a0))).abs() < 1e-4);
}

#[test]
fn masked_keys_get_no_weight_and_every_row_sums_to_one() {
    let (library, [queries, keys, values, lens]) = batched_example();
    let by_hand = AdditiveByHand::from_state_dict(&library.state_dict());
    let (_, weights) = by_hand.forward(
        &queries,
        &keys,
        &values,
        &Mask::valid_lens(&lens),
        &mut Trace::default(),
    );
    let w = weights.to_vec();
    for (r, row) in w.chunks(4).enumerate() {
        assert!(
            (row.iter().sum::<f32>() - 1.0).abs() < 1e-6,
            "row {r}: {row:?}"
        );
        if r >= 3 {
            // Example 1 has 2 real keys.
            assert_eq!(&row[2..], &[0.0, 0.0], "row {r}");
            assert!(row[0] > 0.0 && row[1] > 0.0);
        }
    }
}

#[test]
fn padding_keys_do_not_change_the_decoder_context() {
    let (library, [query, keys, pad]) = decoder_example();
    let by_hand = BahdanauByHand::from_state_dict(&library.state_dict());
    let mask = Mask::key_padding(&pad);
    let (context, _) =
        by_hand.forward(&query, &keys, &keys, &mask, &mut Trace::default());
    // Overwrite the padding key (example 1, key 3) with large values.
    let keep = pad.unsqueeze(-1);
    let changed = &keys * &keep + (1.0 - &keep) * 100.0;
    assert_ne!(changed.to_vec(), keys.to_vec());
    let (again, _) =
        by_hand.forward(&query, &changed, &changed, &mask, &mut Trace::default());
    assert_eq!(context.to_vec(), again.to_vec());
}

#[test]
fn gradients_of_both_forms_match_finite_differences() {
    engine::manual_seed(4);
    let batched = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 3,
        key_size: 2,
        num_hiddens: 4,
        ..Default::default()
    });
    let by_hand = AdditiveByHand::from_state_dict(&batched.state_dict());
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![3.0, 2.0], [2]));
    let inputs = [
        Tensor::randn([2, 2, 3]),
        Tensor::randn([2, 3, 2]),
        Tensor::randn([2, 3, 2]),
    ];
    gradcheck(
        |t| {
            by_hand
                .forward(&t[0], &t[1], &t[2], &lens, &mut Trace::default())
                .0
        },
        &inputs,
    )
    .unwrap();

    let decoder = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 3,
        key_size: 2,
        value_size: 2,
        num_hiddens: 4,
        ..Default::default()
    });
    let by_hand = BahdanauByHand::from_state_dict(&decoder.state_dict());
    let inputs = [
        Tensor::randn([2, 3]),
        Tensor::randn([2, 3, 2]),
        Tensor::randn([2, 3, 2]),
    ];
    gradcheck(
        |t| {
            by_hand
                .forward(&t[0], &t[1], &t[2], &lens, &mut Trace::default())
                .0
        },
        &inputs,
    )
    .unwrap();
}

#[test]
fn weight_stats_of_hand_made_weights() {
    let uniform = weight_stats(&Tensor::full([2, 4], 0.25));
    assert!(uniform.score_std.abs() < 1e-6);
    assert!((uniform.entropy_ratio - 1.0).abs() < 1e-6);
    assert!((uniform.max_times_k - 1.0).abs() < 1e-6);
    // [1/2, 1/4, 1/4]: H = 1.5 ln 2, the logs are -ln 2, -2 ln 2, -2 ln 2.
    let s = weight_stats(&Tensor::from_vec(vec![0.5, 0.25, 0.25], [3]));
    let ln2 = 2f32.ln();
    assert!((s.entropy_ratio - 1.5 * ln2 / 3f32.ln()).abs() < 1e-6);
    assert!((s.max_times_k - 1.5).abs() < 1e-6);
    assert!((s.score_std - 2f32.sqrt() / 3.0 * ln2).abs() < 1e-6);
}

#[test]
fn each_initialisation_draws_from_its_own_range() {
    let make = || {
        BahdanauAttention::new(BahdanauAttentionConfig {
            query_size: 12,
            key_size: 8,
            value_size: 8,
            num_hiddens: 16,
            ..Default::default()
        })
    };
    let get = |m: &BahdanauAttention, name: &str| {
        m.state_dict().get(name).unwrap().to_vec()
    };
    let max = |v: &[f32]| v.iter().fold(0.0f32, |a, x| a.max(x.abs()));

    engine::manual_seed(0);
    let default = make();
    let before = get(&default, "W_q.bias");
    initialise(&default, Init::Default);
    assert_eq!(
        get(&default, "W_q.bias"),
        before,
        "the default is what new drew"
    );
    assert!(max(&get(&default, "v")) <= 0.25, "v is U(±1/√16)");

    let xavier = make();
    initialise(&xavier, Init::Xavier);
    let w_q = get(&xavier, "W_q.weight");
    let bound = (6.0f32 / (16.0 + 12.0)).sqrt();
    assert!(
        max(&w_q) <= bound && max(&w_q) > 0.9 * bound,
        "{}",
        max(&w_q)
    );
    let v_bound = (6.0f32 / (16.0 + 1.0)).sqrt();
    assert!(max(&get(&xavier, "v")) <= v_bound && max(&get(&xavier, "v")) > 0.25);
    assert!(get(&xavier, "W_k.bias").iter().all(|&b| b == 0.0));

    let normal = make();
    initialise(&normal, Init::Normal002);
    let w = get(&normal, "W_q.weight");
    let std = (w.iter().map(|x| x * x).sum::<f32>() / w.len() as f32).sqrt();
    assert!((std - 0.02).abs() < 0.003, "std {std}");
    assert!(get(&normal, "W_o.bias").iter().all(|&b| b == 0.0));
}

#[test]
fn at_initialisation_the_weights_are_almost_uniform_as_the_small_score_formula_says()
{
    let rows = init_study();
    assert_eq!(rows.len(), 6);
    for (form, scheme, s) in &rows {
        assert!(s.entropy_ratio > 0.9, "{form} {scheme:?}: {s:?}");
        // H ≈ ln K − σ²/2 for small score spreads σ.
        let predicted = 1.0 - s.score_std.powi(2) / (2.0 * 10f32.ln());
        assert!(
            (s.entropy_ratio - predicted).abs() < 0.01,
            "{form} {scheme:?}: {s:?}"
        );
        if *scheme == Init::Normal002 {
            assert!(
                s.entropy_ratio > 0.9999 && s.max_times_k < 1.02,
                "{form}: {s:?}"
            );
        }
    }
}

#[test]
fn toy_targets_are_the_real_key_with_the_largest_feature() {
    engine::manual_seed(9);
    let batch = ToyBatch::draw(6);
    let (keys, targets, lens) = (
        batch.keys.to_vec(),
        batch.targets.to_vec(),
        batch.lens.to_vec(),
    );
    for b in 0..6 {
        let len = lens[b] as usize;
        assert!((5..=KEYS).contains(&len));
        for i in 0..QUERIES {
            let row = &targets[(b * QUERIES + i) * KEYS..][..KEYS];
            let target = row.iter().position(|&t| t == 1.0).unwrap();
            assert_eq!(row.iter().sum::<f32>(), 1.0);
            assert!(target < len, "a padding key is never the answer");
            let feature = |j: usize| keys[(b * KEYS + j) * 5 + i];
            assert!((0..len).all(|j| feature(j) <= feature(target)));
        }
    }
}

#[test]
fn training_sharpens_the_weights_and_without_the_mask_padding_takes_weight() {
    let run = toy_run(Init::Default);
    assert!(
        run.after.loss < run.before.loss / 3.0,
        "{:?} then {:?}",
        run.before,
        run.after
    );
    assert!(run.after.accuracy > 0.8);
    assert!(run.before.entropy_ratio > 0.9 && run.after.entropy_ratio < 0.5);
    assert_eq!(
        (run.before.padding_weight, run.after.padding_weight),
        (0.0, 0.0)
    );
    assert!(run.after_unmasked.padding_weight > 0.1);
    assert!(run.after_unmasked.accuracy < run.after.accuracy);
    assert!(run.len < KEYS, "the example shown has padding");
    let w = run.weights_after.to_vec();
    assert!(
        w.chunks(KEYS)
            .all(|row| row[run.len..].iter().all(|&a| a == 0.0))
    );
    assert_eq!(run.curve.first().unwrap(), &(0, run.before.loss));
}

#[test]
fn the_forward_pass_holds_the_pairs_tensor_twice() {
    let (b, q, k, h) = (2, 16, 16, 32);
    let pairs = pairs_bytes(b, q, k, h);
    assert_eq!(pairs, 65536);
    let inference = measure_forward((b, q, k, h), AdditiveScoring::Broadcast, false);
    // q + k and its tanh are alive together; everything else is a small fraction.
    assert!(inference.peak >= 2 * pairs, "{inference:?}");
    assert!(inference.peak < 2 * pairs + pairs / 4, "{inference:?}");
    assert!(
        inference.held < pairs / 8,
        "no_grad frees them: {inference:?}"
    );
    let training = measure_forward((b, q, k, h), AdditiveScoring::Broadcast, true);
    assert!(
        training.held >= 2 * pairs,
        "the graph keeps both for backward: {training:?}"
    );
}

#[test]
fn fused_scores_hold_no_pairs_tensor_and_give_the_same_numbers() {
    let sizes @ (b, q, k, h) = (4, 64, 64, 32);
    let pairs = pairs_bytes(b, q, k, h);
    for training in [false, true] {
        let fused = measure_forward(sizes, AdditiveScoring::Fused, training);
        let broadcast = measure_forward(sizes, AdditiveScoring::Broadcast, training);
        assert!(fused.peak < pairs / 4, "{fused:?}");
        assert!(broadcast.peak >= 2 * pairs, "{broadcast:?}");
    }
    // The same weights, both ways: the same outputs up to tanh's last bits.
    let (library, [queries, keys, values, lens]) = batched_example();
    let config = AdditiveAttentionConfig {
        query_size: 5,
        key_size: 6,
        num_hiddens: 8,
        ..Default::default()
    };
    let fused =
        AdditiveAttention::from_state_dict(config, &library.state_dict()).unwrap();
    let mask = Mask::valid_lens(&lens);
    let difference = max_abs_diff(
        &fused.forward(&queries, &keys, &values, &mask),
        &library.forward(&queries, &keys, &values, &mask),
    );
    assert!(difference < 1e-6, "{difference}");
}

#[test]
fn the_realistic_size_needs_sixteen_gib_and_the_budget_refuses_it_clearly() {
    assert_eq!(pairs_bytes(64, 512, 512, 256), 16 << 30);
    assert_eq!(pairs_bytes(64, 512, 512, 1), 64 << 20);
    let message = refused_forward(8, 64, 64, 64, 6 << 20);
    assert!(
        message.starts_with("add: the result [8, 64, 64, 64] needs 8.00 MiB"),
        "{message}"
    );
    assert!(message.contains("budget is 6.00 MiB"), "{message}");
}

#[test]
fn size_mistakes_name_the_module_the_argument_and_the_sizes() {
    let (library, [queries, keys, values, lens]) = batched_example();
    let mask = Mask::valid_lens(&lens);
    let m = panic_message(|| {
        library.forward(&queries, &Tensor::zeros([2, 4, 5]), &values, &mask);
    });
    assert_eq!(
        m,
        "AdditiveAttention: keys [2, 4, 5] has 5 at dimension 2 but key_size is 6"
    );
    let m = panic_message(|| {
        library.forward(&queries, &keys, &Tensor::zeros([2, 5, 7]), &mask);
    });
    assert!(m.ends_with("found 4 keys and 5 values"), "{m}");
    // One query per example, [B, q_size], is refused by the batched form.
    let m = panic_message(|| {
        library.forward(&queries.narrow(1, 0, 1).squeeze(1), &keys, &values, &mask);
    });
    assert!(
        m.contains("queries must have shape [B, Q, query_size], found [2, 5]"),
        "{m}"
    );
    let m = panic_message(|| {
        let _ = queries.unsqueeze(2) + keys.unsqueeze(1);
    });
    assert!(
        m.starts_with("add: cannot broadcast [2, 3, 1, 5] with [2, 1, 4, 6]"),
        "{m}"
    );
    let (decoder, [query, keys, _]) = decoder_example();
    let m = panic_message(|| {
        decoder.forward(&query.unsqueeze(1), &keys, &keys, &Mask::none());
    });
    assert!(
        m.contains("query must have shape [B, query_size], found [2, 1, 5]"),
        "{m}"
    );
}

#[test]
fn a_table_labels_rows_and_columns() {
    let t = table(
        &Tensor::from_vec(vec![0.5, 0.25, 1.0, 0.0], [2, 2]),
        &["a".into(), "bb".into()],
        &["x".into(), "y".into()],
    );
    assert_eq!(t, "        x      y\na   0.500  0.250\nbb  1.000  0.000");
}
