//! Everything the chapter's page prints, section by section: `cargo run -p
//! chapter16` prints it all, and the page test checks that the page quotes each
//! section exactly.

use std::fmt::Write as _;

use attention::prelude::*;
use chapter09::plots::{by_word, source_labels, target_labels};
use chapter09::{EVAL_BATCH, Vocab, number_to_words, split, table, trained_additive};

use crate::baseline::{CharCounts, batch_pairs, pairs};
use crate::corpus::{Corpus, eval_batches};
use crate::lm::{LmConfig, Sampling, generate};
use crate::lm_train::{LmTrainConfig, LmTrainer, resume_lm, save_lm_checkpoint};
use crate::placement::{PlacementRecord, deep_model, gradient_norms_at_init};
use crate::recipe::{
    EPSILON, LABEL_SMOOTHING_EXAMPLE, RECIPE_STEPS, RecipeRecord, inverse_sqrt_lr,
    label_smoothing_example, run_config,
};
use crate::record::{GenerationTimes, recorded_lm, recorded_translation};
use crate::seq2seq::{cross_attention_heads, exact_match, greedy_decode};

/// Appends `text` and a newline.
fn line(out: &mut String, text: impl AsRef<str>) {
    out.push_str(text.as_ref());
    out.push('\n');
}

/// Section 1: the layers, their parameters under this crate's names and PyTorch's,
/// and a PyTorch-named state loaded as it is.
pub fn layers_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_layers
    engine::manual_seed(0);
    let config = TransformerLayerConfig {
        num_hiddens: 64,
        num_heads: 4,
        ffn_num_hiddens: 128,
        dropout: 0.0,
        ..Default::default()
    };
    let encoder = TransformerEncoderLayer::new(config);
    let decoder = TransformerDecoderLayer::new(config);
    let (x, memory) = (Tensor::randn([2, 7, 64]), Tensor::randn([2, 9, 64]));
    let src_lens = Mask::valid_lens(&Tensor::from_vec(vec![9.0, 5.0], [2]));
    let y = decoder.forward(&x, &memory, &Mask::causal(), &src_lens);
    let cross = decoder
        .cross_attention()
        .last_attention_weights()
        .expect("ran");
    line(
        &mut out,
        format!("target {:?}, memory {:?}", x.shape(), memory.shape()),
    );
    line(&mut out, format!("decoder layer output {:?}", y.shape()));
    line(
        &mut out,
        format!(
            "cross-attention weights {:?}  [B, heads, T, S]",
            cross.shape()
        ),
    );
    for (name, layer) in [("encoder", &encoder as &dyn Module), ("decoder", &decoder)]
    {
        line(
            &mut out,
            format!("{name} layer: {} parameters", layer.num_parameters()),
        );
    }
    line(&mut out, "the decoder layer's parameters:");
    for (name, p) in decoder.named_parameters() {
        if name.contains(".W_k.") || name.contains(".W_v.") {
            continue; // shown once, as W_q: the same shapes
        }
        line(&mut out, format!("  {name:<28} {:?}", p.shape()));
    }
    // ANCHOR_END: tour_layers
    // ANCHOR: tour_torch_names
    // The same weights under PyTorch's names: W_q, W_k, W_v stacked as in_proj_*.
    let mut torch = StateDict::new();
    for (name, t) in encoder.state_dict().iter() {
        torch.insert(
            name.replace("self_attn.W_o", "self_attn.out_proj"),
            t.clone(),
        );
    }
    for part in ["weight", "bias"] {
        let qkv: Vec<Tensor> = ["W_q", "W_k", "W_v"]
            .iter()
            .map(|w| {
                torch
                    .remove(&format!("self_attn.{w}.{part}"))
                    .expect("present")
            })
            .collect();
        torch.insert(format!("self_attn.in_proj_{part}"), Tensor::concat(&qkv, 0));
    }
    let loaded = TransformerEncoderLayer::from_state_dict(config, &torch)
        .expect("PyTorch's names load");
    let same = loaded.forward(&memory, &src_lens).to_vec()
        == encoder.forward(&memory, &src_lens).to_vec();
    let mut names: Vec<&str> = torch
        .names()
        .filter(|n| n.starts_with("self_attn"))
        .collect();
    names.sort();
    let names = format!("PyTorch's names: {}", names.join(", "));
    line(&mut out, lesson::wrap(&names, lesson::COLUMNS));
    line(
        &mut out,
        format!("loaded by those names, the same output: {same}"),
    );
    // ANCHOR_END: tour_torch_names
    out
}

/// Section 2: the encoder–decoder on chapter 9's task, beside chapter 9's GRU.
pub fn translation_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_translation
    let (model, record) = recorded_translation();
    let (gru, gru_run) = trained_additive();
    let c = record.model;
    line(
        &mut out,
        format!(
            "Transformer: d = {}, {} heads, ffn {}, {} + {} layers, {}",
            c.num_hiddens,
            c.num_heads,
            c.ffn_num_hiddens,
            c.num_layers,
            c.num_layers,
            if c.norm_first {
                "pre-norm"
            } else {
                "post-norm"
            }
        ),
    );
    line(
        &mut out,
        format!(
            "parameters: Transformer {}, chapter 9's GRU with additive attention {}",
            model.num_parameters(),
            gru.num_parameters()
        ),
    );
    line(
        &mut out,
        format!("{:>5}  {:>11}  {:>11}", "step", "Transformer", "GRU"),
    );
    for (&(step, ours), &(_, theirs)) in record
        .history
        .held_out
        .iter()
        .zip(&gru_run.info.history.held_out)
    {
        line(&mut out, format!("{step:>5}  {ours:>11.3}  {theirs:>11.3}"));
    }
    line(
        &mut out,
        format!("training steps per second, on {}:", record.machine),
    );
    line(
        &mut out,
        format!(
            "  Transformer {:.1}, GRU {:.1}",
            record.steps_per_second, record.gru_steps_per_second
        ),
    );
    let t = record.train;
    let held_out = split(t.max_number, t.train_size, t.held_out, t.seed).held_out;
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let (accuracy, translations) =
        exact_match(&model, &held_out, &src, &tgt, EVAL_BATCH);
    let right = translations.iter().filter(|t| t.is_exact(&tgt)).count();
    line(
        &mut out,
        "decoded now from trained/translation.safetensors:",
    );
    line(
        &mut out,
        format!(
            "  held-out exact match {accuracy:.3} ({right} of {})",
            translations.len()
        ),
    );
    for t in translations.iter().take(4) {
        line(
            &mut out,
            format!(
                "{:>7}  {:<62} -> {}",
                t.number,
                number_to_words(t.number),
                t.text(&tgt)
            ),
        );
    }
    for t in translations.iter().filter(|t| !t.is_exact(&tgt)).take(3) {
        let words = number_to_words(t.number);
        let wrong = format!("wrong: {} ({words}) -> {}", t.number, t.text(&tgt));
        line(&mut out, lesson::wrap(&wrong, lesson::COLUMNS));
    }
    // ANCHOR_END: tour_translation
    out
}

/// The translation whose cross-attention the page draws: the first held-out number
/// of at least four words.
pub fn heatmap_translation()
-> (crate::seq2seq::TransformerSeq2Seq, chapter09::Translation) {
    let (model, record) = recorded_translation();
    let t = record.train;
    let held_out = split(t.max_number, t.train_size, t.held_out, t.seed).held_out;
    let number = *held_out
        .iter()
        .find(|&&n| number_to_words(n).split(' ').count() >= 4)
        .expect("a long number");
    let translation =
        greedy_decode(&model, &[number], &Vocab::source(), &Vocab::target(), 7)
            .remove(0);
    (model, translation)
}

/// Section 3: where each head of the last decoder layer looks for one example.
pub fn heads_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_heads
    let (model, translation) = heatmap_translation();
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let heads = cross_attention_heads(&model, &translation, &src, &tgt);
    let words = number_to_words(translation.number);
    let head = format!(
        "{} ({words}) -> {}",
        translation.number,
        translation.text(&tgt)
    );
    line(&mut out, lesson::wrap(&head, lesson::COLUMNS));
    let rows = source_labels(translation.number);
    let mut cols = target_labels(&translation, &tgt);
    cols.truncate(heads[0].len());
    for (h, weights) in heads.iter().enumerate() {
        let as_translation = chapter09::Translation {
            number: translation.number,
            ids: translation.ids.clone(),
            weights: weights.iter().map(|r| r[..rows.len()].to_vec()).collect(),
        };
        line(&mut out, format!("head {h}:"));
        line(&mut out, table(&by_word(&as_translation), &rows, &cols));
    }
    // ANCHOR_END: tour_heads
    out
}

/// Section 4: the character model: its data, its recorded run, and its samples.
pub fn lm_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_lm
    let corpus = Corpus::shipped();
    line(
        &mut out,
        lesson::wrap(crate::corpus::SOURCE, lesson::COLUMNS),
    );
    line(
        &mut out,
        format!(
            "{} characters, {} distinct; {} to train on, the last {} held out",
            crate::corpus::TEXT.len(),
            corpus.vocab.len(),
            corpus.train.len(),
            corpus.val.len()
        ),
    );
    let (model, record) = recorded_lm();
    let c = record.config;
    let m = c.model;
    line(
        &mut out,
        format!(
            "model: d = {}, {} heads, ffn {}, {} layers, context {}, {} parameters",
            m.num_hiddens,
            m.num_heads,
            m.ffn_num_hiddens,
            m.num_layers,
            m.block_size,
            model.num_parameters()
        ),
    );
    line(
        &mut out,
        format!(
            "run: {} steps of {} x {} characters, dropout {},",
            c.steps, c.batch_size, m.block_size, m.dropout
        ),
    );
    line(
        &mut out,
        format!(
            "  lr {} after {} warmup steps, falling to {}",
            c.lr, c.warmup, c.final_lr
        ),
    );
    line(&mut out, "step  validation loss (nats per character)");
    for &(step, val) in record.history.val.iter().filter(|(s, _)| s % 300 == 0) {
        line(&mut out, format!("{step:>4}  {val:.4}"));
    }
    line(
        &mut out,
        format!(
            "recorded run: {:.0} s on {}",
            record.seconds, record.machine
        ),
    );
    // ANCHOR_END: tour_lm
    // ANCHOR: tour_samples
    let prompt = corpus.vocab.encode("Alice ");
    for (temperature, top_k) in [(0.8, Some(10)), (1.0, None), (0.0, None)] {
        let sampling = Sampling {
            temperature,
            top_k,
            seed: 0,
        };
        let cached = generate(&model, &prompt, 240, &sampling, true);
        let uncached = generate(&model, &prompt, 240, &sampling, false);
        let k = top_k.map_or("all".to_string(), |k| k.to_string());
        let same = if cached == uncached {
            "the same"
        } else {
            "DIFFERENT"
        };
        line(
            &mut out,
            format!(
                "--- temperature {temperature}, top-k {k}; {same} without the cache:"
            ),
        );
        // The text as generated, its lines wrapped to the page's width.
        let text = format!("Alice {}", corpus.vocab.decode(&cached));
        for text_line in text.lines() {
            line(
                &mut out,
                lesson::wrap(text_line.trim_end(), lesson::COLUMNS),
            );
        }
    }
    line(&mut out, GenerationTimes::recorded().table());
    // ANCHOR_END: tour_samples
    out
}

/// Section 4, continued: the recorded model's validation loss beside the loss of
/// counting models, on the same characters.
pub fn baselines_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_baselines
    let corpus = Corpus::shipped();
    let (_, record) = recorded_lm();
    let c = record.config;
    let (_, model_loss) = *record.history.val.last().expect("a validation loss");
    // The characters the model's validation loss is the mean over: the targets of its
    // fixed validation batches, each with the character before it.
    let batches = eval_batches(
        &corpus.val,
        c.model.block_size,
        c.batch_size,
        c.eval_batches,
        1,
    );
    let in_batches = batch_pairs(&batches);
    // And the whole validation split: every character after the first.
    let in_split = pairs(&corpus.val);
    let targets =
        |p: &[(usize, usize)]| p.iter().map(|&(_, t)| t).collect::<Vec<_>>();
    let counts = CharCounts::new(&corpus.train, corpus.vocab.len(), 1.0);
    let uniform = (corpus.vocab.len() as f64).ln();
    line(
        &mut out,
        "loss on the validation text, nats per character; the counting models count \
         the",
    );
    line(
        &mut out,
        format!(
            "{} training characters, with add-one smoothing",
            corpus.train.len()
        ),
    );
    line(
        &mut out,
        format!(
            "{:<28} {:>19} {:>17}",
            "", "the model's batches", "the whole split"
        ),
    );
    let mut row = |name: &str, a: String, b: String| {
        line(&mut out, format!("{name:<28} {a:>19} {b:>17}"));
    };
    row(
        "characters scored",
        in_batches.len().to_string(),
        in_split.len().to_string(),
    );
    let four = |x: f64| format!("{x:.4}");
    row(
        &format!("uniform over {} characters", corpus.vocab.len()),
        four(uniform),
        four(uniform),
    );
    row(
        "unigram",
        four(counts.unigram_loss(&targets(&in_batches))),
        four(counts.unigram_loss(&targets(&in_split))),
    );
    row(
        "bigram",
        four(counts.bigram_loss(&in_batches)),
        four(counts.bigram_loss(&in_split)),
    );
    row(
        &format!("the model, step {}", c.steps),
        four(f64::from(model_loss)),
        "-".to_string(),
    );
    row(
        "pairs never seen in training",
        counts.unseen(&in_batches).to_string(),
        counts.unseen(&in_split).to_string(),
    );
    // ANCHOR_END: tour_baselines
    out
}

/// Section 5: a run stopped, saved and resumed gives the straight run's numbers.
pub fn resume_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_resume
    let corpus = Corpus::shipped();
    let config = LmTrainConfig {
        model: LmConfig {
            num_hiddens: 32,
            ffn_num_hiddens: 64,
            num_layers: 2,
            block_size: 32,
            ..LmTrainConfig::chapter(corpus.vocab.len()).model
        },
        steps: 20,
        batch_size: 8,
        eval_every: 10,
        eval_batches: 2,
        warmup: 5,
        ..LmTrainConfig::chapter(corpus.vocab.len())
    };
    let mut straight = LmTrainer::new(config, corpus.clone());
    straight.train_until(20, |_, _| {});
    let mut first = LmTrainer::new(config, corpus.clone());
    first.train_until(10, |_, _| {});
    let dir = std::env::temp_dir().join(format!("chapter16-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("lm.safetensors");
    save_lm_checkpoint(&first, &path).expect("a writable temporary directory");
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let mut resumed = resume_lm(&path, corpus).expect("the checkpoint just written");
    resumed.train_until(20, |_, _| {});
    let _ = std::fs::remove_dir_all(&dir);
    let same_losses = straight.history == resumed.history;
    let same_weights = straight
        .model
        .state_dict()
        .iter()
        .zip(resumed.model.state_dict().iter())
        .all(|((_, a), (_, b))| a.to_vec() == b.to_vec());
    line(
        &mut out,
        format!(
            "stopped at step 10, saved ({:.1} KiB), resumed to step 20:",
            bytes as f64 / 1024.0
        ),
    );
    line(
        &mut out,
        format!("  the same losses: {same_losses}, the same weights: {same_weights}"),
    );
    // ANCHOR_END: tour_resume
    out
}

/// Section 6: post-norm against pre-norm in an eight-layer model.
pub fn placement_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_placement
    let corpus = Corpus::shipped();
    let vocab = corpus.vocab.len();
    line(
        &mut out,
        "gradient norm of each layer at initialisation (one batch):",
    );
    let mut header = String::from("layer");
    let post = gradient_norms_at_init(&corpus, deep_model(vocab, false), 0);
    let pre = gradient_norms_at_init(&corpus, deep_model(vocab, true), 0);
    for i in 0..post.len() {
        let _ = write!(header, " {i:>6}");
    }
    line(&mut out, header);
    for (name, norms) in [("post", &post), ("pre", &pre)] {
        let mut row = format!("{name:<5}");
        for v in norms {
            let _ = write!(row, " {v:>6.3}");
        }
        line(&mut out, row);
    }
    let record = PlacementRecord::recorded();
    line(&mut out, record.summary());
    // ANCHOR_END: tour_placement
    out
}

/// Section 7: the training recipe of "Attention Is All You Need" on a small model.
pub fn recipe_section() -> String {
    let mut out = String::new();
    // ANCHOR: tour_recipe
    let corpus = Corpus::shipped();
    let c = run_config(corpus.vocab.len(), 0);
    let m = c.model;
    line(
        &mut out,
        format!(
            "model: d = {}, {} heads, ffn {}, {} layers, context {}, dropout {}",
            m.num_hiddens,
            m.num_heads,
            m.ffn_num_hiddens,
            m.num_layers,
            m.block_size,
            m.dropout
        ),
    );
    line(
        &mut out,
        format!(
            "run: {} steps of {} x {} characters; validation: {} fixed batches",
            c.steps, c.batch_size, m.block_size, c.eval_batches
        ),
    );
    let last = RECIPE_STEPS - 1;
    line(
        &mut out,
        format!(
            "chapter's schedule: lr {} after {} warmup steps, cosine to {}",
            c.lr, c.warmup, c.final_lr
        ),
    );
    line(
        &mut out,
        format!(
            "inverse-sqrt (steps counted from 0): lr {:.4} at step {}, {:.4} at step {}",
            inverse_sqrt_lr(m.num_hiddens, c.warmup, c.warmup - 1),
            c.warmup - 1,
            inverse_sqrt_lr(m.num_hiddens, c.warmup, last),
            last
        ),
    );
    let (logits, targets) = LABEL_SMOOTHING_EXAMPLE;
    line(
        &mut out,
        format!(
            "label smoothing {EPSILON} on {logits:?}, targets {targets:?}: {:.4}",
            label_smoothing_example()
        ),
    );
    line(&mut out, RecipeRecord::recorded().table());
    // ANCHOR_END: tour_recipe
    out
}

/// Everything the page prints, in order.
pub fn tour() -> String {
    [
        ("== 1. The layers", layers_section()),
        ("== 2. Chapter 9's task", translation_section()),
        ("== 3. Where each head looks", heads_section()),
        (
            "== 4. A character model",
            format!("{}{}", lm_section(), baselines_section()),
        ),
        ("== 5. Stopped and resumed", resume_section()),
        ("== 6. Post-norm against pre-norm", placement_section()),
        ("== 7. The paper's recipe", recipe_section()),
    ]
    .iter()
    .map(|(title, body)| format!("{title}\n{body}"))
    .collect::<Vec<_>>()
    .join("\n")
}
