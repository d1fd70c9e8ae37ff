//! The lesson's claims, checked: the scorings fit chapter 9's decoder and count the
//! parameters the page says, one seed starts them all from the same model, each one
//! learns, the hybrid's two scores and its gate are what the module computes, and the
//! recorded comparison is what the code computes (its first steps replayed, its bytes
//! counted again) and reads as the page says.

use attention::prelude::*;
use chapter09::{Batch, DecoderAttention, TrainConfig, Trainer, Vocab, exact_match};
use chapter12::compare::{
    EVAL_EVERY, SEEDS, STEPS, branch_scores, reading, train_config,
    training_step_peak_bytes,
};
use chapter12::complexity::{SWEEP_SIZES, SweepCall, Variant, multiply_adds};
use chapter12::record::{RECORDED_TABLES, Record};
use chapter12::scorings::{
    HYBRID_ADDITIVE_HIDDENS, ProjectedDotProduct, Scorer, Scoring, gate_value,
};
use lesson::{assert_close, panic_message};

/// The batch of chapter 9's tour: sources of 6, 2 and 5 tokens.
fn tour_batch() -> Batch {
    Batch::new(&[342, 12, 40_005], &Vocab::source(), &Vocab::target())
}

#[test]
fn every_scoring_gives_a_context_of_h_and_weights_over_the_real_outputs() {
    let config = train_config(1).model();
    let batch = tour_batch();
    let mask = Mask::valid_lens(&batch.src_lens);
    for scoring in Scoring::ALL {
        let model = scoring.model(config, 1);
        let (outputs, state) = model.encoder.forward(&batch.src, &batch.src_lens);
        let (context, weights) =
            model.decoder.attention().attend(&state, &outputs, &mask);
        assert_eq!(context.shape(), &[3, 64], "{}", scoring.name());
        assert_eq!(weights.shape(), &[3, 6], "{}", scoring.name());
        let w = weights.to_vec();
        for (b, len) in [6, 2, 5].into_iter().enumerate() {
            let row = &w[b * 6..(b + 1) * 6];
            assert!(
                (row.iter().sum::<f32>() - 1.0).abs() < 1e-5,
                "{}",
                scoring.name()
            );
            assert!(
                row[len..].iter().all(|&x| x == 0.0),
                "{}: {row:?}",
                scoring.name()
            );
        }
    }
}

#[test]
fn the_attention_parameters_are_as_the_page_counts_them() {
    let h = 64;
    let ha = HYBRID_ADDITIVE_HIDDENS;
    let expected = [
        2 * h * h + h,                   // W_q, W_k, w_v
        2 * h * h,                       // W_q, W_k
        2 * h * h,                       // the same, scaled
        4 * h * h,                       // W_q, W_k, W_v, W_o
        2 * ha * h + ha + 2 * h * h + 1, // both branches and the gate's logit
    ];
    let recorded = Record::recorded();
    for (scoring, want) in Scoring::ALL.into_iter().zip(expected) {
        assert_eq!(
            scoring.attention(h, h, h).num_parameters(),
            want,
            "{scoring:?}"
        );
        for run in recorded.runs_of(scoring) {
            assert_eq!(run.attention_parameters, want, "{scoring:?}");
            assert_eq!(run.model_parameters, 52_269 + want, "{scoring:?}");
        }
    }
}

#[test]
fn one_seed_starts_every_scoring_from_the_same_encoder_and_decoder() {
    let config = TrainConfig::short().model();
    let rest = |scoring: Scoring, seed| {
        scoring
            .model(config, seed)
            .named_parameters()
            .into_iter()
            .filter(|(name, _)| !name.starts_with("decoder.attention."))
            .map(|(name, t)| (name, t.to_vec()))
            .collect::<Vec<_>>()
    };
    let first = rest(Scoring::Additive, 2);
    for scoring in Scoring::ALL {
        assert_eq!(rest(scoring, 2), first, "{scoring:?}");
    }
    assert_ne!(
        rest(Scoring::Additive, 3),
        first,
        "another seed, another model"
    );
}

#[test]
fn unscaled_weights_are_the_scaled_ones_sharpened_by_the_square_root_of_d() {
    let d = 16;
    let build = |scale| {
        engine::manual_seed(8);
        ProjectedDotProduct::new(12, 20, d, scale)
    };
    let (unscaled, scaled) = (build(Some(1.0)), build(None));
    engine::manual_seed(9);
    let (state, outputs) = (Tensor::randn([4, 12]), Tensor::randn([4, 7, 20]));
    let (_, w1) = unscaled.attend(&state, &outputs, &Mask::none());
    let (_, w2) = scaled.attend(&state, &outputs, &Mask::none());
    // log w2 = s / √d − c, so softmax(√d · log w2) = softmax(s) = w1.
    let sharpened = (w2.log() * (d as f32).sqrt()).softmax(-1);
    assert_close(&sharpened.to_vec(), &w1.to_vec(), 1e-4);
    assert!(
        (&w1 - &w2).abs().max().item() > 0.01,
        "the scale changes the weights"
    );
}

#[test]
fn the_hybrid_s_weights_are_the_softmax_of_its_gated_branches() {
    engine::manual_seed(12);
    let (state, outputs) = (Tensor::randn([3, 10]), Tensor::randn([3, 4, 6]));
    let mask = Mask::valid_lens(&Tensor::from_vec(vec![4.0, 1.0, 3.0], [3]));
    for (gate, g) in [
        (Gate::Fixed(1.0), 1.0),
        (Gate::Fixed(0.0), 0.0),
        (Gate::Scalar, 0.5),
    ] {
        let module = HybridGatedAttention::new(HybridGatedAttentionConfig {
            query_size: 10,
            key_size: 6,
            additive_hiddens: 3,
            dot_hiddens: 8,
            gate,
            ..Default::default()
        });
        module.forward(&state.unsqueeze(1), &outputs, &outputs, &mask);
        assert_eq!(gate_value(&module), Some(g));
        let weights = module.last_attention_weights().unwrap();
        let (additive, dot) = branch_scores(&module, &state, &outputs);
        // The two limiting cases leave one branch alone.
        let want = match gate {
            Gate::Fixed(1.0) => masked_softmax(&additive, &mask, Fill::Safe),
            Gate::Fixed(_) => masked_softmax(&dot, &mask, Fill::Safe),
            _ => {
                masked_softmax(&(&additive * g + &dot * (1.0 - g)), &mask, Fill::Safe)
            }
        };
        assert_close(&weights.to_vec(), &want.to_vec(), 1e-6);
    }
}

#[test]
fn a_gate_per_query_has_no_single_value() {
    let module = HybridGatedAttention::new(HybridGatedAttentionConfig {
        query_size: 4,
        key_size: 4,
        additive_hiddens: 2,
        dot_hiddens: 4,
        gate: Gate::PerQuery,
        ..Default::default()
    });
    let x = Tensor::randn([1, 1, 4]);
    module.forward(&x, &x, &x, &Mask::none());
    assert_eq!(gate_value(&module), None);
}

#[test]
fn every_scoring_learns_the_task_in_a_short_run() {
    // Chapter 9's short run: numbers below 1000, E = 16, H = 32, 60 steps of 32, then
    // 60 more, and the held-out numbers decoded greedily.
    let config = TrainConfig {
        steps: 120,
        ..TrainConfig::short()
    };
    for scoring in Scoring::ALL {
        let mut trainer = Trainer::new(config, |c| scoring.model(c, config.seed));
        trainer.train_until(config.steps, |_| {});
        let losses = &trainer.history.losses;
        let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
        let (first, last) = (mean(&losses[..10]), mean(&losses[losses.len() - 10..]));
        assert!(last < first / 3.0, "{scoring:?}: loss {first} → {last}");
        let (accuracy, _) = exact_match(
            &trainer.model,
            &trainer.split.held_out,
            &trainer.src_vocab,
            &trainer.tgt_vocab,
            100,
        );
        // Chance is one in 11⁴ for three digits and <eos>; a third of them right is
        // learning.
        assert!(
            accuracy > 0.3,
            "{scoring:?}: held-out exact match {accuracy}"
        );
    }
}

#[test]
fn the_recorded_runs_replay_their_first_steps_bit_for_bit() {
    let recorded = Record::recorded();
    for scoring in Scoring::ALL {
        let run = recorded.runs_of(scoring)[0];
        let mut trainer =
            Trainer::new(train_config(run.seed), |c| scoring.model(c, run.seed));
        trainer.train_until(4, |_| {});
        let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&trainer.history.losses),
            bits(&run.losses[..4]),
            "{scoring:?}"
        );
        if let Scorer::Hybrid(h) = trainer.model.decoder.attention() {
            assert_eq!(h.gate().unwrap().to_bits(), run.gates[4].to_bits());
        }
    }
}

#[test]
fn the_recorded_peak_bytes_are_what_the_engine_counts() {
    let recorded = Record::recorded();
    for scoring in Scoring::ALL {
        assert_eq!(
            training_step_peak_bytes(scoring),
            recorded.peak(scoring),
            "{scoring:?}"
        );
    }
}

#[test]
fn the_recording_is_complete_and_its_tables_are_its_data_printed() {
    let recorded = Record::recorded();
    assert_eq!(recorded.runs.len(), Scoring::ALL.len() * SEEDS.len());
    for run in &recorded.runs {
        assert_eq!(run.losses.len(), STEPS, "{:?}", run.scoring);
        let steps: Vec<usize> = run.held_out.iter().map(|&(s, _)| s).collect();
        assert_eq!(
            steps,
            (EVAL_EVERY..=STEPS).step_by(EVAL_EVERY).collect::<Vec<_>>()
        );
        let hybrid = run.scoring == Scoring::Hybrid;
        assert_eq!(run.gates.len(), if hybrid { STEPS + 1 } else { 0 });
        assert_eq!(run.reading.is_some(), hybrid);
        assert!(run.train_seconds > 0.0 && run.decode_seconds > 0.0);
    }
    assert_eq!(
        recorded.sweep.iter().map(|r| r.d).collect::<Vec<_>>(),
        SWEEP_SIZES
    );
    assert_eq!(Record::parse(&recorded.to_tsv()).unwrap(), recorded);
    assert_eq!(recorded.tables(), RECORDED_TABLES);
}

#[test]
fn the_check_ignores_the_times_and_nothing_else() {
    let recorded = Record::recorded();
    let mut timed = recorded.clone();
    timed.runs[0].train_seconds *= 2.0;
    timed.sweep[0].seconds[0] *= 2.0;
    timed.machine = "another machine".into();
    assert_eq!(timed.check(&recorded), Ok(()));
    assert_eq!(timed.with_times_of(&recorded), recorded);
    let mut changed = recorded.clone();
    changed.runs[3].losses[7] =
        f32::from_bits(changed.runs[3].losses[7].to_bits() + 1);
    let error = changed.check(&recorded).unwrap_err();
    assert!(error.contains("the loss of step 7"), "{error}");
    let mut changed = recorded.clone();
    changed.runs[14].gates[100] += 0.5;
    assert!(changed.check(&recorded).is_err());
    let mut changed = recorded.clone();
    changed.peaks[1].1 += 4;
    assert!(changed.check(&recorded).is_err());
    assert!(Record::parse("run\tadditive\t1\tlosses\tnot-a-number").is_err());
    assert!(Record::parse("peak\tconvolution\t12").is_err());
}

#[test]
fn projections_make_the_count_grow_as_d_squared_and_the_scores_alone_as_d() {
    // One query against n = 64 keys of d = 64: with the projections d² + n·d² +
    // 2·n·d.
    assert_eq!(multiply_adds(64, 64, true), 4096 + 262_144 + 8192);
    assert_eq!(multiply_adds(64, 64, false), 8192);
    // Doubling d: ×2 without the projections, almost ×4 with them.
    assert_eq!(
        multiply_adds(64, 128, false),
        2 * multiply_adds(64, 64, false)
    );
    let ratio =
        multiply_adds(64, 1024, true) as f64 / multiply_adds(64, 512, true) as f64;
    assert!((3.9..4.0).contains(&ratio), "{ratio}");
}

#[test]
fn the_timed_calls_compute_attention_with_and_without_projections() {
    let call = SweepCall::new(8);
    for variant in Variant::ALL {
        let out = call.call(variant);
        assert_eq!(out.shape(), &[64, 1, 8], "{variant:?}");
        assert!(out.to_vec().iter().all(|x| x.is_finite()));
    }
    // Without projections, the scaled dot product attends the keys as they are.
    let a = call.call(Variant::ScaledDotOnly);
    let b = call.call(Variant::ScaledDotWithProjections);
    assert!((&a - &b).abs().max().item() > 1e-3);
}

#[test]
fn reading_a_hybrid_gives_shares_and_spreads() {
    let config = TrainConfig::short();
    let model = Scoring::Hybrid.model(config.model(), 1);
    let held_out = chapter09::split(1000, 800, 100, 1).held_out;
    let r = reading(&model, &held_out);
    assert_eq!(r.gate, 0.5);
    for share in [r.top_additive, r.top_dot] {
        assert!((0.0..=1.0).contains(&share), "{r:?}");
    }
    assert!(r.additive_spread > 0.0 && r.dot_spread > 0.0, "{r:?}");
    let other = Scoring::Additive.model(config.model(), 1);
    let message = panic_message(|| {
        reading(&other, &held_out);
    });
    assert!(message.contains("not the hybrid"), "{message}");
}

/// The page's reading of the comparison, as assertions on the recorded data.
#[test]
fn the_comparison_reads_as_the_page_says() {
    let r = Record::recorded();
    let mean = |s| r.accuracy_at(s, STEPS).0;
    // Every scoring learns the task; the unscaled dot product is the least accurate
    // and the least steady over the seeds.
    for s in Scoring::ALL {
        assert!(mean(s) > 0.97, "{s:?}: {}", mean(s));
    }
    let spread = |s| {
        let (_, lo, hi) = r.accuracy_at(s, STEPS);
        hi - lo
    };
    for s in Scoring::ALL
        .into_iter()
        .filter(|&s| s != Scoring::DotProduct)
    {
        assert!(mean(Scoring::DotProduct) < mean(s), "{s:?}");
        assert!(spread(Scoring::DotProduct) > 5.0 * spread(s), "{s:?}");
    }
    // The hybrid's gate moves little; its dot-product branch decides the top key.
    for run in r.runs_of(Scoring::Hybrid) {
        assert!(
            run.gates.iter().all(|g| (0.41..0.51).contains(g)),
            "{:?}",
            run.seed
        );
        let x = run.reading.unwrap();
        assert!(x.top_dot > 0.9 && x.top_additive < 0.5, "{x:?}");
        assert!(x.dot_spread > 5.0 * x.additive_spread, "{x:?}");
    }
    // The engine's memory of a training step: the attention is a small part of it,
    // and multi-head attention, with two more projections, the largest.
    let kib = |s| r.peak(s) as f64 / 1024.0;
    assert!(
        (kib(Scoring::Additive) / kib(Scoring::ScaledDotProduct) - 1.0).abs() < 0.01
    );
    for s in Scoring::ALL {
        assert!(kib(Scoring::MultiHead) >= kib(s));
    }
}
