//! The chapter's claims, each checked: the models' shapes and masks, learning in short
//! runs, generation with and without the KV cache giving the same characters, sampling
//! by temperature and top-k, checkpoints that resume exactly, the recorded runs
//! reaching what the page states, and post-norm against pre-norm.

use attention::prelude::*;
use chapter09::{Batch, SplitMix64, TrainConfig, Vocab, split};
use chapter16::corpus::Corpus;
use chapter16::lm::{CharLm, LmConfig, Sampling, generate, sample};
use chapter16::lm_train::{LmTrainConfig, LmTrainer, resume_lm, save_lm_checkpoint};
use chapter16::placement::{
    PLACEMENT_STEPS, PlacementRecord, deep_model, gradient_norms_at_init,
};
use chapter16::record::{GenerationTimes, recorded_lm, recorded_translation};
use chapter16::seq2seq::{
    TransformerConfig, TransformerSeq2Seq, cross_attention_heads, greedy_decode,
};
use chapter16::translation::{TranslationTrainer, chapter_model};

/// A small character model, fresh from `seed`.
fn small_lm(vocab: usize, norm_first: bool, seed: u64) -> CharLm {
    engine::manual_seed(seed);
    let mut model = CharLm::new(LmConfig {
        vocab,
        num_hiddens: 32,
        num_heads: 4,
        ffn_num_hiddens: 64,
        num_layers: 2,
        block_size: 24,
        dropout: 0.0,
        norm_first,
    });
    model.eval();
    model
}

fn tiny_run(vocab: usize) -> LmTrainConfig {
    let chapter = LmTrainConfig::chapter(vocab);
    LmTrainConfig {
        model: LmConfig {
            num_hiddens: 32,
            ffn_num_hiddens: 64,
            num_layers: 2,
            block_size: 32,
            ..chapter.model
        },
        batch_size: 8,
        steps: 40,
        warmup: 5,
        eval_every: 20,
        eval_batches: 2,
        ..chapter
    }
}

#[test]
fn cached_and_uncached_generation_give_the_same_characters() {
    let corpus = Corpus::shipped();
    let prompt = corpus.vocab.encode("Alice ");
    for norm_first in [true, false] {
        let model = small_lm(corpus.vocab.len(), norm_first, 3);
        // 50 new characters after 6 cross the 24-character window twice: the cached
        // path refills its caches after each jump.
        for sampling in [
            Sampling {
                temperature: 0.0,
                top_k: None,
                seed: 0,
            },
            Sampling {
                temperature: 1.0,
                top_k: None,
                seed: 1,
            },
            Sampling {
                temperature: 0.7,
                top_k: Some(5),
                seed: 2,
            },
        ] {
            let cached = generate(&model, &prompt, 50, &sampling, true);
            let uncached = generate(&model, &prompt, 50, &sampling, false);
            assert_eq!(cached.len(), 50);
            assert_eq!(cached, uncached, "norm_first {norm_first}, {sampling:?}");
        }
    }
    // And the recorded model, as the page runs it.
    let (model, _) = recorded_lm();
    let sampling = Sampling {
        temperature: 0.8,
        top_k: Some(10),
        seed: 0,
    };
    assert_eq!(
        generate(&model, &prompt, 150, &sampling, true),
        generate(&model, &prompt, 150, &sampling, false)
    );
}

#[test]
fn the_cached_logits_are_the_full_passes_logits() {
    let corpus = Corpus::shipped();
    let model = small_lm(corpus.vocab.len(), true, 5);
    let ids = corpus.vocab.encode("The Queen said");
    let as_tensor = |ids: &[usize]| {
        Tensor::from_vec(ids.iter().map(|&i| i as f32).collect(), [1, ids.len()])
    };
    let full = no_grad(|| model.forward(&as_tensor(&ids)));
    let mut caches: Vec<KvCache> = (0..2).map(|_| KvCache::new(24)).collect();
    no_grad(|| {
        let first = model.prefill(&as_tensor(&ids[..4]), &mut caches);
        let expected = full.narrow(1, 3, 1).to_vec();
        lesson::assert_close(&first, &expected, 1e-5);
        for (t, &id) in ids.iter().enumerate().skip(4) {
            let logits = model.step(id, &mut caches);
            lesson::assert_close(&logits, &full.narrow(1, t, 1).to_vec(), 1e-5);
        }
    });
    assert_eq!(caches[0].len(), ids.len());
}

#[test]
fn sampling_follows_temperature_and_top_k() {
    let logits = [2.0f32, 1.0, 0.5, -1.0];
    let mut rng = SplitMix64::new(0);
    let greedy = Sampling {
        temperature: 0.0,
        top_k: None,
        seed: 0,
    };
    assert_eq!(sample(&logits, &greedy, &mut rng), 0);
    let top1 = Sampling {
        temperature: 5.0,
        top_k: Some(1),
        seed: 0,
    };
    assert!((0..50).all(|_| sample(&logits, &top1, &mut rng) == 0));
    let top2 = Sampling {
        temperature: 1.0,
        top_k: Some(2),
        seed: 0,
    };
    assert!((0..200).all(|_| sample(&logits, &top2, &mut rng) < 2));
    // Frequencies against the softmax at temperature 1 and 2.
    for t in [1.0f32, 2.0] {
        let s = Sampling {
            temperature: t,
            top_k: None,
            seed: 0,
        };
        let mut counts = [0usize; 4];
        let n = 20_000;
        for _ in 0..n {
            counts[sample(&logits, &s, &mut rng)] += 1;
        }
        let z: f64 = logits
            .iter()
            .map(|&l| (f64::from(l) / f64::from(t)).exp())
            .sum();
        for (i, &c) in counts.iter().enumerate() {
            let p = (f64::from(logits[i]) / f64::from(t)).exp() / z;
            let seen = c as f64 / n as f64;
            assert!(
                (seen - p).abs() < 0.015,
                "t {t}, id {i}: {seen} against {p}"
            );
        }
    }
    // A higher temperature spreads the choices: id 3 is drawn more often.
    let rare = |t: f32| {
        let s = Sampling {
            temperature: t,
            top_k: None,
            seed: 9,
        };
        let mut rng = SplitMix64::new(9);
        (0..5_000)
            .filter(|_| sample(&logits, &s, &mut rng) == 3)
            .count()
    };
    assert!(rare(2.0) > 2 * rare(0.7));
}

#[test]
fn generation_refuses_a_prompt_the_context_cannot_hold() {
    let corpus = Corpus::shipped();
    let model = small_lm(corpus.vocab.len(), true, 0);
    let long = vec![0; 24];
    let s = Sampling {
        temperature: 0.0,
        top_k: None,
        seed: 0,
    };
    let message = lesson::panic_message(|| {
        generate(&model, &long, 1, &s, true);
    });
    assert!(
        message.contains("generate: the prompt must hold 1 to 23 characters")
            && message.contains("found 24"),
        "{message}"
    );
}

#[test]
fn a_short_language_model_run_learns() {
    let corpus = Corpus::shipped();
    let mut trainer = LmTrainer::new(tiny_run(corpus.vocab.len()), corpus);
    trainer.train_until(40, |_, _| {});
    let losses = &trainer.history.losses;
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    // ln 71 = 4.26 at the start; a model that learns the characters' frequencies
    // alone scores about 3.2 (the unigram row of the tour's section 4).
    assert!(mean(&losses[..5]) > 4.0, "{losses:?}");
    assert!(mean(&losses[35..]) < 3.4, "{losses:?}");
    assert_eq!(trainer.history.val.len(), 2);
    assert!(trainer.history.val[1].1 < trainer.history.val[0].1);
}

#[test]
fn a_checkpoint_resumes_the_run_exactly() {
    let corpus = Corpus::shipped();
    let config = tiny_run(corpus.vocab.len());
    let mut straight = LmTrainer::new(config, corpus.clone());
    straight.train_until(24, |_, _| {});
    let mut first = LmTrainer::new(config, corpus.clone());
    first.train_until(12, |_, _| {});
    let dir =
        std::env::temp_dir().join(format!("chapter16-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resume.safetensors");
    save_lm_checkpoint(&first, &path).unwrap();
    let mut resumed = resume_lm(&path, corpus.clone()).unwrap();
    assert_eq!(resumed.step, 12);
    resumed.train_until(24, |_, _| {});
    assert_eq!(straight.history, resumed.history);
    for ((name, a), (_, b)) in straight
        .model
        .state_dict()
        .iter()
        .zip(resumed.model.state_dict().iter())
    {
        assert_eq!(a.to_vec(), b.to_vec(), "{name}");
    }
    // A file cut in half is refused with its name and safetensors' reason.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let error = resume_lm(&path, corpus).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        error.contains("resume.safetensors") && error.contains("safetensors"),
        "{error}"
    );
}

#[test]
fn consecutive_batches_share_no_sequence() {
    let corpus = Corpus::shipped();
    let trainer = LmTrainer::new(tiny_run(corpus.vocab.len()), corpus);
    let rows = |step| {
        let (x, _) = trainer.batch_of(step);
        let v = x.to_vec();
        v.chunks(32).map(<[f32]>::to_vec).collect::<Vec<_>>()
    };
    let (a, b) = (rows(0), rows(1));
    assert!(
        a.iter().all(|r| !b.contains(r)),
        "steps 0 and 1 share a sequence"
    );
    assert_eq!(rows(7), rows(7), "a step's batch depends on the step alone");
}

#[test]
fn the_recorded_language_model_reaches_the_stated_validation_loss_in_time() {
    let (_, record) = recorded_lm();
    let (step, val) = *record.history.val.last().unwrap();
    assert_eq!(step, record.config.steps);
    assert!(
        val < 1.60,
        "the page states a validation loss below 1.60, found {val}"
    );
    assert!(record.seconds < 600.0, "the run took {} s", record.seconds);
    // The record matches the chapter's settings.
    let vocab = Corpus::shipped().vocab.len();
    assert_eq!(record.config, LmTrainConfig::chapter(vocab));
    let times = GenerationTimes::recorded();
    assert!(times.speedup() > 1.5, "{times:?}");
}

#[test]
fn the_recorded_validation_loss_is_what_the_recorded_weights_give() {
    let (model, record) = recorded_lm();
    let corpus = Corpus::shipped();
    let c = record.config;
    let batches = chapter16::corpus::eval_batches(
        &corpus.val,
        c.model.block_size,
        c.batch_size,
        c.eval_batches,
        1,
    );
    let mean = no_grad(|| {
        batches
            .iter()
            .map(|(x, y)| model.loss(x, y).item())
            .sum::<f32>()
            / batches.len() as f32
    });
    let (_, recorded) = *record.history.val.last().unwrap();
    assert!((mean - recorded).abs() < 1e-4, "{mean} against {recorded}");
}

#[test]
fn the_encoder_decoder_reaches_99_percent_on_chapter_9s_held_out_numbers() {
    let (model, record) = recorded_translation();
    assert_eq!(record.train, TrainConfig::chapter(), "chapter 9's settings");
    assert_eq!(record.model, chapter_model());
    let t = record.train;
    let held_out = split(t.max_number, t.train_size, t.held_out, t.seed).held_out;
    let (accuracy, _) = chapter16::seq2seq::exact_match(
        &model,
        &held_out,
        &Vocab::source(),
        &Vocab::target(),
        500,
    );
    assert!(accuracy >= 0.99, "held-out exact match {accuracy}");
    let &(step, recorded) = record.history.held_out.last().unwrap();
    assert_eq!((step, recorded), (1000, accuracy));
}

#[test]
fn the_translation_trainer_replays_the_recorded_run() {
    // The first steps of the recorded run, reproduced bit for bit (the whole run is
    // reproduced by `--check` in CI).
    let (_, record) = recorded_translation();
    let mut trainer = TranslationTrainer::new(record.train, record.model);
    trainer.train_until(5, |_| {});
    let ours: Vec<u32> = trainer.history.losses.iter().map(|l| l.to_bits()).collect();
    let theirs: Vec<u32> = record.history.losses[..5]
        .iter()
        .map(|l| l.to_bits())
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn a_short_translation_run_learns() {
    let config = TrainConfig::short();
    let model = TransformerConfig {
        num_hiddens: 32,
        ffn_num_hiddens: 64,
        ..chapter_model()
    };
    let mut trainer = TranslationTrainer::new(config, model);
    trainer.train_until(config.steps, |_| {});
    let losses = &trainer.history.losses;
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    let factor = mean(&losses[..5]) / mean(&losses[losses.len() - 5..]);
    assert!(factor > 2.0, "losses fell by {factor}: {losses:?}");
}

#[test]
fn the_decoder_attends_to_no_padding_and_each_step_sums_to_one() {
    engine::manual_seed(0);
    let mut model = TransformerSeq2Seq::new(TransformerConfig {
        num_hiddens: 16,
        ffn_num_hiddens: 32,
        ..chapter_model()
    });
    model.eval();
    let (src, tgt) = (Vocab::source(), Vocab::target());
    // 12 is short: padded in a batch with 777777.
    let batch = Batch::new(&[12, 777_777], &src, &tgt);
    let logits = model.forward(&batch.src, &batch.src_lens, &batch.dec_input);
    assert_eq!(logits.shape(), &[2, batch.dec_input.size(1), tgt.len()]);
    let w = model.decoder_layers()[1]
        .cross_attention()
        .last_attention_weights()
        .unwrap(); // [2, 4, T, S]
    let short = w.narrow(0, 0, 1);
    let real = batch.src_lens.to_vec()[0] as usize;
    let padding = short.narrow(3, real, w.size(3) - real);
    assert_eq!(padding.abs().max().item(), 0.0);
    let sums = w.sum_dim(-1).to_vec();
    assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5));
    // Greedy decoding and the per-head weights agree on the shapes.
    let t = greedy_decode(&model, &[12], &src, &tgt, 7).remove(0);
    let heads = cross_attention_heads(&model, &t, &src, &tgt);
    assert_eq!(heads.len(), 4);
    assert_eq!(heads[0].len(), t.ids.len() + 1);
    assert_eq!(heads[0][0].len(), real);
}

#[test]
fn the_decoders_logits_at_a_position_ignore_later_target_tokens() {
    engine::manual_seed(1);
    let mut model = TransformerSeq2Seq::new(TransformerConfig {
        num_hiddens: 16,
        ffn_num_hiddens: 32,
        ..chapter_model()
    });
    model.eval();
    let batch = Batch::new(&[4321], &Vocab::source(), &Vocab::target());
    let a = model.forward(&batch.src, &batch.src_lens, &batch.dec_input);
    let t = batch.dec_input.size(1);
    let mut changed = batch.dec_input.to_vec();
    changed[t - 1] = 3.0;
    let changed = Tensor::from_vec(changed, [1, t]);
    let b = model.forward(&batch.src, &batch.src_lens, &changed);
    assert_eq!(
        a.narrow(1, 0, t - 1).to_vec(),
        b.narrow(1, 0, t - 1).to_vec()
    );
}

#[test]
fn post_norm_gradients_grow_toward_the_output_and_pre_norm_gradients_do_not() {
    let corpus = Corpus::shipped();
    let vocab = corpus.vocab.len();
    let post = gradient_norms_at_init(&corpus, deep_model(vocab, false), 0);
    let pre = gradient_norms_at_init(&corpus, deep_model(vocab, true), 0);
    assert_eq!((post.len(), pre.len()), (8, 8));
    assert!(post[7] > 1.1 * post[0], "{post:?}");
    let (lo, hi) = pre
        .iter()
        .fold((f32::MAX, 0f32), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(
        hi / lo < 1.15,
        "pre-norm's layers get about the same: {pre:?}"
    );
}

#[test]
fn the_recorded_placement_runs_show_post_norm_stalling_without_warmup() {
    let record = PlacementRecord::recorded();
    assert_eq!(record.runs.len(), 3);
    let tail = |i: usize| {
        let l = &record.runs[i].losses;
        assert_eq!(l.len(), PLACEMENT_STEPS);
        l[l.len() - 50..].iter().sum::<f32>() / 50.0
    };
    let (post, pre) = (tail(0), tail(1));
    assert!(
        post > 3.0,
        "post-norm without warmup stays near the unigram loss: {post}"
    );
    assert!(pre < 2.3, "pre-norm learns at the same rate: {pre}");
    // The first steps replay (the whole run is deterministic).
    let corpus = Corpus::shipped();
    for run in &record.runs {
        let mut trainer = LmTrainer::new(run.config(&corpus), corpus.clone());
        trainer.train_until(3, |_, _| {});
        assert_eq!(trainer.history.losses, run.losses[..3], "{}", run.label());
    }
}
