//! The baselines of the character model's loss (counting models), and the pieces of
//! the paper's recipe: label smoothing against its gradient written by hand, the
//! inverse-square-root schedule, tied embeddings, and the recorded comparison.

use attention::prelude::*;
use chapter16::baseline::{CharCounts, pairs};
use chapter16::corpus::{CharVocab, Corpus};
use chapter16::lm::CharLm;
use chapter16::recipe::{
    EPSILON, RECIPE_SEEDS, RECIPE_STEPS, Recipe, RecipeRecord, inverse_sqrt_lr,
    recipe_step, run_config, small_model, smoothed_cross_entropy, trainer,
};

#[test]
fn the_unigram_loss_of_a_text_on_itself_is_its_entropy() {
    // "abracadabra": a five times, b and r twice, c and d once, in 11 characters.
    let text = "abracadabra";
    let vocab = CharVocab::from_text(text);
    let ids = vocab.encode(text);
    let counts = CharCounts::new(&ids, vocab.len(), 0.0);
    let h = |n: f64| -(n / 11.0) * (n / 11.0).ln();
    let entropy = h(5.0) + 2.0 * h(2.0) + 2.0 * h(1.0);
    assert!((counts.unigram_loss(&ids) - entropy).abs() < 1e-12);
    // Add-one on the same counts: (count + 1) / (11 + 5).
    let counts = CharCounts::new(&ids, vocab.len(), 1.0);
    assert!(
        (counts.unigram_probability(vocab.encode("a")[0]) - 6.0 / 16.0).abs() < 1e-12
    );
    let by_hand = -(6.0 / 16.0f64).ln();
    assert!((counts.unigram_loss(&vocab.encode("aa")) - by_hand).abs() < 1e-12);
}

#[test]
fn the_bigram_counts_what_follows_each_character() {
    let text = "abracadabra";
    let vocab = CharVocab::from_text(text);
    let ids = vocab.encode(text);
    let id = |c: &str| vocab.encode(c)[0];
    let ml = CharCounts::new(&ids, vocab.len(), 0.0);
    // After "a": b twice, c once, d once (the last "a" ends the text).
    assert!((ml.bigram_probability(id("a"), id("b")) - 0.5).abs() < 1e-12);
    assert!((ml.bigram_probability(id("r"), id("a")) - 1.0).abs() < 1e-12);
    assert_eq!(ml.unseen(&[(id("a"), id("a")), (id("a"), id("b"))]), 1);
    // Add-one: (2 + 1) / (4 + 5) for "b" after "a"; an unseen pair gets 1 / 9.
    let add_one = CharCounts::new(&ids, vocab.len(), 1.0);
    assert!((add_one.bigram_probability(id("a"), id("b")) - 3.0 / 9.0).abs() < 1e-12);
    let loss = add_one.bigram_loss(&[(id("a"), id("a"))]);
    assert!((loss - 9f64.ln()).abs() < 1e-12);
    // The probabilities after each character sum to 1.
    for p in 0..vocab.len() {
        let total: f64 = (0..vocab.len())
            .map(|c| add_one.bigram_probability(p, c))
            .sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
}

#[test]
fn the_model_beats_the_bigram_which_beats_the_unigram() {
    let corpus = Corpus::shipped();
    let counts = CharCounts::new(&corpus.train, corpus.vocab.len(), 1.0);
    let split = pairs(&corpus.val);
    let targets: Vec<usize> = split.iter().map(|&(_, t)| t).collect();
    let unigram = counts.unigram_loss(&targets);
    let bigram = counts.bigram_loss(&split);
    let (_, record) = chapter16::record::recorded_lm();
    let (_, model) = *record.history.val.last().unwrap();
    assert!((corpus.vocab.len() as f64).ln() > unigram);
    assert!(unigram > bigram && bigram > f64::from(model) + 0.5);
}

/// `(softmax(z) − q) / rows` in f64, from the logits' values: the gradient of the
/// smoothed cross-entropy written by hand.
fn smoothed_gradient(
    logits: &[f32],
    targets: &[usize],
    k: usize,
    eps: f64,
) -> Vec<f64> {
    let rows = targets.len();
    let mut grad = Vec::new();
    for (r, &t) in targets.iter().enumerate() {
        let z: Vec<f64> = logits[r * k..(r + 1) * k]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let top = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = z.iter().map(|v| (v - top).exp()).sum();
        for (c, v) in z.iter().enumerate() {
            let q = if c == t { 1.0 - eps } else { 0.0 } + eps / k as f64;
            grad.push(((v - top).exp() / sum - q) / rows as f64);
        }
    }
    grad
}

#[test]
fn label_smoothing_has_the_gradient_softmax_minus_the_smoothed_targets() {
    engine::manual_seed(5);
    let (rows, k) = (6, 7);
    let values = Tensor::randn([rows, k]).to_vec();
    let targets = [0usize, 3, 6, 2, 2, 5];
    let target_tensor =
        Tensor::from_vec(targets.iter().map(|&t| t as f32).collect(), [rows]);
    let logits = Tensor::from_vec(values.clone(), [rows, k]).requires_grad_();
    let loss = smoothed_cross_entropy(&logits, &target_tensor, EPSILON);
    loss.backward();
    let grad = logits.grad().unwrap().to_vec();
    let by_hand = smoothed_gradient(&values, &targets, k, f64::from(EPSILON));
    for (a, b) in grad.iter().zip(&by_hand) {
        assert!((f64::from(*a) - b).abs() < 1e-6, "{a} against {b}");
    }
    // And the value: −Σ q log p by hand.
    let mut total = 0.0;
    for (r, &t) in targets.iter().enumerate() {
        let z: Vec<f64> = values[r * k..(r + 1) * k]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let lse = z.iter().map(|v| v.exp()).sum::<f64>().ln();
        for (c, v) in z.iter().enumerate() {
            let q = if c == t { 1.0 - 0.1 } else { 0.0 } + 0.1 / k as f64;
            total -= q * (v - lse);
        }
    }
    assert!((f64::from(loss.item()) - total / rows as f64).abs() < 1e-5);
    // A finite difference agrees with the gradient in one coordinate.
    let at = |delta: f32| {
        let mut v = values.clone();
        v[10] += delta;
        smoothed_cross_entropy(
            &Tensor::from_vec(v, [rows, k]),
            &target_tensor,
            EPSILON,
        )
        .item()
    };
    let numeric = (at(1e-2) - at(-1e-2)) / 2e-2;
    assert!(
        (numeric - grad[10]).abs() < 1e-3,
        "{numeric} against {}",
        grad[10]
    );
}

#[test]
fn without_smoothing_the_loss_is_the_cross_entropy() {
    engine::manual_seed(6);
    let logits = Tensor::randn([4, 5]);
    let targets = Tensor::from_vec(vec![1.0, 0.0, 4.0, 4.0], [4]);
    assert_eq!(
        smoothed_cross_entropy(&logits, &targets, 0.0).item(),
        logits.cross_entropy(&targets, Reduction::Mean).item()
    );
    // Uniform logits cost ln K whatever ε.
    let flat = Tensor::zeros([4, 5]);
    let loss = smoothed_cross_entropy(&flat, &targets, EPSILON).item();
    assert!((loss - 5f32.ln()).abs() < 1e-6);
}

#[test]
fn the_inverse_sqrt_schedule_rises_for_warmup_steps_then_falls_as_one_over_root_step()
{
    let (d, warmup) = (512, 4000);
    let peak = inverse_sqrt_lr(d, warmup, warmup - 1);
    assert!((peak - (512.0f32 * 4000.0).powf(-0.5)).abs() < 1e-9);
    // Linear in the step before the peak, 1/√s after it.
    let first = inverse_sqrt_lr(d, warmup, 0);
    assert!((inverse_sqrt_lr(d, warmup, 99) / first - 100.0).abs() < 1e-3);
    let later = inverse_sqrt_lr(d, warmup, 4 * warmup - 1);
    assert!((later / peak - 0.5).abs() < 1e-6);
    for step in 1..3 * warmup {
        let (before, now) = (
            inverse_sqrt_lr(d, warmup, step - 1),
            inverse_sqrt_lr(d, warmup, step),
        );
        assert_eq!(now > before, step < warmup, "at step {step}");
    }
}

#[test]
fn a_tied_model_shares_one_matrix_and_has_vocab_times_d_fewer_parameters() {
    let corpus = Corpus::shipped();
    let config = small_model(corpus.vocab.len());
    engine::manual_seed(0);
    let untied = CharLm::new(config);
    engine::manual_seed(0);
    let tied = CharLm::tied(config);
    assert!(tied.is_tied() && !untied.is_tied());
    assert_eq!(
        untied.num_parameters() - tied.num_parameters(),
        config.vocab * config.num_hiddens
    );
    let names: Vec<String> = tied
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"head.bias".to_string()));
    assert!(!names.contains(&"head.weight".to_string()));
    // The same draws for every other parameter.
    let untied_state = untied.state_dict();
    for (name, t) in tied.state_dict().iter() {
        if name.starts_with("layers.") || name.starts_with("position_embedding") {
            assert_eq!(
                t.to_vec(),
                untied_state.get(name).unwrap().to_vec(),
                "{name}"
            );
        }
    }
    // The shared table is the untied embedding's draws divided by √d.
    let scale = (config.num_hiddens as f32).sqrt();
    let shared = tied
        .state_dict()
        .get("token_embedding.weight")
        .unwrap()
        .to_vec();
    let own = untied_state.get("token_embedding.weight").unwrap().to_vec();
    for (a, b) in shared.iter().zip(&own) {
        assert!(
            (a * scale - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{a} against {b}"
        );
    }
    // One backward pass: the shared table's gradient has both uses' contributions.
    let (x, y) = chapter16::corpus::batch(
        &corpus.train,
        config.block_size,
        4,
        &mut chapter09::SplitMix64::new(1),
    );
    tied.loss(&x, &y).backward();
    let table = tied
        .named_parameters()
        .into_iter()
        .find(|(n, _)| n == "token_embedding.weight")
        .unwrap()
        .1;
    let grad = table.grad().unwrap().to_vec();
    // Rows of characters absent from the inputs still get a gradient, from the head.
    let present: Vec<usize> = x.to_vec().iter().map(|&v| v as usize).collect();
    let absent = (0..config.vocab).find(|c| !present.contains(c)).unwrap();
    let row = &grad[absent * config.num_hiddens..(absent + 1) * config.num_hiddens];
    assert!(row.iter().any(|&g| g != 0.0));
}

#[test]
fn the_chapters_recipe_and_the_papers_learn_in_a_short_run() {
    let corpus = Corpus::shipped();
    // The chapter's recipe, and the one with all three of the paper's changes.
    for recipe in [Recipe::all()[0], Recipe::all()[4]] {
        let config = chapter16::lm_train::LmTrainConfig {
            steps: 30,
            batch_size: 4,
            ..run_config(corpus.vocab.len(), 0)
        };
        let mut t = trainer(&recipe, config, corpus.clone());
        for _ in 0..30 {
            recipe_step(&mut t, &recipe);
        }
        let losses = &t.history.losses;
        let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
        assert!(
            mean(&losses[25..]) < mean(&losses[..5]) - 0.5,
            "{}: {losses:?}",
            recipe.label()
        );
    }
}

#[test]
fn the_first_steps_of_the_recorded_runs_replay_bit_for_bit() {
    let corpus = Corpus::shipped();
    let record = RecipeRecord::recorded();
    assert_eq!(record.runs.len(), Recipe::all().len() * RECIPE_SEEDS.len());
    // The run that uses all three of the paper's changes, and the chapter's.
    for recipe in [Recipe::all()[0], Recipe::all()[4]] {
        let recorded = record.runs_of(&recipe)[0];
        assert_eq!(recorded.losses.len(), RECIPE_STEPS);
        let mut t = trainer(
            &recipe,
            run_config(corpus.vocab.len(), recorded.seed),
            corpus.clone(),
        );
        for _ in 0..3 {
            recipe_step(&mut t, &recipe);
        }
        let ours: Vec<u32> = t.history.losses.iter().map(|l| l.to_bits()).collect();
        let theirs: Vec<u32> =
            recorded.losses[..3].iter().map(|l| l.to_bits()).collect();
        assert_eq!(ours, theirs, "{}", recipe.label());
        assert_eq!(recorded.parameters, t.model.num_parameters());
    }
}

#[test]
fn the_recorded_comparison_shows_what_the_page_says() {
    let record = RecipeRecord::recorded();
    let [chapter, schedule, smoothing, tied, all] = Recipe::all();
    let range = |recipe: &Recipe, f: fn(&chapter16::recipe::RecipeRun) -> f32| {
        let values: Vec<f32> = record.runs_of(recipe).iter().map(|r| f(r)).collect();
        let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        (lo, hi)
    };
    let val = |r: &Recipe| range(r, |run| run.val);
    let smoothed = |r: &Recipe| range(r, |run| run.val_smoothed);
    // The schedule: lower for every seed, the ranges apart.
    assert!(val(&schedule).1 < val(&chapter).0);
    // Label smoothing: a higher cross-entropy, a lower smoothed loss, ranges apart.
    assert!(val(&chapter).1 < val(&smoothing).0);
    assert!(smoothed(&smoothing).1 < smoothed(&chapter).0);
    // Tying: the highest loss of the five, apart from the chapter's range.
    assert!(val(&chapter).1 < val(&tied).0);
    for other in [chapter, schedule, smoothing, all] {
        assert!(val(&other).1 < val(&tied).0, "{}", other.label());
    }
    // All three: overlapping the chapter's range, above the schedule alone.
    let (a, c) = (val(&all), val(&chapter));
    assert!(a.0 <= c.1 && c.0 <= a.1, "{a:?} and {c:?} overlap");
    assert!(val(&schedule).1 < a.0);
    // Tying removes the output layer's matrix, vocab × d.
    let corpus = Corpus::shipped();
    let m = small_model(corpus.vocab.len());
    let params = |r: &Recipe| record.runs_of(r)[0].parameters;
    assert_eq!(params(&chapter) - params(&tied), m.vocab * m.num_hiddens);
    // The formula's peak rate is more than 30 times the chapter's.
    let config = run_config(corpus.vocab.len(), 0);
    let peak = inverse_sqrt_lr(m.num_hiddens, config.warmup, config.warmup - 1);
    assert!(peak > 30.0 * config.lr);
}

#[test]
fn the_smoothed_loss_of_the_example_is_pytorchs() {
    let json: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/golden/claims/ch16.json"))
            .unwrap();
    let recorded = json["recordings"]["label_smoothing_value"]["value"]
        .as_str()
        .unwrap();
    let ours = chapter16::recipe::label_smoothing_example();
    assert_eq!(format!("{ours:.4}"), recorded);
    // Closer than the four printed decimals: within f32 rounding of PyTorch's value.
    let theirs: f32 = recorded.parse().unwrap();
    assert!((ours - theirs).abs() < 6e-5);
}
