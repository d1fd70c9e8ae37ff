//! The additive decoder's cache (the keys projected once per sentence) and the coverage
//! loss: the cache changes no bit of a decoding, the hand count of the multiply-adds it
//! saves agrees with the model's shapes, and the coverage run is what its recording says.

use attention::prelude::*;
use chapter09::coverage::{
    COVERAGE_WEIGHT, Shares, coverage_loss, forward_with_weights, naming_words,
    token_counts, train_step_with_coverage,
};
use chapter09::*;
use engine::kernels::{self, KernelPath};

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|x| x.to_bits()).collect()
}

/// Held-out numbers of every length, and small numbers the model gets wrong: batches with
/// padding, and decodings that stop at different steps.
fn some_numbers() -> Vec<u32> {
    let (_, checkpoint) = trained_additive();
    let c = checkpoint.info.config;
    let mut numbers = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    numbers.truncate(60);
    numbers.extend([0, 7, 10, 42, 100, 999, 1000, 777_777]);
    numbers
}

#[test]
fn the_cached_decoder_writes_the_same_tokens_and_weights_bit_for_bit() {
    // The same ops in the same order on the same inputs: W_k k is one product either way,
    // so caching it changes no bit. Bit for bit, not to a tolerance.
    let (model, _) = trained_additive();
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let numbers = some_numbers();
    let again = greedy_decode(&model, &numbers, &src, &tgt, 7);
    let cached = cached_greedy_decode(&model, &numbers, &src, &tgt, 7);
    assert_eq!(again.len(), cached.len());
    for (a, b) in again.iter().zip(&cached) {
        assert_eq!(a.ids, b.ids, "{}", a.number);
        assert_eq!(a.weights.len(), b.weights.len(), "{}", a.number);
        for (x, y) in a.weights.iter().zip(&b.weights) {
            let (x, y): (Vec<u32>, Vec<u32>) = (
                x.iter().map(|w| w.to_bits()).collect(),
                y.iter().map(|w| w.to_bits()).collect(),
            );
            assert_eq!(x, y, "{}", a.number);
        }
    }
    // Some of these decodings are wrong: equality holds for them too.
    assert!(again.iter().any(|t| !t.is_exact(&tgt)));
}

#[test]
fn attending_to_projected_keys_is_the_module_bit_for_bit_with_its_mask() {
    engine::manual_seed(3);
    let model = Seq2Seq::additive(TrainConfig::short().model());
    let (b, s, h) = (3, 6, model.config().num_hiddens);
    let query = Tensor::randn([b, h]);
    let enc_outputs = Tensor::randn([b, s, h]);
    let mask = Mask::valid_lens(&Tensor::from_vec(vec![6.0, 2.0, 4.0], [3]));
    let attention = model.decoder.attention();
    let (context, weights) = attention.attend(&query, &enc_outputs, &mask);
    let cache = AdditiveCache::new(attention, &enc_outputs, &mask);
    let (c2, w2) =
        attend_projected(attention, &query, &cache.keys, &cache.values, &mask);
    assert_eq!(bits(&context), bits(&c2));
    assert_eq!(bits(&weights), bits(&w2));
    // The mask is honoured: no weight beyond each valid length.
    let w = w2.to_vec();
    assert!(w[6 + 2..12].iter().all(|&x| x == 0.0));
    assert!(w[12 + 4..18].iter().all(|&x| x == 0.0));
    // And one step of the decoder, cached or not.
    let ids = Tensor::from_vec(vec![1.0, 4.0, 7.0], [3]);
    let (next, a) = model.decoder.step(&ids, &query, &enc_outputs, &mask);
    let (next2, a2) = cached_step(&model.decoder, &cache, &ids, &query);
    assert_eq!(bits(&next), bits(&next2));
    assert_eq!(bits(&a), bits(&a2));
}

#[test]
fn the_hand_count_of_a_step_agrees_with_the_model_s_shapes() {
    let (model, _) = trained_additive();
    let c = *model.config();
    let numel = |name: &str| -> usize {
        model
            .state_dict()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.shape().iter().product())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let h = numel("decoder.attention.w_v.weight"); // [1, h]
    for s in [2, 7, 12] {
        let cost = StepCost::of(&c, s);
        // A product of a vector by an [m, n] matrix is m·n multiply-adds, once per key.
        assert_eq!(cost.keys, s * numel("decoder.attention.W_k.weight"));
        let rest = numel("decoder.attention.W_q.weight")
            + s * h // w_v · tanh(q̃ + k̃), per key
            + s * c.num_hiddens // the context, Σ a·v
            + numel("decoder.rnn.weight_ih")
            + numel("decoder.rnn.weight_hh")
            + numel("decoder.dense.weight");
        assert_eq!(cost.rest, rest);
        assert_eq!(cost.recomputed() - cost.cached(), s * h * c.num_hiddens);
    }
    // The cache's keys: [B, S, h], from [B, S, H] times W_k [h, H]: B·S·h·H multiply-adds
    // once, which recomputation pays at every step.
    let batch = Batch::new(&[342, 40_005], &Vocab::source(), &Vocab::target());
    let (enc_outputs, _) = model.encoder.forward(&batch.src, &batch.src_lens);
    let cache = AdditiveCache::new(
        model.decoder.attention(),
        &enc_outputs,
        &Mask::valid_lens(&batch.src_lens),
    );
    let (b, s) = (batch.src.size(0), batch.src.size(1));
    assert_eq!(cache.keys.shape(), &[b, s, h]);
    assert_eq!(
        b * s * h * c.num_hiddens,
        b * StepCost::of(&c, s).keys,
        "one step's saving, per sentence"
    );
}

#[test]
fn the_naming_word_of_every_nonzero_digit_says_that_digit() {
    let ones = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
        "nine",
    ];
    let tens = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
        "ninety",
    ];
    let teens = [
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    assert_eq!(naming_words(342), vec![Some(0), Some(3), Some(4)]);
    assert_eq!(
        naming_words(40_005),
        vec![Some(0), None, None, None, Some(3)]
    );
    assert_eq!(naming_words(11), vec![Some(0), Some(0)]);
    assert_eq!(naming_words(0), vec![None]);
    for n in (0..1_000_000u32).step_by(97).chain([10, 1_010, 711_019]) {
        let words = source_tokens(n);
        let digits: Vec<u32> =
            n.to_string().bytes().map(|b| u32::from(b - b'0')).collect();
        let names = naming_words(n);
        assert_eq!(names.len(), digits.len(), "{n}");
        for (i, (&d, name)) in digits.iter().zip(&names).enumerate() {
            let place = (digits.len() - 1 - i) % 3; // 2 hundreds, 1 tens, 0 units
            match name {
                None => assert_eq!(d, 0, "{n}: digit {i}"),
                Some(w) => {
                    let word = words[*w].as_str();
                    let teen = teens.contains(&word);
                    let says = match place {
                        1 => (d == 1 && teen) || tens[d as usize] == word,
                        _ => {
                            ones[d as usize] == word
                                || (teen && teens[d as usize] == word)
                        }
                    };
                    assert!(d != 0 && says, "{n}: digit {i} ({d}) named by {word}");
                }
            }
        }
    }
}

#[test]
fn the_shares_are_measured_as_defined() {
    let tgt = Vocab::target();
    // 342: three hundred and forty two <eos>; digits named by three, forty, two.
    let ids = |s: &str| {
        s.chars()
            .map(|c| tgt.id(&c.to_string()))
            .collect::<Vec<_>>()
    };
    let t = Translation {
        number: 342,
        ids: ids("342"),
        weights: vec![
            vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0], // 3 at hundred: the token after
            vec![0.0, 0.0, 0.5, 0.5, 0.0, 0.0], // 4: half on and, half on forty
            vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0], // 2 at two
            vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0], // <eos> at <eos>
        ],
    };
    let s = Shares::measure(&[t], &["and", "hundred", "<eos>"], &tgt);
    assert_eq!((s.exact, s.named_steps, s.other_steps), (1, 3, 1));
    assert!((s.on_word - 0.5).abs() < 1e-6, "{}", s.on_word); // (0 + 0.5 + 1) / 3
    assert!((s.on_next - 1.0 / 3.0).abs() < 1e-6); // (1 + 0 + 0) / 3
    assert!((s.on_frequent - 0.5).abs() < 1e-6); // (1 + 0.5 + 0) / 3
    assert!((s.frequent_elsewhere - 1.0 / 6.0).abs() < 1e-6); // `and` for the 4
    assert!((s.uniform - 0.5).abs() < 1e-6); // hundred, and, <eos>: 3 of 6
    assert_eq!(s.other_on_frequent, 1.0);
    // Coverage: step 1 re-attends nothing (c = hundred), nor does step 2 (c on hundred,
    // and, forty) or step 3: 0.
    assert_eq!(s.coverage, 0.0);
    let counts = token_counts(&[342, 12]);
    assert_eq!(counts[0], ("<eos>".to_string(), 2));
}

#[test]
fn the_coverage_loss_pays_for_weight_put_again_where_earlier_steps_looked() {
    // Two examples, three steps over three source positions; the second target has
    // length 2, so its third step is padding.
    let a = [
        Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.5, 0.5, 0.0], [2, 3]),
        Tensor::from_vec(vec![0.6, 0.4, 0.0, 0.5, 0.0, 0.5], [2, 3]),
        Tensor::from_vec(vec![0.0, 0.2, 0.8, 0.0, 0.0, 1.0], [2, 3]),
    ];
    let lens = Tensor::from_vec(vec![3.0, 2.0], [2]);
    // Example 1: 0, min(0.6, 1) + min(0.4, 0) = 0.6, min(0.2, 0.4) = 0.2.
    // Example 2: 0, min(0.5, 0.5) = 0.5 (its third step is not counted).
    let want = (0.6 + 0.2 + 0.5) / 5.0;
    let got = coverage_loss(&a, &lens).item();
    assert!((got - want).abs() < 1e-6, "{got} vs {want}");
}

#[test]
fn with_no_penalty_the_coverage_step_is_the_chapter_s_step_bit_for_bit() {
    let mut plain = Trainer::additive(TrainConfig::short());
    let mut ours = Trainer::additive(TrainConfig::short());
    for _ in 0..3 {
        let (a, b) = (plain.train_step(), train_step_with_coverage(&mut ours, 0.0));
        assert_eq!(a.loss.to_bits(), b.loss.to_bits());
        assert_eq!(a.grad_norm.to_bits(), b.grad_norm.to_bits());
    }
    for ((_, x), (_, y)) in plain
        .model
        .state_dict()
        .iter()
        .zip(ours.model.state_dict().iter())
    {
        assert_eq!(bits(x), bits(y));
    }
    // Teacher forcing with the weights in the graph gives the logits of Seq2Seq::forward.
    let batch = Batch::new(&[342, 12, 40], &Vocab::source(), &Vocab::target());
    let (logits, weights) = forward_with_weights(&ours.model, &batch);
    let want = ours
        .model
        .forward(&batch.src, &batch.src_lens, &batch.dec_input);
    assert_eq!(bits(&logits), bits(&want));
    assert_eq!(weights.len(), batch.dec_input.size(1));
}

#[test]
fn the_coverage_penalty_trains_the_cross_entropy_down_and_the_coverage_with_it() {
    let short = TrainConfig::short();
    let mut t = Trainer::additive(short);
    let batch = Batch::new(&t.split.held_out[..32], &t.src_vocab, &t.tgt_vocab);
    let coverage = |t: &Trainer| {
        let (_, w) = forward_with_weights(&t.model, &batch);
        coverage_loss(&w, &batch.tgt_lens).item()
    };
    let before = coverage(&t);
    for _ in 0..short.steps {
        train_step_with_coverage(&mut t, COVERAGE_WEIGHT);
    }
    let l = &t.history.losses;
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    assert!(mean(&l[l.len() - 5..]) < 0.7 * mean(&l[..5]), "{l:?}");
    assert!(coverage(&t) < before, "{} then {before}", coverage(&t));
}

/// The recorded coverage run: its first steps replayed on every kernel path this CPU has,
/// the same losses bit for bit (`examples/coverage.rs -- --check` replays all 1,000), and
/// its last held-out score what its weights decode now.
#[test]
fn the_recorded_coverage_run_replays_and_scores_what_it_says() {
    let recorded = recorded("coverage");
    let c = recorded.info.config;
    assert_eq!(c, TrainConfig::chapter());
    let want = &recorded.info.history.losses[..4];
    for path in KernelPath::supported() {
        let losses = kernels::with_path(path, || {
            let mut t = Trainer::additive(c);
            for _ in 0..4 {
                train_step_with_coverage(&mut t, COVERAGE_WEIGHT);
            }
            t.history.losses
        });
        let got: Vec<u32> = losses.iter().map(|l| l.to_bits()).collect();
        let want: Vec<u32> = want.iter().map(|l| l.to_bits()).collect();
        assert_eq!(got, want, "{path}");
    }
    let (model, _) = trained_coverage();
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let (accuracy, _) = exact_match(
        &model,
        &held_out,
        &Vocab::source(),
        &Vocab::target(),
        EVAL_BATCH,
    );
    let &(step, last) = recorded.info.history.held_out.last().expect("scores");
    assert_eq!((step, accuracy), (c.steps, last));
}
