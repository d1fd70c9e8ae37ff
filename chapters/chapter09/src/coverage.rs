//! Attention on the frequent source tokens, measured against the words that name the
//! digits, and a coverage penalty added to the loss (See et al., 2017, "Get To The
//! Point", §2.3).

use std::collections::HashMap;

use attention::prelude::*;

use crate::cache::attend_projected;
use crate::data::{Batch, EOS, Vocab, source_tokens};
use crate::decode::Translation;
use crate::model::Seq2Seq;
use crate::train::{StepReport, Trainer, masked_cross_entropy};

/// The weight `λ` of the coverage loss in the chapter's coverage run: the value See et
/// al. report training their coverage model with (2017, §5). They add coverage to a
/// model already trained without it; the chapter's run has it from the first step.
pub const COVERAGE_WEIGHT: f32 = 1.0;

use crate::data::{ONES, TENS};

/// Appends the tokens of `g` (below 1000, as [`number_to_words`](crate::number_to_words)
/// spells it) to `tokens`, and returns the token that names its hundreds, tens and
/// units digit (`None` for a zero, which no word names).
fn group(g: u32, tokens: &mut Vec<&'static str>) -> [Option<usize>; 3] {
    let mut places = [None; 3];
    let (hundreds, rest) = (g / 100, g % 100);
    if hundreds > 0 {
        places[0] = Some(tokens.len());
        tokens.extend([ONES[hundreds as usize], "hundred"]);
        if rest > 0 {
            tokens.push("and");
        }
    }
    below_hundred(rest, hundreds == 0, tokens, &mut places);
    places
}

/// The tokens of `r` below 100 (none for 0 unless `say_zero`), and the tokens that
/// name its tens and units digits (`places[1]` and `places[2]`).
fn below_hundred(
    r: u32,
    say_zero: bool,
    tokens: &mut Vec<&'static str>,
    places: &mut [Option<usize>; 3],
) {
    let at = tokens.len();
    match r {
        0 if say_zero => tokens.push(ONES[0]),
        0 => {}
        1..10 => {
            places[2] = Some(at);
            tokens.push(ONES[r as usize]);
        }
        // A teen names both its digits: `eleven` is 1 and 1.
        10..20 => {
            places[1] = Some(at);
            places[2] = (r != 10).then_some(at);
            tokens.push(ONES[r as usize]);
        }
        _ => {
            places[1] = Some(at);
            tokens.push(TENS[(r / 10) as usize]);
            if !r.is_multiple_of(10) {
                places[2] = Some(at + 1);
                tokens.push(ONES[(r % 10) as usize]);
            }
        }
    }
}

// ANCHOR: naming
/// For each digit of `n`, the source token that names it: `forty` names the 4 of 342,
/// `eleven` both 1s of 11; `None` for a zero digit, which no word says. A model that
/// read each nonzero digit from its word alone would put all its weight there.
pub fn naming_words(n: u32) -> Vec<Option<usize>> {
    let mut tokens = Vec::new();
    let (thousands, rest) = (n / 1000, n % 1000);
    let mut places = [None; 6]; // by the power of ten
    if thousands > 0 {
        let [h, t, u] = group(thousands, &mut tokens);
        (places[5], places[4], places[3]) = (h, t, u);
        tokens.push("thousand");
        if rest > 0 && rest < 100 {
            tokens.push("and");
            let mut p = [None; 3];
            below_hundred(rest, false, &mut tokens, &mut p);
            places[1] = p[1];
            places[0] = p[2];
        } else if rest > 0 {
            let [h, t, u] = group(rest, &mut tokens);
            (places[2], places[1], places[0]) = (h, t, u);
        }
    } else {
        let [h, t, u] = group(rest, &mut tokens);
        (places[2], places[1], places[0]) = (h, t, u);
    }
    debug_assert_eq!(tokens, source_tokens(n));
    let digits = n.to_string().len();
    (0..digits).rev().map(|power| places[power]).collect()
}
// ANCHOR_END: naming

/// The source tokens of `numbers` (with `<eos>`), the most frequent first (ties in
/// alphabetical order), with their counts.
pub fn token_counts(numbers: &[u32]) -> Vec<(String, usize)> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for &n in numbers {
        for t in source_tokens(n).into_iter().chain([EOS.to_string()]) {
            *counts.entry(t).or_default() += 1;
        }
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

// ANCHOR: shares
/// Where the decoding steps of exactly right translations put their attention.
/// Steps that write a nonzero digit have a word that names it ([`naming_words`]);
/// the others write a zero or `<eos>`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shares {
    /// Steps that write a nonzero digit.
    pub named_steps: usize,
    /// Their mean weight on the word that names the digit.
    pub on_word: f32,
    /// Their mean weight on the token right after it (the shifted diagonal).
    pub on_next: f32,
    /// Their mean weight on the frequent tokens, wherever they are.
    pub on_frequent: f32,
    /// Their mean weight on frequent tokens that are neither the word nor the token
    /// right after it.
    pub frequent_elsewhere: f32,
    /// The mean share of source positions that hold a frequent token, over the same
    /// steps: what uniform attention would put there.
    pub uniform: f32,
    /// The steps that write a zero or `<eos>`.
    pub other_steps: usize,
    /// Their mean weight on the frequent tokens.
    pub other_on_frequent: f32,
    /// The mean coverage loss of a step, `Σᵢ min(aᵢᵗ, cᵢᵗ)`, over all steps.
    pub coverage: f32,
    /// The translations that were exactly right (the others are left out).
    pub exact: usize,
}

impl Shares {
    /// Measures `translations` against `frequent` tokens.
    pub fn measure(
        translations: &[Translation],
        frequent: &[&str],
        tgt_vocab: &Vocab,
    ) -> Shares {
        let mut s = Shares::default();
        let (mut all_steps, mut coverage) = (0usize, 0.0f64);
        let mut sums = [0.0f64; 6];
        for t in translations.iter().filter(|t| t.is_exact(tgt_vocab)) {
            s.exact += 1;
            let mut tokens = source_tokens(t.number);
            tokens.push(EOS.to_string());
            let is_frequent: Vec<bool> = tokens
                .iter()
                .map(|w| frequent.contains(&w.as_str()))
                .collect();
            let names = naming_words(t.number);
            let mut cover = vec![0.0f32; tokens.len()];
            for (step, row) in t.weights.iter().enumerate() {
                coverage += row
                    .iter()
                    .zip(&cover)
                    .map(|(&a, &c)| f64::from(a.min(c)))
                    .sum::<f64>();
                cover.iter_mut().zip(row).for_each(|(c, a)| *c += a);
                all_steps += 1;
                let on = |keep: &dyn Fn(usize) -> bool| -> f64 {
                    (0..row.len())
                        .filter(|&i| keep(i))
                        .map(|i| f64::from(row[i]))
                        .sum()
                };
                match names.get(step).copied().flatten() {
                    Some(w) => {
                        s.named_steps += 1;
                        sums[0] += f64::from(row[w]);
                        sums[1] += f64::from(row[w + 1]);
                        sums[2] += on(&|i| is_frequent[i]);
                        sums[3] += on(&|i| is_frequent[i] && i != w && i != w + 1);
                        let f = is_frequent.iter().filter(|&&f| f).count();
                        sums[4] += f as f64 / row.len() as f64;
                    }
                    None => {
                        s.other_steps += 1;
                        sums[5] += on(&|i| is_frequent[i]);
                    }
                }
            }
        }
        let mean = |x: f64, n: usize| (x / n.max(1) as f64) as f32;
        s.on_word = mean(sums[0], s.named_steps);
        s.on_next = mean(sums[1], s.named_steps);
        s.on_frequent = mean(sums[2], s.named_steps);
        s.frequent_elsewhere = mean(sums[3], s.named_steps);
        s.uniform = mean(sums[4], s.named_steps);
        s.other_on_frequent = mean(sums[5], s.other_steps);
        s.coverage = mean(coverage, all_steps);
        s
    }
}
// ANCHOR_END: shares

// ANCHOR: coverage_loss
/// Teacher forcing, as [`Seq2Seq::forward`], that also returns each step's attention
/// weights `[B, S]` in the graph. The keys are projected at every step, as the module
/// does, so that the logits are the same bits as `Seq2Seq::forward`'s.
pub fn forward_with_weights(
    model: &Seq2Seq<AdditiveAttention>,
    batch: &Batch,
) -> (Tensor, Vec<Tensor>) {
    let (enc_outputs, mut state) = model.encoder.forward(&batch.src, &batch.src_lens);
    let mask = Mask::valid_lens(&batch.src_lens);
    let decoder = &model.decoder;
    let [_, w_k, _] = {
        let p = decoder.attention().list_parameters();
        let find =
            |n: &str| p.iter().find(|(k, _)| k == n).expect("a weight").1.clone();
        [find("W_q.weight"), find("W_k.weight"), find("w_v.weight")]
    };
    let (mut states, mut weights) = (Vec::new(), Vec::new());
    for t in 0..batch.dec_input.size(1) {
        let ids = batch.dec_input.narrow(1, t, 1).squeeze(1); // [B]
        let keys = enc_outputs.matmul_t(&w_k); // W_k k, as AdditiveAttention
        let (context, a) =
            attend_projected(decoder.attention(), &state, &keys, &enc_outputs, &mask);
        let embedded = decoder.embedding().forward(&ids);
        let input = Tensor::concat(&[&context, &embedded], -1);
        state = decoder.rnn().forward(&input, &state);
        states.push(state.clone());
        weights.push(a);
    }
    (decoder.dense().forward(&Tensor::stack(&states, 1)), weights)
}

/// See et al.'s coverage loss (2017, §2.3), masked like the cross-entropy: the
/// coverage `cᵗ = Σ_{t' < t} aᵗ'` sums the attention of the earlier steps, and step
/// `t` pays `Σᵢ min(aᵢᵗ, cᵢᵗ)`, the weight it puts again where the earlier steps
/// already looked. The mean over the real target tokens of the batch.
pub fn coverage_loss(weights: &[Tensor], tgt_lens: &Tensor) -> Tensor {
    let mut cover = weights[0].zeros_like(); // [B, S]
    let mut per_step = Vec::with_capacity(weights.len());
    for a in weights {
        per_step.push(a.minimum(&cover).sum_dim(1)); // [B]
        cover = &cover + a;
    }
    let per_token = Tensor::stack(&per_step, 1); // [B, T]
    let (b, t) = (per_token.size(0), per_token.size(1));
    let keep = Mask::valid_lens(tgt_lens)
        .keep_for("coverage_loss", &[b, 1, t])
        .expect("a valid-lengths mask")
        .reshape([b, t]);
    let count = keep.sum().item().max(1.0);
    (per_token * &keep).sum() / count
}

/// One training step of `trainer` with `λ ×` the coverage loss added to the masked
/// cross-entropy; with `λ = 0` the same step as [`Trainer::train_step`], bit for bit.
/// The report's loss is the cross-entropy alone, comparable with an unpenalised run.
pub fn train_step_with_coverage(
    trainer: &mut Trainer<AdditiveAttention>,
    lambda: f32,
) -> StepReport {
    let step = trainer.step;
    let numbers = trainer.batch_numbers(step);
    let batch = Batch::new(&numbers, &trainer.src_vocab, &trainer.tgt_vocab);
    let (logits, weights) = forward_with_weights(&trainer.model, &batch);
    let cross_entropy = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
    let loss = if lambda == 0.0 {
        cross_entropy.clone()
    } else {
        &cross_entropy + &(coverage_loss(&weights, &batch.tgt_lens) * lambda)
    };
    trainer.optimizer.zero_grad();
    loss.backward();
    let grad_norm = engine::optim::clip_grad_norm(
        trainer.optimizer.parameters(),
        trainer.config.clip,
    );
    let lr = trainer.config.lr_at(step);
    trainer.optimizer.set_lr(lr);
    trainer.optimizer.step();
    let loss = cross_entropy.item();
    trainer.history.losses.push(loss);
    trainer.step += 1;
    StepReport {
        step,
        loss,
        grad_norm,
        lr,
    }
}
// ANCHOR_END: coverage_loss

// ANCHOR: tables
/// The frequency table of the training sources and the attention shares of two
/// models on the held-out set, side by side: what the page quotes.
pub fn tables(
    runs: &[(&str, &Seq2Seq<AdditiveAttention>)],
    train: &[u32],
    held_out: &[u32],
) -> String {
    let (src_vocab, tgt_vocab) = (Vocab::source(), Vocab::target());
    let counts = token_counts(train);
    let total: usize = counts.iter().map(|(_, c)| c).sum();
    let frequent: Vec<&str> = counts[..4].iter().map(|(t, _)| t.as_str()).collect();
    let mut out = format!(
        "source tokens of the {} training numbers: {total}; the 4 most frequent:\n ",
        train.len()
    );
    for (t, c) in &counts[..4] {
        out.push_str(&format!(" {t} {:.1}%", 100.0 * *c as f64 / total as f64));
    }
    out.push('\n');
    let measured: Vec<(f32, Shares, usize)> = runs
        .iter()
        .map(|(_, model)| {
            let (accuracy, translations) =
                crate::exact_match(model, held_out, &src_vocab, &tgt_vocab, 500);
            let monotonic = translations.iter().filter(|t| t.is_monotonic()).count();
            (
                accuracy,
                Shares::measure(&translations, &frequent, &tgt_vocab),
                monotonic,
            )
        })
        .collect();
    out.push_str(&format!("{:<50}", "held-out decodings"));
    for (name, _) in runs {
        out.push_str(&format!(" {name:>10}"));
    }
    out.push('\n');
    let mut row = |what: &str, cell: &dyn Fn(&(f32, Shares, usize)) -> String| {
        out.push_str(&format!("{what:<50}"));
        for m in &measured {
            out.push_str(&format!(" {:>10}", cell(m)));
        }
        out.push('\n');
    };
    row("exact match", &|m| format!("{:.3}", m.0));
    row("steps writing a nonzero digit (exact decodings)", &|m| {
        m.1.named_steps.to_string()
    });
    row("  weight on the word that names the digit", &|m| {
        format!("{:.3}", m.1.on_word)
    });
    row("  weight on the token right after it", &|m| {
        format!("{:.3}", m.1.on_next)
    });
    row("  weight on the 4 frequent tokens", &|m| {
        format!("{:.3}", m.1.on_frequent)
    });
    row("    on neither the word nor the token after it", &|m| {
        format!("{:.3}", m.1.frequent_elsewhere)
    });
    row("  their share of the source positions", &|m| {
        format!("{:.3}", m.1.uniform)
    });
    row("steps writing a 0 or <eos>", &|m| {
        m.1.other_steps.to_string()
    });
    row("  weight on the 4 frequent tokens", &|m| {
        format!("{:.3}", m.1.other_on_frequent)
    });
    row("coverage loss per step, Σ min(a, c)", &|m| {
        format!("{:.4}", m.1.coverage)
    });
    row("alignments that never move back", &|m| m.2.to_string());
    out
}
// ANCHOR_END: tables
