//! The lesson's code: the data, the model's pieces, the masked loss, the optimizer, a short
//! training run, resuming, checkpoints and their errors, and the recorded runs the page
//! reads.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;

use attention::prelude::*;
use chapter09::*;
use engine::gradcheck::gradcheck;
use engine::kernels::{self, KernelPath};
use lesson::panic_message;

/// A directory of the test's own, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir()
            .join(format!("chapter09-test-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

// ---------------------------------------------------------------------------------------
// The data

#[test]
fn numbers_are_written_as_on_a_cheque() {
    for (n, words) in [
        (0, "zero"),
        (7, "seven"),
        (13, "thirteen"),
        (20, "twenty"),
        (21, "twenty-one"),
        (100, "one hundred"),
        (101, "one hundred and one"),
        (342, "three hundred and forty-two"),
        (1_000, "one thousand"),
        (1_001, "one thousand and one"),
        (1_100, "one thousand one hundred"),
        (2_019, "two thousand and nineteen"),
        (40_005, "forty thousand and five"),
        (700_000, "seven hundred thousand"),
        (
            999_999,
            "nine hundred and ninety-nine thousand nine hundred and ninety-nine",
        ),
    ] {
        assert_eq!(number_to_words(n), words, "{n}");
    }
    assert_eq!(
        source_tokens(342),
        ["three", "hundred", "and", "forty", "two"]
    );
    assert_eq!(target_tokens(40_005), ["4", "0", "0", "0", "5"]);
}

#[test]
fn every_number_has_its_own_spelling_within_the_vocabulary() {
    // A stride through the whole range (every number would take seconds in debug mode),
    // with all numbers below 2,000 and every round thousand.
    let vocab = Vocab::source();
    let numbers = (0..2_000)
        .chain((0..1_000_000).step_by(997))
        .chain((0..1_000).map(|k| k * 1000));
    let mut seen = HashSet::new();
    let mut longest = 0;
    for n in numbers {
        let tokens = source_tokens(n);
        vocab.encode(&tokens); // panics on a word outside the vocabulary
        longest = longest.max(tokens.len());
        seen.insert((n, tokens.join(" ")));
    }
    let spellings: HashSet<&String> = seen.iter().map(|(_, s)| s).collect();
    assert_eq!(spellings.len(), seen.len(), "two numbers share a spelling");
    assert_eq!(source_tokens(777_777).len(), 11);
    assert!(longest <= 11);
}

#[test]
fn vocabularies_put_the_special_tokens_first() {
    let v = Vocab::target();
    assert_eq!(v.len(), 13);
    assert_eq!((v.id(PAD), v.id(BOS), v.id(EOS)), (0, 1, 2));
    assert_eq!(v.id("0"), 3);
    assert_eq!(v.decode(&v.encode(&["4", "2", EOS]), " "), "4 2 <eos>");
    assert_eq!(Vocab::source().len(), 34);
}

/// Runs `f`, which must panic, and returns the message and the file the panic was
/// reported in (the caller's file when the function that panics has `#[track_caller]`).
fn panic_message_and_file(f: impl FnOnce()) -> (String, String) {
    use std::cell::RefCell;
    use std::panic::{self, AssertUnwindSafe};
    thread_local! {
        static FILE: RefCell<Option<String>> = const { RefCell::new(None) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let file = info.location().map(|l| l.file().to_string());
            FILE.with(|f| *f.borrow_mut() = file);
            default(info);
        }));
    });
    let payload =
        panic::catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    let file = FILE
        .with(|f| f.borrow_mut().take())
        .expect("recorded by the hook");
    (message, file)
}

#[test]
fn decoding_an_unknown_id_names_it_and_the_vocabulary_size_at_the_callers_line() {
    let v = Vocab::target();
    let (message, file) = panic_message_and_file(|| drop(v.decode(&[7, 13], " ")));
    assert_eq!(
        message,
        "Vocab::decode: id 13 is out of range for a vocabulary of 13 tokens (ids 0..13)"
    );
    assert_eq!(file, file!());
    let (message, file) = panic_message_and_file(|| {
        let _ = v.token(99);
    });
    assert_eq!(
        message,
        "Vocab::token: id 99 is out of range for a vocabulary of 13 tokens (ids 0..13)"
    );
    assert_eq!(file, file!());
    let (message, file) = panic_message_and_file(|| drop(v.encode(&["4", "x"])));
    assert_eq!(message, "Vocab::id: \"x\" is not in the vocabulary");
    assert_eq!(file, file!());
}

#[test]
fn the_split_is_seeded_and_disjoint() {
    let a = split(1_000_000, 20_000, 1_000, 0);
    assert_eq!((a.train.len(), a.held_out.len()), (20_000, 1_000));
    let train: HashSet<u32> = a.train.iter().copied().collect();
    assert_eq!(train.len(), 20_000, "no number twice");
    assert!(a.held_out.iter().all(|n| !train.contains(n)));
    assert_eq!(
        a,
        split(1_000_000, 20_000, 1_000, 0),
        "same seed, same split"
    );
    assert_ne!(a.held_out, split(1_000_000, 20_000, 1_000, 1).held_out);
    // Growing the training set leaves the held-out set alone.
    assert_eq!(a.held_out, split(1_000_000, 50_000, 1_000, 0).held_out);
}

#[test]
fn a_batch_is_padded_with_lengths_and_shifted_for_teacher_forcing() {
    let (sv, tv) = (Vocab::source(), Vocab::target());
    let b = Batch::new(&[342, 12], &sv, &tv);
    assert_eq!(b.src.shape(), &[2, 6]);
    assert_eq!(b.src_lens.to_vec(), vec![6.0, 2.0]);
    assert_eq!(b.tgt_lens.to_vec(), vec![4.0, 3.0]);
    let (src, tgt, input) = (b.src.to_vec(), b.tgt.to_vec(), b.dec_input.to_vec());
    // "twelve <eos>" then padding.
    assert_eq!(
        &src[6..],
        &[sv.id("twelve") as f32, 2.0, 0.0, 0.0, 0.0, 0.0]
    );
    // tgt: 1 2 <eos> <pad>; input: <bos> 1 2 <pad>.
    assert_eq!(&tgt[4..], &[4.0, 5.0, 2.0, 0.0]);
    assert_eq!(&input[4..], &[1.0, 4.0, 5.0, 0.0]);
    for row in 0..2 {
        assert_eq!(input[row * 4], Vocab::BOS_ID as f32);
        let len = b.tgt_lens.to_vec()[row] as usize;
        assert_eq!(
            &input[row * 4 + 1..row * 4 + len],
            &tgt[row * 4..row * 4 + len - 1]
        );
    }
}

// ---------------------------------------------------------------------------------------
// The model

fn tiny() -> Seq2Seq {
    engine::manual_seed(3);
    let mut model = Seq2Seq::additive(Seq2SeqConfig {
        src_vocab: 34,
        tgt_vocab: 13,
        embed_size: 8,
        num_hiddens: 12,
    });
    model.eval();
    model
}

#[test]
fn the_encoder_state_ignores_the_padding() {
    let model = tiny();
    let (sv, tv) = (Vocab::source(), Vocab::target());
    let alone = Batch::new(&[12], &sv, &tv);
    let padded = Batch::new(&[919_919, 12], &sv, &tv);
    let (_, state_alone) = model.encoder.forward(&alone.src, &alone.src_lens);
    let (outputs, state) = model.encoder.forward(&padded.src, &padded.src_lens);
    assert_eq!(padded.src.size(1), 10); // 9 words and <eos>
    let second = state.narrow(0, 1, 1);
    assert!(max_diff(&second, &state_alone) < 1e-6);
    // It is the output at the last real token (position 1: "twelve <eos>") …
    let at_last = outputs.narrow(0, 1, 1).narrow(1, 1, 1).squeeze(1);
    assert!(max_diff(&second, &at_last) < 1e-7);
    // … not the GRU's own last state, which has read eight padding tokens.
    let after_padding = outputs.narrow(0, 1, 1).narrow(1, 9, 1).squeeze(1);
    assert!(max_diff(&second, &after_padding) > 1e-3);
}

#[test]
fn attention_gives_padding_no_weight_and_sums_to_one() {
    let model = tiny();
    let (sv, tv) = (Vocab::source(), Vocab::target());
    let b = Batch::new(&[919_919, 12], &sv, &tv);
    let (outputs, state) = model.encoder.forward(&b.src, &b.src_lens);
    let (context, weights) = model.decoder.attention().attend(
        &state,
        &outputs,
        &Mask::valid_lens(&b.src_lens),
    );
    assert_eq!(
        (context.shape(), weights.shape()),
        (&[2, 12][..], &[2, 10][..])
    );
    let w = weights.to_vec();
    assert!(w[12..20].iter().all(|&x| x == 0.0), "padding of example 1");
    assert!(w[10..12].iter().all(|&x| x > 0.0));
    for row in w.chunks(10) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn teacher_forcing_runs_the_same_steps_as_decoding() {
    let model = tiny();
    let (sv, tv) = (Vocab::source(), Vocab::target());
    let b = Batch::new(&[342, 40_005], &sv, &tv);
    let logits = model.forward(&b.src, &b.src_lens, &b.dec_input); // [2, T, 13]
    let (outputs, mut state) = model.encoder.forward(&b.src, &b.src_lens);
    let mask = Mask::valid_lens(&b.src_lens);
    for t in 0..b.dec_input.size(1) {
        let ids = b.dec_input.narrow(1, t, 1).squeeze(1);
        (state, _) = model.decoder.step(&ids, &state, &outputs, &mask);
        let step = model.decoder.logits(&state);
        assert!(
            max_diff(&step, &logits.narrow(1, t, 1).squeeze(1)) < 1e-6,
            "step {t}"
        );
    }
}

#[test]
fn parameters_have_pytorch_style_names() {
    let names: Vec<String> = tiny()
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for name in [
        "encoder.embedding.weight",
        "encoder.rnn.weight_ih_l0",
        "decoder.attention.W_q.weight",
        "decoder.attention.W_k.weight",
        "decoder.attention.w_v.weight",
        "decoder.rnn.weight_hh",
        "decoder.dense.bias",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    // The decoder's GRU reads the context (H = 12) and the embedding (E = 8).
    let state = tiny().state_dict();
    assert_eq!(
        state.get("decoder.rnn.weight_ih").unwrap().shape(),
        &[36, 20]
    );
}

// ---------------------------------------------------------------------------------------
// The loss and the optimizer

#[test]
fn the_masked_loss_averages_the_real_tokens_only() {
    // Two examples of 2 and 1 real tokens, 3 classes. Logits of class 0 or 1 are ln 2 or
    // ln 3 above the rest, so the probabilities are simple fractions.
    let l2 = 2f32.ln();
    let logits = Tensor::from_vec(
        vec![
            l2,
            0.0,
            0.0,
            /**/ 0.0,
            0.0,
            0.0, // example 0: p = 1/2, then 1/3
            0.0,
            3f32.ln(),
            0.0,
            /**/ 50.0,
            -50.0,
            9.0, // example 1: p = 3/5, then padding
        ],
        [2, 2, 3],
    );
    let targets = Tensor::from_vec(vec![0.0, 2.0, 1.0, 1.0], [2, 2]);
    let lens = Tensor::from_vec(vec![2.0, 1.0], [2]);
    let loss = masked_cross_entropy(&logits, &targets, &lens).item();
    let expected = (2f32.ln() + 3f32.ln() + (5.0f32 / 3.0).ln()) / 3.0;
    assert!((loss - expected).abs() < 1e-6, "{loss} vs {expected}");
    gradcheck(
        |t| masked_cross_entropy(&t[0], &targets, &lens),
        std::slice::from_ref(&logits),
    )
    .unwrap();
    // The padded position gets no gradient at all.
    let x = logits.requires_grad_();
    masked_cross_entropy(&x, &targets, &lens).backward();
    assert!(x.grad().unwrap().to_vec()[9..].iter().all(|&g| g == 0.0));
}

#[test]
fn the_masked_loss_of_no_real_token_is_zero_with_a_zero_gradient() {
    // Every length 0: nothing to average. d2l's loss is 0 there; 0 / 0 would be NaN, and
    // one NaN gradient would turn every weight into NaN at the next step.
    let logits = Tensor::from_vec(
        vec![
            0.3, -1.2, 2.0, 0.5, 0.1, -0.4, 1.1, 0.0, -2.0, 0.7, 0.2, 0.9,
        ],
        [2, 2, 3],
    )
    .requires_grad_();
    let targets = Tensor::from_vec(vec![0.0, 2.0, 1.0, 0.0], [2, 2]);
    let lens = Tensor::zeros([2]);
    let loss = masked_cross_entropy(&logits, &targets, &lens);
    assert_eq!(loss.item(), 0.0);
    loss.backward();
    assert_eq!(logits.grad().unwrap().to_vec(), vec![0.0; 12]);
}

#[test]
fn resumable_adam_takes_the_engine_adams_steps_exactly() {
    let (sv, tv) = (Vocab::source(), Vocab::target());
    let batch = Batch::new(&[342, 12, 40_005], &sv, &tv);
    let a = tiny();
    let b = tiny();
    let config = AdamConfig {
        lr: 1e-2,
        weight_decay: 1e-3,
        ..AdamConfig::default()
    };
    let mut ours = ResumableAdam::new(a.parameters(), config);
    let mut engines = engine::optim::Adam::new(b.parameters(), config);
    let step = |model: &Seq2Seq, opt: &mut dyn Optimizer| {
        opt.zero_grad();
        let logits = model.forward(&batch.src, &batch.src_lens, &batch.dec_input);
        masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens).backward();
        opt.step();
    };
    for _ in 0..4 {
        step(&a, &mut ours);
        step(&b, &mut engines);
    }
    for ((name, x), (_, y)) in a.state_dict().iter().zip(b.state_dict().iter()) {
        assert_eq!(x.to_vec(), y.to_vec(), "{name}");
    }
    assert!(ours.state().iter().all(|(t, _, _)| *t == 4));
}

#[test]
#[should_panic(
    expected = "ResumableAdam::new: parameter 1 (shape [2]) does not require a gradient, so backward never gives it one and no step would move it"
)]
fn resumable_adam_refuses_a_tensor_that_no_step_would_move() {
    let mut params = tiny().parameters();
    params.insert(1, Tensor::zeros([2]));
    ResumableAdam::new(params, AdamConfig::default());
}

#[test]
#[should_panic(
    expected = "ResumableAdam::set_lr: lr must be finite and ≥ 0, found NaN"
)]
fn resumable_adam_refuses_a_nan_learning_rate_as_the_engine_s_adam_does() {
    // A NaN rate accepted here would make every parameter NaN at the next step.
    ResumableAdam::new(tiny().parameters(), AdamConfig::default()).set_lr(f32::NAN);
}

#[test]
fn resumable_adam_refuses_every_rate_and_config_adam_refuses() {
    for lr in [f32::INFINITY, f32::NEG_INFINITY, -1e-3] {
        let message = panic_message(|| {
            ResumableAdam::new(tiny().parameters(), AdamConfig::default()).set_lr(lr);
        });
        assert_eq!(
            message,
            format!("ResumableAdam::set_lr: lr must be finite and ≥ 0, found {lr}")
        );
    }
    let message = panic_message(|| {
        let config = AdamConfig {
            lr: f32::NAN,
            ..Default::default()
        };
        ResumableAdam::new(tiny().parameters(), config);
    });
    assert_eq!(
        message,
        "ResumableAdam::new: lr must be finite and ≥ 0, found NaN"
    );
    let message = panic_message(|| {
        let config = AdamConfig {
            betas: (0.9, 1.0),
            ..Default::default()
        };
        ResumableAdam::new(tiny().parameters(), config);
    });
    assert_eq!(
        message,
        "ResumableAdam::new: both betas must be in [0, 1), found (0.9, 1)"
    );
    // A rate of 0 is allowed, as in the engine's optimizers (a schedule may end there).
    let mut adam = ResumableAdam::new(tiny().parameters(), AdamConfig::default());
    adam.set_lr(0.0);
    assert_eq!(adam.lr(), 0.0);
}

#[test]
fn the_schedule_warms_up_linearly_then_falls_along_a_cosine() {
    let c = TrainConfig::chapter();
    assert_eq!(
        (c.lr, c.final_lr, c.warmup, c.steps),
        (5e-3, 5e-4, 100, 1000)
    );
    assert_eq!(c.lr_at(0), 0.0);
    assert!((c.lr_at(50) - c.lr / 2.0).abs() < 1e-9);
    assert_eq!(c.lr_at(100), c.lr);
    // Halfway through the decay the cosine is at its midpoint.
    assert!((c.lr_at(550) - (c.lr + c.final_lr) / 2.0).abs() < 1e-7);
    assert!((c.lr_at(1000) - c.final_lr).abs() < 1e-9);
    let rates: Vec<f32> = (100..=1000).map(|s| c.lr_at(s)).collect();
    assert!(
        rates.windows(2).all(|w| w[1] <= w[0]),
        "never rises after the warmup"
    );
    // final_lr = lr keeps the rate constant: the short run's.
    let short = TrainConfig::short();
    assert_eq!(short.lr_at(short.warmup), short.lr);
    assert_eq!(short.lr_at(short.steps - 1), short.lr);
}

// ---------------------------------------------------------------------------------------
// Training, stopping and resuming

#[test]
fn a_short_run_divides_the_loss_by_two_and_resumes_exactly() {
    let short = TrainConfig::short();
    let mut straight = Trainer::additive(short);
    let mut norms = Vec::new();
    straight.train_until(short.steps, |r| norms.push(r.grad_norm));
    let l = &straight.history.losses;
    assert_eq!(l.len(), short.steps);
    let mean = |x: &[f32]| x.iter().sum::<f32>() / x.len() as f32;
    let factor = mean(&l[..5]) / mean(&l[l.len() - 5..]);
    assert!(factor > 2.0, "the loss fell by {factor:.2} only");
    assert!(
        (l[0] - 13f32.ln()).abs() < 0.2,
        "starts near ln 13: {}",
        l[0]
    );

    // Stop at step 30, save, read back, resume: the same losses and the same weights.
    let dir = Dir::new("resume");
    let mut first = Trainer::additive(short);
    first.train_until(30, |_| {});
    save_checkpoint(&first, dir.path("c.safetensors")).unwrap();
    let mut resumed = Checkpoint::read(dir.path("c.safetensors"))
        .unwrap()
        .resume(Seq2Seq::additive)
        .unwrap();
    assert_eq!(resumed.step, 30);
    resumed.train_until(short.steps, |_| {});
    assert_eq!(resumed.history.losses, straight.history.losses);
    for ((n, x), (_, y)) in straight
        .model
        .state_dict()
        .iter()
        .zip(resumed.model.state_dict().iter())
    {
        assert_eq!(x.to_vec(), y.to_vec(), "{n}");
    }
}

#[test]
fn the_batch_of_a_step_does_not_depend_on_the_path_to_it() {
    let mut a = Trainer::additive(TrainConfig::short());
    let mut b = Trainer::additive(TrainConfig::short());
    let per_epoch = TrainConfig::short().batches_per_epoch();
    assert_eq!(per_epoch, 25);
    let late = a.batch_numbers(3 * per_epoch + 2);
    for s in 0..60 {
        b.batch_numbers(s);
    }
    assert_eq!(b.batch_numbers(3 * per_epoch + 2), late);
    // One epoch covers the training set once.
    let epoch: HashSet<u32> =
        (0..per_epoch).flat_map(|s| a.batch_numbers(s)).collect();
    assert_eq!(epoch.len(), 800);
    assert_ne!(a.batch_numbers(0), a.batch_numbers(per_epoch), "reshuffled");
}

// ---------------------------------------------------------------------------------------
// Checkpoints

#[test]
fn a_checkpoint_round_trips_weights_moments_and_history() {
    let dir = Dir::new("roundtrip");
    let mut t = Trainer::additive(TrainConfig::short());
    t.train_until(3, |_| {});
    let path = dir.path("run.safetensors");
    save_checkpoint(&t, &path).unwrap();
    let c = Checkpoint::read(&path).unwrap();
    assert_eq!(c.info.step, 3);
    assert_eq!(c.info.config, TrainConfig::short());
    assert_eq!(c.info.history, t.history);
    assert_eq!(c.info.adam_steps.as_deref(), Some(&[3; 15][..]));
    for (name, x) in t.model.state_dict().iter() {
        assert_eq!(
            c.tensors.get(&format!("model.{name}")).unwrap().to_vec(),
            x.to_vec()
        );
    }
    let names = t.model.named_parameters();
    for ((name, _), (_, m, v)) in names.iter().zip(t.optimizer.state()) {
        assert_eq!(
            c.tensors.get(&format!("adam.m.{name}")).unwrap().to_vec(),
            m.to_vec()
        );
        assert_eq!(
            c.tensors.get(&format!("adam.v.{name}")).unwrap().to_vec(),
            v.to_vec()
        );
    }
    // Saving twice gives the same bytes.
    let again = dir.path("again.safetensors");
    save_checkpoint(&t, &again).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&again).unwrap()
    );

    // Weights only: a model loaded from them computes what the trained one does.
    save_weights(&t, dir.path("w.safetensors")).unwrap();
    let fresh = Seq2Seq::additive(TrainConfig::short().model());
    Checkpoint::read(dir.path("w.safetensors"))
        .unwrap()
        .load_weights(&fresh)
        .unwrap();
    let b = Batch::new(&[342], &Vocab::source(), &Vocab::target());
    let (x, y) = (
        t.model.forward(&b.src, &b.src_lens, &b.dec_input),
        fresh.forward(&b.src, &b.src_lens, &b.dec_input),
    );
    assert_eq!(x.to_vec(), y.to_vec());
}

/// A full checkpoint of a few steps of the short run, and the directory it is in.
fn saved() -> (Dir, PathBuf, Trainer) {
    let dir = Dir::new(
        &format!("errors-{:?}", std::thread::current().id()).replace(['(', ')'], ""),
    );
    let mut t = Trainer::additive(TrainConfig::short());
    t.train_until(2, |_| {});
    let path = dir.path("good.safetensors");
    save_checkpoint(&t, &path).unwrap();
    (dir, path, t)
}

#[test]
fn a_truncated_file_is_an_error_naming_the_file() {
    let (dir, path, _) = saved();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let e = Checkpoint::read(&cut).unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e:?}");
    let message = e.to_string();
    assert!(message.starts_with(&cut.display().to_string()), "{message}");
    assert!(message.contains("not a valid checkpoint"), "{message}");
    // Not safetensors at all.
    std::fs::write(&cut, b"hello").unwrap();
    assert!(matches!(
        Checkpoint::read(&cut),
        Err(CheckpointError::Corrupt { .. })
    ));
}

#[test]
fn a_missing_tensor_is_named_and_nothing_is_loaded() {
    let (dir, path, _) = saved();
    let mut c = Checkpoint::read(&path).unwrap();
    c.tensors = c
        .tensors
        .iter()
        .filter(|(n, _)| *n != "model.decoder.dense.bias")
        .map(|(n, t)| (n, t.clone()))
        .collect();
    c.write(dir.path("missing.safetensors")).unwrap();
    let model = Seq2Seq::additive(TrainConfig::short().model());
    let before = model.state_dict();
    let e = Checkpoint::read(dir.path("missing.safetensors"))
        .unwrap()
        .load_weights(&model)
        .unwrap_err();
    let message = e.to_string();
    assert!(message.contains("missing.safetensors"), "{message}");
    assert!(
        message.contains("tensor model.decoder.dense.bias: missing from the file"),
        "{message}"
    );
    for ((n, x), (_, y)) in before.iter().zip(model.state_dict().iter()) {
        assert_eq!(x.to_vec(), y.to_vec(), "{n} changed by a failed load");
    }
}

#[test]
fn a_wrong_shape_names_the_tensor_and_both_shapes() {
    let (dir, path, _) = saved();
    let mut c = Checkpoint::read(&path).unwrap();
    c.tensors
        .insert("model.encoder.embedding.weight", Tensor::zeros([34, 7]));
    c.tensors
        .insert("adam.v.decoder.dense.bias", Tensor::zeros([3]));
    c.write(dir.path("shape.safetensors")).unwrap();
    let c = Checkpoint::read(dir.path("shape.safetensors")).unwrap();
    let model = Seq2Seq::additive(TrainConfig::short().model());
    let message = c.load_weights(&model).unwrap_err().to_string();
    assert!(
        message.contains(
            "tensor model.encoder.embedding.weight: the model expects shape [34, 16], the file has [34, 7]"
        ),
        "{message}"
    );
    // Resuming checks the moments too (after the weights: fix those first).
    let mut c = c;
    c.tensors
        .insert("model.encoder.embedding.weight", Tensor::zeros([34, 16]));
    let message = c.resume(Seq2Seq::additive).unwrap_err().to_string();
    assert!(
        message.contains(
            "tensor adam.v.decoder.dense.bias: the model expects shape [13], the file has [3]"
        ),
        "{message}"
    );
}

#[test]
fn other_element_types_and_missing_metadata_are_refused() {
    let (dir, _, _) = saved();
    let data = vec![0u8; 8];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F64, vec![1], &data)
            .unwrap();
    let bytes = safetensors::serialize([("model.x", view.clone())], None).unwrap();
    let f64_file = dir.path("f64.safetensors");
    std::fs::write(&f64_file, bytes).unwrap();
    let message = Checkpoint::read(&f64_file).unwrap_err().to_string();
    assert!(message.contains("tensor model.x holds F64"), "{message}");

    let data = vec![0u8; 4];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &data)
            .unwrap();
    let bytes = safetensors::serialize([("model.x", view)], None).unwrap();
    std::fs::write(&f64_file, bytes).unwrap();
    let message = Checkpoint::read(&f64_file).unwrap_err().to_string();
    assert!(
        message.contains("no `chapter09` metadata entry"),
        "{message}"
    );
}

#[test]
fn a_config_no_run_can_be_built_from_is_refused_when_read() {
    let (dir, path, _) = saved();
    type Edit = fn(&mut TrainConfig);
    let broken: [(Edit, &str); 5] = [
        (
            |c| c.embed_size = 0,
            "embed_size is 0, the model needs at least 1",
        ),
        (
            |c| c.num_hiddens = 0,
            "num_hiddens is 0, the model needs at least 1",
        ),
        (
            |c| c.batch_size = 0,
            "batch_size is 0, a batch needs at least 1",
        ),
        (
            |c| c.held_out = usize::MAX,
            "train_size 800 and held_out 18446744073709551615 do not fit in 0..1000 (max_number)",
        ),
        (|c| c.clip = -1.0, "clip is -1, it must be finite and ≥ 0"),
    ];
    for (i, (edit, reason)) in broken.into_iter().enumerate() {
        let mut c = Checkpoint::read(&path).unwrap();
        edit(&mut c.info.config);
        let file = dir.path(&format!("config-{i}.safetensors"));
        c.write(&file).unwrap();
        let e = Checkpoint::read(&file).unwrap_err();
        assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "{}: not a valid checkpoint: the `chapter09` metadata entry's config: {reason}",
                file.display()
            )
        );
    }
}

#[test]
fn a_config_whose_two_sets_use_every_number_is_valid_and_one_more_is_not() {
    // split() accepts train + held_out == max_number (every number used once), so the
    // check on reading a checkpoint must too.
    let exact = TrainConfig {
        max_number: 100,
        train_size: 80,
        held_out: 20,
        ..TrainConfig::short()
    };
    assert_eq!(exact.validate(), Ok(()));
    let split = chapter09::split(100, 80, 20, 1);
    assert_eq!(split.train.len() + split.held_out.len(), 100);
    let over = TrainConfig {
        held_out: 21,
        ..exact
    };
    assert_eq!(
        over.validate(),
        Err("train_size 80 and held_out 21 do not fit in 0..100 (max_number)".into())
    );
}

#[test]
fn weights_only_cannot_resume_and_a_missing_file_says_so() {
    let (dir, _, t) = saved();
    save_weights(&t, dir.path("w.safetensors")).unwrap();
    let e = Checkpoint::read(dir.path("w.safetensors"))
        .unwrap()
        .resume(Seq2Seq::additive)
        .unwrap_err();
    assert!(
        matches!(e, CheckpointError::NoOptimizerState { .. }),
        "{e:?}"
    );
    let e = Checkpoint::read(dir.path("absent.safetensors")).unwrap_err();
    assert!(
        matches!(e, CheckpointError::Io { action: "read", .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("absent.safetensors: cannot read"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------
// The recorded runs the page reads

#[test]
fn the_recorded_model_scores_what_its_history_says() {
    let (model, c) = trained_additive();
    assert_eq!(c.info.config, TrainConfig::chapter());
    assert_eq!(c.info.step, c.info.config.steps);
    assert!(c.info.adam_steps.is_none(), "a weights-only file");
    let held_out = split(1_000_000, 20_000, 1_000, 0).held_out;
    let (accuracy, translations) = exact_match(
        &model,
        &held_out,
        &Vocab::source(),
        &Vocab::target(),
        EVAL_BATCH,
    );
    assert_eq!(c.info.history.held_out.last(), Some(&(1_000, accuracy)));
    assert!(accuracy >= 0.95, "{accuracy}");
    // The alignments are diagonal-like: monotonic, one row per output token and <eos>.
    for t in &translations {
        assert_eq!(t.weights.len(), t.ids.len() + 1);
        assert!(
            t.weights
                .iter()
                .all(|w| (w.iter().sum::<f32>() - 1.0).abs() < 1e-4)
        );
    }
    let monotonic = translations.iter().filter(|t| t.is_monotonic()).count();
    assert!(monotonic >= 950, "{monotonic}");
}

/// Steps of the recorded runs that the tests replay on every kernel path. Every step runs
/// every op of the model forward and backward, and an Adam update, so a kernel that rounds
/// differently shows in the first losses; eight steps also take the optimizer's moments and
/// the warmup through several updates. The whole 1,000-step run is reproduced by `cargo run
/// --release -p chapter09 --example train -- --check`, which continuous integration runs on
/// the best path and on AVX2 (`.ci/same-bits`). (25 steps here took a third of the
/// workspace's test time.)
const REPLAYED_STEPS: usize = 8;

/// The first [`REPLAYED_STEPS`] steps of the recorded run, replayed on every kernel path
/// this CPU has (AVX-512, AVX2, portable): the same losses, bit for bit, as the recording,
/// whichever CPU made it.
fn replay<A: DecoderAttention>(name: &str, build: fn(Seq2SeqConfig) -> Seq2Seq<A>) {
    let recorded = recorded(name);
    assert_eq!(
        recorded.info.history.losses.len(),
        recorded.info.config.steps
    );
    let want = &recorded.info.history.losses[..REPLAYED_STEPS];
    for path in KernelPath::supported() {
        let losses = kernels::with_path(path, || {
            let mut t = Trainer::new(recorded.info.config, build);
            t.train_until(REPLAYED_STEPS, |_| {});
            t.history.losses
        });
        let first_difference = losses
            .iter()
            .zip(want)
            .position(|(a, b)| a.to_bits() != b.to_bits());
        if let Some(step) = first_difference {
            panic!(
                "{name} on the {path} kernels, step {step}: loss {} now, {} recorded",
                losses[step], want[step]
            );
        }
    }
}

#[test]
fn the_recorded_additive_run_replays() {
    replay("additive", Seq2Seq::additive);
}

/// The dot-product run uses exercise 1; the reference solution replays it (your own
/// solution may sum in another order, so it is not held to the recording).
#[cfg(not(feature = "exercises"))]
#[test]
fn the_recorded_dot_product_run_replays_and_scores_what_it_says() {
    use chapter09::exercises::ScaledDotProduct;
    replay("dot-product", |c| Seq2Seq::new(c, ScaledDotProduct));
    let c = recorded("dot-product");
    let model = Seq2Seq::new(c.model_config(), ScaledDotProduct);
    c.load_weights(&model).unwrap();
    let held_out = split(1_000_000, 20_000, 1_000, 0).held_out;
    let (accuracy, _) = exact_match(
        &model,
        &held_out,
        &Vocab::source(),
        &Vocab::target(),
        EVAL_BATCH,
    );
    assert_eq!(c.info.history.held_out.last(), Some(&(1_000, accuracy)));
}

#[test]
fn the_alignment_examples_are_held_out() {
    let held_out = split(1_000_000, 20_000, 1_000, 0).held_out;
    let [a, b] = alignment_examples(&held_out);
    assert!(held_out.contains(&a) && held_out.contains(&b));
    assert!(
        (10..20).contains(&(a / 1000 % 100)),
        "{a}: a teen before thousand"
    );
    assert!(number_to_words(b).contains("thousand and"));
}

#[test]
fn the_progress_bar_is_hidden_unless_standard_error_is_a_terminal() {
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    let bar = progress_bar(10);
    assert_eq!(bar.is_hidden(), !std::io::stderr().is_terminal() || dumb);
    assert_eq!(bar.length(), Some(10));
    // A bar dropped unfinished draws its last state: hide it first, so that a test run in
    // a terminal prints nothing.
    bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
}
