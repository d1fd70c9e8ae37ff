//! Everything the page prints from the tour, section by section: `cargo run -p
//! chapter12`. Sections 2 and 3 read the recorded comparison (`data/compare.tsv`);
//! sections 1 and 4 compute what they print.

use std::fmt::Write;

use attention::prelude::*;
use chapter09::exercises::ScaledDotProduct;
use chapter09::{Batch, DecoderAttention, Vocab};
use lesson::{COLUMNS, panic_message, wrap};

use crate::compare::{SEEDS, STEPS, branch_scores, train_config};
use crate::complexity::{SWEEP_KEYS, Variant, multiply_adds};
use crate::record::Record;
use crate::scorings::{Scoring, gate_value};

/// The weights of a row as numbers with two decimals.
fn row(values: &[f32]) -> String {
    values
        .iter()
        .map(|w| format!("{w:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Section 1: the five scorings in chapter 9's decoder, and queries and keys of
/// different sizes.
pub fn scorings_section() -> String {
    let mut out = String::from("== 1. five scorings in chapter 9's decoder\n");
    // ANCHOR: tour_scorings
    let config = train_config(SEEDS[0]).model();
    let batch = Batch::new(&[342, 12, 40_005], &Vocab::source(), &Vocab::target());
    let mask = Mask::valid_lens(&batch.src_lens);
    let models = Scoring::ALL.map(|s| s.model(config, SEEDS[0]));
    let (enc_outputs, state) = models[0].encoder.forward(&batch.src, &batch.src_lens);
    // ANCHOR_END: tour_scorings
    writeln!(
        out,
        "the batch of 342, 12 and 40005: state {:?}, enc_outputs {:?}",
        state.shape(),
        enc_outputs.shape()
    )
    .unwrap();
    writeln!(
        out,
        "{:<19} {:<8} {:<7} {:>9} {:>6}  initial weights of 342",
        "scoring", "context", "weights", "attention", "model"
    )
    .unwrap();
    for (scoring, model) in Scoring::ALL.iter().zip(&models) {
        let attention = model.decoder.attention();
        let (context, weights) = attention.attend(&state, &enc_outputs, &mask);
        writeln!(
            out,
            "{:<19} {:<8} {:<7} {:>9} {:>6}  {}",
            scoring.name(),
            format!("{:?}", context.shape()),
            format!("{:?}", weights.shape()),
            attention.num_parameters(),
            model.num_parameters(),
            row(&weights.narrow(0, 0, 1).to_vec())
        )
        .unwrap();
    }
    // ANCHOR: tour_same_rest
    // Every parameter but the attention's, by name and value.
    let rest = |m: &chapter09::Seq2Seq<crate::Scorer>| {
        m.named_parameters()
            .into_iter()
            .filter(|(name, _)| !name.starts_with("decoder.attention."))
            .map(|(name, t)| (name, t.to_vec()))
            .collect::<Vec<_>>()
    };
    let same = models.iter().all(|m| rest(m) == rest(&models[0]));
    // ANCHOR_END: tour_same_rest
    writeln!(
        out,
        "the rest of the model: {} parameters, the same values in all five: {same}",
        models[0].num_parameters() - models[0].decoder.attention().num_parameters()
    )
    .unwrap();

    // ANCHOR: tour_sizes
    engine::manual_seed(4);
    let state_48 = Tensor::randn([3, 48]); // a state of 48 features, outputs of 64
    writeln!(out, "a state of 48 features against outputs of 64:").unwrap();
    for scoring in Scoring::ALL {
        let attention = scoring.attention(48, 64, 64);
        let (context, _) = attention.attend(&state_48, &enc_outputs, &mask);
        writeln!(
            out,
            "  {:<19} context {:?}, {} parameters",
            scoring.name(),
            context.shape(),
            attention.num_parameters()
        )
        .unwrap();
    }
    let refused = panic_message(|| {
        ScaledDotProduct.attend(&state_48, &enc_outputs, &mask);
    });
    // ANCHOR_END: tour_sizes
    writeln!(out, "  chapter 9's dot product without projections:").unwrap();
    for line in wrap(&refused, COLUMNS - 4).lines() {
        writeln!(out, "    {line}").unwrap();
    }
    out
}

/// Section 2: each claim of the articles beside what the recorded run measured.
pub fn claims_section() -> String {
    let r = Record::recorded();
    let mut out = String::from(
        "== 2. the articles' claims beside this run (data/compare.tsv)\n",
    );
    // ANCHOR: tour_claims
    use Scoring::{Additive, DotProduct, Hybrid, ScaledDotProduct as Scaled};
    let acc = |s| r.accuracy_at(s, STEPS).0 as f64;
    let early = |s| r.accuracy_at(s, 100).0 as f64;
    let (tokens, steps) = (|s| r.tokens_per_second(s), |s| r.steps_per_second(s));
    let kib = |s| r.peak(s) as f64 / 1024.0;
    let best_single = [Additive, DotProduct, Scaled, Scoring::MultiHead]
        .into_iter()
        .max_by(|&a, &b| acc(a).total_cmp(&acc(b)))
        .expect("four scorings");
    // ANCHOR_END: tour_claims
    let lines = [
        "an article, sentiment: additive 2% more accurate than dot product"
            .to_string(),
        format!(
            "  here, after {STEPS} steps: {:+.1} points ({:.3} against {:.3}); after \
             100: {:+.1} ({:.3} against {:.3})",
            100.0 * (acc(Additive) - acc(DotProduct)),
            acc(Additive),
            acc(DotProduct),
            100.0 * (early(Additive) - early(DotProduct)),
            early(Additive),
            early(DotProduct)
        ),
        "an article: additive 40% slower at inference".into(),
        format!(
            "  here, greedy decoding: {:.0} against {:.0} tokens/s, one run each",
            tokens(Additive),
            tokens(DotProduct),
        ),
        // One timing per scoring has no range, so it ranks neither (section 2's
        // separating runs time each scoring six times).
        "    (one machine): no range, so neither is called faster".into(),
        "an article, captioning: additive against scaled dot product,".into(),
        "  training 12.3 against 18.7 iter/s (0.66×)".into(),
        format!(
            "  here: {:.1} against {:.1} steps/s ({:.2}×, one machine)",
            steps(Additive),
            steps(Scaled),
            steps(Additive) / steps(Scaled)
        ),
        "  BLEU 32.1 against 33.5".into(),
        format!(
            "  here, held-out exact match: {:.3} against {:.3}",
            acc(Additive),
            acc(Scaled)
        ),
        "  memory 1245 against 876 MB (1.42×)".into(),
        format!(
            "  here, peak of a training step: {:.1} against {:.1} KiB ({:.2}×)",
            kib(Additive),
            kib(Scaled),
            kib(Additive) / kib(Scaled)
        ),
        "the hybrid: 3.2% better on a multimodal task".into(),
        format!(
            "  here: {:+.1} points against the best of the four ({}, {:.3} against \
             {:.3})",
            100.0 * (acc(Hybrid) - acc(best_single)),
            best_single.name(),
            acc(Hybrid),
            acc(best_single)
        ),
    ];
    for line in lines {
        writeln!(out, "{}", wrap(&line, COLUMNS)).unwrap();
    }
    let ch09 = |name: &str| {
        let history = chapter09::recorded(name).info.history;
        let &(_, a) = history
            .held_out
            .iter()
            .find(|(s, _)| *s == STEPS)
            .expect("chapter 9 scored every 100 steps");
        a
    };
    writeln!(
        out,
        "chapter 9's run, a 1000-step schedule, after {STEPS} steps: additive {:.3}, \
         scaled dot\n  product without projections {:.3}",
        ch09("additive"),
        ch09("dot-product")
    )
    .unwrap();
    out
}

/// The least-squares slope of `ln y` against `ln x`: the power `p` of `y ∝ xᵖ`.
fn log_slope(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y)| (libm::log(x), libm::log(y)))
        .collect();
    let n = logs.len() as f64;
    let (mx, my) = logs
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = logs.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    sxy / sxx
}

/// The smallest `d` of the fits of section 3: below it, the fixed cost of a call
/// hides how the work grows.
pub const FIT_FROM: usize = 128;

/// Section 3: the complexity row, counted and as the recorded times grew.
pub fn complexity_section() -> String {
    let r = Record::recorded();
    let mut out = String::from("== 3. the complexity row (data/compare.tsv)\n");
    let n = SWEEP_KEYS as u64;
    let rows: Vec<_> = r.sweep.iter().filter(|s| s.d >= FIT_FROM).collect();
    writeln!(
        out,
        "one query against {n} keys, growth as d^p fitted over d = {FIT_FROM} to {}:",
        rows[rows.len() - 1].d
    )
    .unwrap();
    writeln!(
        out,
        "{:<32} {:>16} {:>20}",
        "p of", "multiply-adds", "time (one machine)"
    )
    .unwrap();
    for (v, variant) in Variant::ALL.iter().enumerate() {
        let counts: Vec<(f64, f64)> = rows
            .iter()
            .map(|s| {
                (
                    s.d as f64,
                    multiply_adds(n, s.d as u64, variant.projects()) as f64,
                )
            })
            .collect();
        let times: Vec<(f64, f64)> =
            rows.iter().map(|s| (s.d as f64, s.seconds[v])).collect();
        writeln!(
            out,
            "{:<32} {:>16.2} {:>20.2}",
            variant.name(),
            log_slope(&counts),
            log_slope(&times)
        )
        .unwrap();
    }
    let ratios: Vec<String> = r
        .sweep
        .iter()
        .map(|s| format!("{:.1}", s.seconds[1] / s.seconds[3]))
        .collect();
    writeln!(
        out,
        "additive scores only / scaled dot only, d = {} to {}: {}",
        r.sweep[0].d,
        r.sweep[r.sweep.len() - 1].d,
        ratios.join(" ")
    )
    .unwrap();
    out
}

/// Section 4: the hybrid's limiting cases and its gates, on a state of 48 features
/// against outputs of 64.
pub fn hybrid_section() -> String {
    let mut out = String::from("== 4. the hybrid: two scores, one gate\n");
    // ANCHOR: tour_hybrid
    engine::manual_seed(11);
    let (state, outputs) = (Tensor::randn([3, 48]), Tensor::randn([3, 5, 64]));
    let lens = Tensor::from_vec(vec![5.0, 2.0, 4.0], [3]);
    let mask = Mask::valid_lens(&lens);
    let hybrid = |gate| {
        HybridGatedAttention::new(HybridGatedAttentionConfig {
            query_size: 48,
            key_size: 64,
            additive_hiddens: 16,
            dot_hiddens: 64,
            gate,
            ..Default::default()
        })
    };
    // The module's weights against the softmax of its two scores mixed by hand.
    let gap = |gate| {
        let module = hybrid(gate);
        module.forward(&state.unsqueeze(1), &outputs, &outputs, &mask);
        let weights = module.last_attention_weights().expect("just set");
        let g = gate_value(&module).expect("one gate for the module");
        let (additive, dot) = branch_scores(&module, &state, &outputs);
        let mixed = &additive * g + &dot * (1.0 - g);
        let by_hand = masked_softmax(&mixed, &mask, Fill::Safe);
        (g, (&weights - &by_hand).abs().max().item())
    };
    // ANCHOR_END: tour_hybrid
    writeln!(
        out,
        "largest |module's weights − softmax(g · additive + (1 − g) · dot)| by gate:"
    )
    .unwrap();
    for gate in [Gate::Fixed(1.0), Gate::Fixed(0.0), Gate::Scalar] {
        let (g, gap) = gap(gate);
        writeln!(out, "  {:<11} g = {g:.3}  {gap:.1e}", format!("{gate:?}")).unwrap();
    }
    let per_query = hybrid(Gate::PerQuery);
    per_query.forward(&state.unsqueeze(1), &outputs, &outputs, &mask);
    let gates = per_query.last_gate().expect("just set");
    writeln!(
        out,
        "  {:<11} g {:?} = {}, one per state",
        "PerQuery",
        gates.shape(),
        row(&gates.to_vec())
    )
    .unwrap();
    let parameters: Vec<String> = hybrid(Gate::Scalar)
        .list_parameters()
        .iter()
        .map(|(name, t)| format!("{name} {}", t.numel()))
        .collect();
    writeln!(
        out,
        "{}",
        wrap(&format!("parameters: {}", parameters.join(", ")), COLUMNS)
    )
    .unwrap();
    out
}

/// Everything the page prints from the tour.
pub fn tour() -> String {
    [
        scorings_section(),
        claims_section(),
        complexity_section(),
        hybrid_section(),
    ]
    .join("\n")
}
