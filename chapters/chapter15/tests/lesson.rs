//! The chapter's claims, checked: the fill table's cells, the vanished gradients,
//! the scaler inside chapter 9's training loop, autocast against explicit rounding,
//! and the recorded runs reproduced.

use attention::prelude::*;
use chapter09::TrainConfig;
use chapter15::compare::{EVAL_EVERY, SMALL, STEPS, train_config};
use chapter15::fills::{FILLS, FullRow, MaskFill, cell};
use chapter15::record::Record;
use chapter15::training::{GROWTH_INTERVAL, MixedTrainer, Mode, SMALL_LOSS};
use chapter15::underflow;
use engine::optim::GradScalerConfig;
use engine::precision::Precision;

fn fill(name: &str) -> MaskFill {
    FILLS
        .into_iter()
        .find(|f| f.name() == name)
        .expect("a fill of the table")
}

#[test]
fn minus_1e9_and_d2l_s_minus_1e6_become_minus_inf_in_f16_and_a_full_row_nan() {
    for name in ["-1e9 (the article)", "-1e6 (d2l)", "f32 finfo.min"] {
        let c = cell(fill(name), Precision::F16);
        assert_eq!(c.stored, Some(f32::NEG_INFINITY), "{name}");
        assert_eq!(c.full, FullRow::Nan, "{name}");
        // A row with a real key is still right: exp(-inf - max) = 0.
        assert!(c.partial_ok, "{name}");
        // In f32 the same fills give d2l's uniform row.
        assert_eq!(cell(fill(name), Precision::F32).full, FullRow::Uniform);
    }
}

#[test]
fn bf16_keeps_minus_1e9_finite_but_not_f32_s_lowest_value() {
    let c = cell(fill("-1e9 (the article)"), Precision::Bf16);
    assert_eq!((c.stored, c.full), (Some(-998_244_352.0), FullRow::Uniform));
    let c = cell(fill("f32 finfo.min"), Precision::Bf16);
    assert_eq!((c.stored, c.full), (Some(f32::NEG_INFINITY), FullRow::Nan));
}

#[test]
fn only_small_finite_fills_and_the_safe_softmax_survive_every_format() {
    for p in [Precision::F32, Precision::F16, Precision::Bf16] {
        for f in FILLS {
            let c = cell(f, p);
            assert!(c.partial_ok, "{} in {}", f.name(), p.name());
            let expected = match f.name() {
                "-inf" => FullRow::Nan,
                "safe (no value)" => FullRow::Zeros,
                "-1e4" | "f16 finfo.min" => FullRow::Uniform,
                _ => c.full,
            };
            assert_eq!(c.full, expected, "{} in {}", f.name(), p.name());
        }
    }
}

#[test]
fn autocast_gives_the_bits_of_explicit_rounding_and_differs_from_f32() {
    for p in [Precision::F16, Precision::Bf16] {
        let (full, cast, explicit) = chapter15::tour::autocast_scores(p);
        let bits = |t: &engine::Tensor| -> Vec<u32> {
            t.to_vec().iter().map(|x| x.to_bits()).collect()
        };
        assert_eq!(bits(&cast), bits(&explicit), "{}", p.name());
        assert_ne!(bits(&cast), bits(&full), "{}", p.name());
    }
}

#[test]
fn the_recorded_step_0_counts_are_what_a_fresh_count_gives() {
    let mut mixed = MixedTrainer::new(train_config(), Mode::F32);
    let fresh = underflow::count(&mut mixed.trainer);
    let record = Record::recorded();
    let (step, recorded) = &record.underflow[0];
    assert_eq!((*step, &fresh), (0, recorded));
}

#[test]
fn f16_loses_gradient_entries_and_a_static_scale_saves_nearly_all_of_them() {
    let record = Record::recorded();
    assert_eq!(record.underflow.len(), STEPS / EVAL_EVERY + 1);
    for (step, layers) in &record.underflow {
        let (f16, scaled) =
            (underflow::share(layers, 0), underflow::share(layers, 1));
        assert!(f16 > 0.0, "step {step}: some entries vanish in f16");
        assert!(scaled < f16 / 10.0, "step {step}: x1024 keeps most of them");
    }
}

#[test]
fn the_scaler_skips_overflowing_steps_in_the_training_loop_and_halves_the_scale() {
    // A planted overflow: a scale of 2^40 makes every f16 gradient infinite, so the
    // steps are skipped and the scale halves until the gradients fit.
    let config = TrainConfig {
        steps: 40,
        ..TrainConfig::short()
    };
    let scaler = GradScalerConfig {
        init_scale: 2f32.powi(40),
        growth_interval: 5,
        ..GradScalerConfig::default()
    };
    let mut mixed = MixedTrainer::with_scaler(config, Mode::F16Dynamic, scaler);
    let before = mixed.trainer.model.parameters()[0].to_vec();
    let first = mixed.step();
    assert!(!first.stepped && first.scale == 2f32.powi(40));
    assert_eq!(
        mixed.trainer.model.parameters()[0].to_vec(),
        before,
        "skipped"
    );
    assert_eq!(mixed.scale(), 2f32.powi(39));
    let mut outcomes = vec![first];
    while !outcomes.last().expect("one").stepped {
        outcomes.push(mixed.step());
    }
    let skipped = outcomes.len() - 1;
    assert!(
        skipped >= 10,
        "2^40 is far past f16's range: {skipped} skips"
    );
    assert_ne!(
        mixed.trainer.model.parameters()[0].to_vec(),
        before,
        "stepped"
    );
    assert_eq!(mixed.scaler.steps_skipped(), skipped);
}

#[test]
fn the_recorded_scale_follows_gradscaler_s_rule() {
    let record = Record::recorded();
    let run = record.run(Mode::F16Dynamic);
    let mut clean = 0;
    for (step, pair) in run.scales.windows(2).enumerate() {
        let expected = if run.skipped.contains(&step) {
            clean = 0;
            pair[0] * 0.5
        } else {
            clean += 1;
            if clean == GROWTH_INTERVAL {
                clean = 0;
                pair[0] * 2.0
            } else {
                pair[0]
            }
        };
        assert_eq!(pair[1], expected, "step {step}");
    }
    for mode in [Mode::F32, Mode::F16, Mode::F16Static, Mode::Bf16] {
        assert!(record.run(mode).skipped.is_empty(), "{}", mode.name());
    }
}

#[test]
fn the_recorded_runs_start_as_a_fresh_run_does() {
    // The first steps of the two f16 runs with scaling, trained again: every loss
    // and scale the same bits as recorded.
    let record = Record::recorded();
    for mode in [Mode::F16Static, Mode::F16Dynamic] {
        let mut mixed = MixedTrainer::new(train_config(), mode);
        let run = record.run(mode);
        for step in 0..5 {
            let o = mixed.step();
            assert_eq!(
                o.loss.to_bits(),
                run.losses[step].to_bits(),
                "{}",
                mode.name()
            );
            assert_eq!(o.scale, run.scales[step], "{}", mode.name());
        }
    }
}

#[test]
fn the_recorded_tables_are_the_tables_of_the_recorded_data() {
    let record = Record::recorded();
    assert_eq!(record.tables(), chapter15::record::RECORDED_TABLES);
    assert_eq!(Record::parse(&record.to_tsv()), Ok(record));
}

#[test]
fn the_small_gradient_tables_are_the_tables_of_its_recorded_data() {
    let record = Record::recorded_small();
    assert_eq!(record.setting, SMALL);
    assert_eq!(record.tables(), chapter15::record::SMALL_TABLES);
    assert_eq!(
        Record::parse_in(&record.to_tsv(), SMALL),
        Ok(record.clone())
    );
    assert_eq!(record.underflow.len(), SMALL.steps / SMALL.eval_every + 1);
}

#[test]
fn the_small_gradient_runs_start_as_a_fresh_run_does() {
    let record = Record::recorded_small();
    for mode in [Mode::F16, Mode::F16Dynamic] {
        let mut mixed =
            MixedTrainer::with_loss_factor(SMALL.config(), mode, SMALL.loss_factor);
        let run = record.run(mode);
        for step in 0..3 {
            let o = mixed.step();
            assert_eq!(
                o.loss.to_bits(),
                run.losses[step].to_bits(),
                "{}",
                mode.name()
            );
            assert_eq!(o.scale, run.scales[step], "{}", mode.name());
        }
    }
}

#[test]
fn in_f32_small_gradients_take_chapter_9_s_steps_when_nothing_is_clipped() {
    // The loss, Adam's eps and the clipping norm times 2^-14: with a norm no
    // gradient reaches, every loss is the plain run's, bit for bit.
    let config = TrainConfig {
        clip: 1e30,
        ..TrainConfig::short()
    };
    let mut plain = MixedTrainer::new(config, Mode::F32);
    let mut small = MixedTrainer::with_loss_factor(config, Mode::F32, SMALL_LOSS);
    for step in 0..5 {
        let (a, b) = (plain.step().loss, small.step().loss);
        assert_eq!(a.to_bits(), b.to_bits(), "step {step}");
    }
}

#[test]
fn with_small_gradients_f16_loses_almost_every_entry_and_x1024_almost_none() {
    // The recorded step-0 counts of the small-gradient run, computed again: in f16
    // without a scale nearly every nonzero gradient entry is zero, with the loss
    // times 1024 few are, in bf16 almost none.
    let mut mixed =
        MixedTrainer::with_loss_factor(SMALL.config(), Mode::F32, SMALL.loss_factor);
    let fresh = underflow::count_at(&mut mixed.trainer, SMALL.loss_factor);
    let record = Record::recorded_small();
    assert_eq!(record.underflow[0], (0, fresh.clone()));
    assert!(underflow::share(&fresh, 0) > 0.95);
    assert!(underflow::share(&fresh, 1) < 0.1);
    assert!(underflow::share(&fresh, 2) < 0.001);
}
