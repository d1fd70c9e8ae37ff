//! Agreement with PyTorch: every attention module against the reference implementations
//! in `tests/golden/attention.py` (d2l's code, the first article's additive attention,
//! `torch.nn.MultiheadAttention`, `F.scaled_dot_product_attention`), on outputs, attention
//! weights and the gradients of every input and parameter; and the state dicts of the
//! article's module and of `nn.MultiheadAttention`, loaded by PyTorch's own names.
//!
//! Tolerance: `|engine − PyTorch| ≤ 1e-5 + 1e-4 · |PyTorch|` everywhere (the references are
//! float64; the engine computes in f32 from the same f32-exact inputs).

use crate::common;

use std::collections::BTreeSet;

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, AdditiveScoring, AttentionPath,
    AttentionWeights, BahdanauAttention, BahdanauAttentionConfig,
    CausalSelfAttention, CausalSelfAttentionConfig, DotProductAttention,
    DotProductAttentionConfig, Fill, KvCache, Mask, MultiHeadAdditiveAttention,
    MultiHeadAdditiveAttentionConfig, MultiHeadAttention, MultiHeadAttentionConfig,
    masked_softmax, scaled_dot_product_attention,
};
use common::{
    Report, differentiable, family, field, fill_of, golden, inputs, keys, loss,
    mask_of, name, state, state_dict, stored, tensor,
};
use engine::nn::Module;
use engine::{Activation, Tensor, no_grad};
use serde_json::Value;

/// Every case family the golden file may hold, each read by one test below.
const FAMILIES: [&str; 10] = [
    "masked_softmax",
    "additive_attention",
    "bahdanau_attention",
    "scaled_dot_product_attention",
    "multi_head_attention",
    "torch_multihead_attention",
    "multi_head_additive_attention",
    "causal_self_attention",
    "article_additive_attention",
    "torch_multihead_attention_state_dict",
];

#[track_caller]
fn usize_config(case: &Value, key: &str) -> usize {
    case["config"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("case {:?} has no config.{key}", name(case)))
        as usize
}

/// Dimension `dim` of the stored parameter `param` (the sizes a config needs).
#[track_caller]
fn param_size(case: &Value, param: &str, dim: usize) -> usize {
    stored(&case["params"][param]).shape[dim]
}

/// The shape of a stored input.
#[track_caller]
fn input_shape(case: &Value, input: &str) -> Vec<usize> {
    stored(&case["inputs"][input]).shape
}

/// The scores a one-query module sees, `[B, 1, K]`, for a case with `query` and `keys`.
#[track_caller]
fn one_query_scores(case: &Value) -> Vec<usize> {
    vec![
        input_shape(case, "query")[0],
        1,
        input_shape(case, "keys")[1],
    ]
}

/// The scores `[..., Q, K]` of a case with `queries` and `keys`.
#[track_caller]
fn scores_of(case: &Value) -> Vec<usize> {
    let mut shape = input_shape(case, "queries");
    let keys = input_shape(case, "keys");
    let rank = shape.len();
    shape[rank - 1] = keys[keys.len() - 2];
    shape
}

#[test]
fn golden_file_holds_only_case_families_these_tests_read() {
    let file = golden().as_object().expect("the golden file is an object");
    let present: BTreeSet<&str> = file
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "meta")
        .collect();
    let known: BTreeSet<&str> = FAMILIES.into_iter().collect();
    assert_eq!(
        present, known,
        "attention.json and this file must list the same case families"
    );
    let mut total = 0;
    for f in FAMILIES {
        let cases = family(f);
        let names: BTreeSet<&str> = cases.iter().map(name).collect();
        assert_eq!(names.len(), cases.len(), "{f}: case names must be unique");
        total += cases.len();
    }
    assert_eq!(
        golden()["meta"]["cases"].as_u64(),
        Some(total as u64),
        "meta.cases counts every case"
    );
}

// ---------------------------------------------------------------------------------------
// masked_softmax
// ---------------------------------------------------------------------------------------

/// Which of the mask kinds the issue lists a case exercises.
fn mask_kind(case: &Value) -> String {
    let m = &case["mask"];
    match m["kind"].as_str().expect("mask kind") {
        "valid_lens" => {
            format!("valid lengths of rank {}", stored(&m["lens"]).shape.len())
        }
        "keep" => {
            let shape = stored(&m["keep"]).shape;
            if shape[shape.len() - 2] == 1 {
                "keep mask broadcast over queries".into()
            } else {
                "keep mask per query".into()
            }
        }
        "causal" if m["offset"].as_u64() > Some(0) => "causal with offset".into(),
        other => other.into(),
    }
}

#[test]
fn masked_softmax_matches_reference_for_every_mask_kind_and_fill() {
    let mut report = Report::default();
    let mut grid = BTreeSet::new();
    let (mut empty_length, mut clamped_length) = (false, false);
    for case in family("masked_softmax") {
        let label = name(case);
        let shape = input_shape(case, "scores");
        let mask = mask_of(case, &shape);
        let fill = fill_of(case).unwrap_or_default();
        grid.insert((mask_kind(case), format!("{fill:?}")));
        if case["mask"]["kind"] == "valid_lens" {
            let lens = tensor(&case["mask"]["lens"]).to_vec();
            let k = shape[2] as f32;
            empty_length |= lens.contains(&0.0);
            clamped_length |= lens.iter().any(|&l| l > k);
        }
        let scores = field(case, "inputs", "scores").requires_grad_();
        let weights = masked_softmax(&scores, &mask, fill);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        weights.backward_with(&field(case, "upstream", "weights"));
        report.check_grads(case, "grads", &[("scores".into(), scores)]);
        // Where the script's offset is K − Q, the queries are the last tokens: the default
        // causal mask, aligned to the last key, must give the same weights.
        let offset = case["mask"]["offset"].as_u64();
        let (q, k) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        if case["mask"]["kind"] == "causal" && offset == Some((k - q) as u64) {
            let scores = field(case, "inputs", "scores");
            let aligned = masked_softmax(&scores, &Mask::causal(), fill);
            report.check(
                &format!("{label}: weights with Mask::causal()"),
                &aligned,
                &case["weights"],
            );
        }
    }
    report.finish(2 * 21);
    let kinds: BTreeSet<&String> = grid.iter().map(|(k, _)| k).collect();
    let fills: BTreeSet<&String> = grid.iter().map(|(_, f)| f).collect();
    assert_eq!(kinds.len(), 7, "mask kinds covered: {kinds:?}");
    let all_fills =
        [Fill::D2l, Fill::Constant(-1e9), Fill::Safe].map(|f| format!("{f:?}"));
    assert_eq!(fills, all_fills.iter().collect(), "fill policies covered");
    assert_eq!(grid.len(), 7 * 3, "every mask kind under every fill");
    assert!(
        empty_length && clamped_length,
        "the cases include a valid length of 0 and one larger than K"
    );
}

// ---------------------------------------------------------------------------------------
// Additive attention
// ---------------------------------------------------------------------------------------

#[test]
fn additive_attention_matches_d2l() {
    let mut report = Report::default();
    let mut lens_ranks = BTreeSet::new();
    for (case, scoring) in with_both_scorings(family("additive_attention")) {
        let label = format!("{} ({scoring:?})", name(case));
        let config = AdditiveAttentionConfig {
            query_size: param_size(case, "W_q.weight", 1),
            key_size: param_size(case, "W_k.weight", 1),
            num_hiddens: param_size(case, "W_q.weight", 0),
            dropout: 0.0,
            fill: fill_of(case).unwrap_or_default(),
            scoring,
            activation: Activation::Tanh,
        };
        let module = AdditiveAttention::from_state_dict(config, &state(case))
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let mask = mask_of(case, &scores_of(case));
        if case["mask"]["kind"] == "valid_lens" {
            lens_ranks.insert(stored(&case["mask"]["lens"]).shape.len());
        }
        let x = inputs(case);
        let output = module.forward(&x["queries"], &x["keys"], &x["values"], &mask);
        report.check(&format!("{label}: output"), &output, &case["output"]);
        let weights = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        report.check_params(case, &module);
        loss(case, &output, None).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&module)));
    }
    report.finish(2 * 2 * 8);
    assert_eq!(
        lens_ranks,
        BTreeSet::from([1, 2]),
        "valid lengths [B] and [B, Q]"
    );
}

/// Every case twice, once for each way of computing additive scores: both are held to
/// the same golden data.
fn with_both_scorings(cases: &[Value]) -> Vec<(&Value, AdditiveScoring)> {
    cases
        .iter()
        .flat_map(|case| {
            [AdditiveScoring::Fused, AdditiveScoring::Broadcast].map(|s| (case, s))
        })
        .collect()
}

fn bahdanau(case: &Value, scoring: AdditiveScoring) -> BahdanauAttention {
    let config = BahdanauAttentionConfig {
        query_size: param_size(case, "W_q.weight", 1),
        key_size: param_size(case, "W_k.weight", 1),
        value_size: param_size(case, "W_o.weight", 1),
        num_hiddens: usize_config(case, "hidden"),
        fill: fill_of(case).unwrap_or_default(),
        scoring,
        activation: match case["config"]["activation"].as_str() {
            Some("relu") => Activation::Relu,
            Some("tanh") => Activation::Tanh,
            other => panic!("{}: activation {other:?}", name(case)),
        },
    };
    BahdanauAttention::from_state_dict(config, &state(case))
        .unwrap_or_else(|e| panic!("{}: {e}", name(case)))
}

#[test]
fn bahdanau_attention_matches_first_article_reference() {
    let mut report = Report::default();
    let mut fills = BTreeSet::new();
    for (case, scoring) in with_both_scorings(family("bahdanau_attention")) {
        let label = format!("{} ({scoring:?})", name(case));
        let module = bahdanau(case, scoring);
        fills.insert(format!("{:?}", fill_of(case)));
        assert_eq!(
            module.num_hiddens(),
            usize_config(case, "hidden"),
            "{label}"
        );
        let x = inputs(case);
        let mask = mask_of(case, &one_query_scores(case));
        let (context, weights) =
            module.forward(&x["query"], &x["keys"], &x["values"], &mask);
        report.check(&format!("{label}: context"), &context, &case["output"]);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        let kept = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: kept weights"), &kept, &case["weights"]);
        report.check_params(case, &module);
        loss(case, &context, Some(&weights)).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&module)));
    }
    report.finish(2 * 5 * 13);
    let article = format!("{:?}", Some(Fill::Constant(-1e9)));
    assert!(
        fills.contains(&article) && fills.contains("None"),
        "the article's fill and the default fill are both covered: {fills:?}"
    );
}

#[test]
fn multi_head_additive_attention_matches_reference() {
    let mut report = Report::default();
    for (case, scoring) in with_both_scorings(family("multi_head_additive_attention"))
    {
        let label = format!("{} ({scoring:?})", name(case));
        let heads = usize_config(case, "num_heads");
        assert!(heads >= 2, "{label}: several heads");
        let config = MultiHeadAdditiveAttentionConfig {
            query_size: param_size(case, "heads.0.W_q.weight", 1),
            key_size: param_size(case, "heads.0.W_k.weight", 1),
            value_size: param_size(case, "W_o.weight", 0),
            num_hiddens: usize_config(case, "hidden"),
            num_heads: heads,
            fill: fill_of(case).unwrap_or_default(),
            scoring,
            activation: Activation::Tanh,
        };
        let module =
            MultiHeadAdditiveAttention::from_state_dict(config, &state(case))
                .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(module.num_heads(), heads, "{label}");
        let x = inputs(case);
        let mask = mask_of(case, &one_query_scores(case));
        let (context, weights) =
            module.forward(&x["query"], &x["keys"], &x["values"], &mask);
        report.check(&format!("{label}: context"), &context, &case["output"]);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        let kept = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: kept weights"), &kept, &case["weights"]);
        report.check_params(case, &module);
        loss(case, &context, Some(&weights)).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&module)));
    }
    report.finish(2 * 2 * 30);
}

// ---------------------------------------------------------------------------------------
// Scaled dot-product attention
// ---------------------------------------------------------------------------------------

#[test]
fn scaled_dot_product_attention_matches_torch_sdpa_and_d2l() {
    let mut report = Report::default();
    for case in family("scaled_dot_product_attention") {
        let label = name(case);
        let scores = scores_of(case);
        let mask = mask_of(case, &scores);
        let fill = fill_of(case).unwrap_or_default();
        let scale = case["config"]["scale"].as_f64().map(|s| s as f32);

        // The function: output and weights are both in the graph. It always uses the safe
        // fill and 1/√d. Another fill gives the same numbers when every query sees at least
        // one key (a masked score's exp is then exactly 0 either way), which the case must
        // satisfy; another scale is the same as queries multiplied by scale·√d.
        if fill != Fill::Safe {
            let keep = mask
                .keep_for("parity", &scores)
                .expect("a fill other than safe matters only with a mask")
                .broadcast_to(scores.as_slice());
            let k = scores[scores.len() - 1];
            assert!(
                keep.to_vec().chunks(k).all(|row| row.contains(&1.0)),
                "{label}: a fully masked row would tell {fill:?} from the function's safe fill"
            );
        }
        let x = inputs(case);
        let queries = match scale {
            Some(s) => &x["queries"] * (s * (x["queries"].size(-1) as f32).sqrt()),
            None => x["queries"].clone(),
        };
        let (output, weights) =
            scaled_dot_product_attention(&queries, &x["keys"], &x["values"], &mask);
        report.check(
            &format!("{label}: function output"),
            &output,
            &case["output"],
        );
        report.check(
            &format!("{label}: function weights"),
            &weights,
            &case["weights"],
        );
        loss(case, &output, Some(&weights)).backward();
        report.check_grads(case, "grads", &differentiable(&x, None));

        // d2l's module: its kept weights are detached, so only the output's upstream.
        let module = DotProductAttention::new(DotProductAttentionConfig {
            dropout: 0.0,
            fill,
            scale,
            path: AttentionPath::Auto,
        });
        let x = inputs(case);
        let output = module.forward(&x["queries"], &x["keys"], &x["values"], &mask);
        report.check(&format!("{label}: module output"), &output, &case["output"]);
        let kept = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: module weights"), &kept, &case["weights"]);
        output.backward_with(&field(case, "upstream", "output"));
        report.check_grads(case, "module_grads", &differentiable(&x, None));
    }
    report.finish(4 * 10);
}

// ---------------------------------------------------------------------------------------
// Multi-head attention
// ---------------------------------------------------------------------------------------

fn multi_head(case: &Value) -> MultiHeadAttention {
    let num_hiddens = param_size(case, "W_o.weight", 0);
    let config = MultiHeadAttentionConfig {
        num_hiddens,
        num_heads: usize_config(case, "num_heads"),
        query_size: Some(param_size(case, "W_q.weight", 1)),
        key_size: Some(param_size(case, "W_k.weight", 1)),
        value_size: Some(param_size(case, "W_v.weight", 1)),
        dropout: 0.0,
        bias: case["params"].get("W_q.bias").is_some(),
        fill: fill_of(case).unwrap_or_default(),
        path: AttentionPath::Auto,
    };
    if let Some(h) = case["config"]["num_hiddens"].as_u64() {
        assert_eq!(h as usize, num_hiddens, "{}: num_hiddens", name(case));
    }
    if let Some(b) = case["config"]["bias"].as_bool() {
        assert_eq!(b, config.bias, "{}: bias", name(case));
    }
    MultiHeadAttention::from_state_dict(config, &state(case))
        .unwrap_or_else(|e| panic!("{}: {e}", name(case)))
}

/// Runs a multi-head case: output, per-head weights `[B, H, Q, K]`, parameters, gradients.
fn check_multi_head(report: &mut Report, case: &Value, module: &MultiHeadAttention) {
    let label = name(case);
    let x = inputs(case);
    let mask = mask_of(case, &scores_of(case));
    let output = module.forward(&x["queries"], &x["keys"], &x["values"], &mask);
    report.check(&format!("{label}: output"), &output, &case["output"]);
    let weights = module.last_attention_weights().expect("weights are kept");
    report.check(&format!("{label}: weights"), &weights, &case["weights"]);
    report.check_params(case, module);
    loss(case, &output, None).backward();
    report.check_grads(case, "grads", &differentiable(&x, Some(module)));
}

#[test]
fn multi_head_attention_matches_d2l_with_different_valid_lens_per_example() {
    let mut report = Report::default();
    for case in family("multi_head_attention") {
        let label = name(case);
        let module = multi_head(case);
        assert!(module.num_heads() >= 2, "{label}: several heads");
        if case["mask"]["kind"] == "valid_lens" {
            let lens = tensor(&case["mask"]["lens"]);
            // Per-example lengths that differ, so a tiled mask would give other numbers.
            let first_per_example: Vec<f32> = lens
                .to_vec()
                .chunks(lens.numel() / lens.shape()[0])
                .map(|c| c[0])
                .collect();
            assert!(
                lens.shape()[0] >= 2
                    && first_per_example.windows(2).any(|w| w[0] != w[1]),
                "{label}: valid lengths must differ across the batch"
            );
        }
        check_multi_head(&mut report, case, &module);
    }
    report.finish(2 * 10);
}

#[test]
fn multi_head_attention_matches_torch_multihead_attention() {
    let mut report = Report::default();
    for case in family("torch_multihead_attention") {
        let label = name(case);
        // The keep mask is the complement of PyTorch's key_padding_mask, with a query axis.
        let padding = tensor(&case["key_padding_mask"]);
        let (b, k) = (padding.shape()[0], padding.shape()[1]);
        assert_eq!(case["mask"]["kind"], "keep", "{label}: a keep mask");
        let keep = tensor(&case["mask"]["keep"]);
        assert_eq!(keep.shape(), &[b, 1, k], "{label}: keep mask [B, 1, K]");
        let complement: Vec<f32> = padding.to_vec().iter().map(|p| 1.0 - p).collect();
        assert_eq!(
            keep.to_vec(),
            complement,
            "{label}: keep = !key_padding_mask"
        );
        // PyTorch's mask, passed as it is, hides the same keys.
        let q = input_shape(case, "queries")[1];
        let ignore = Mask::key_padding_ignore(&padding)
            .keep_for("parity", &[b, q, k])
            .expect("a mask");
        assert_eq!(
            ignore.to_vec(),
            complement,
            "{label}: Mask::key_padding_ignore(key_padding_mask)"
        );
        // PyTorch fills with -inf: the default (safe) fill, never a constant.
        assert_eq!(fill_of(case), None, "{label}: default fill");
        check_multi_head(&mut report, case, &multi_head(case));
    }
    report.finish(10);
}

// ---------------------------------------------------------------------------------------
// Causal self-attention and the KV cache
// ---------------------------------------------------------------------------------------

fn causal(case: &Value) -> CausalSelfAttention {
    let config = CausalSelfAttentionConfig {
        num_hiddens: param_size(case, "W_q.weight", 1),
        num_heads: usize_config(case, "num_heads"),
        bias: case["params"].get("W_q.bias").is_some(),
        ..Default::default()
    };
    CausalSelfAttention::from_state_dict(config, &state(case))
        .unwrap_or_else(|e| panic!("{}: {e}", name(case)))
}

#[test]
fn causal_self_attention_forward_matches_full_causal_reference() {
    let mut report = Report::default();
    for case in family("causal_self_attention") {
        let label = name(case);
        assert!(
            case["mask"]["kind"] == "causal"
                && case["mask"]["offset"].as_u64() == Some(0)
                && fill_of(case).is_none(),
            "{label}: a full causal pass with the default fill"
        );
        let layer = causal(case);
        let x = inputs(case);
        // The layer is causal by itself; the caller's mask adds nothing here.
        let output = layer.forward(&x["x"], &Mask::none());
        report.check(&format!("{label}: output"), &output, &case["output"]);
        let weights = layer.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        report.check_params(case, &layer);
        loss(case, &output, None).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&layer)));
    }
    report.finish(19);
}

#[test]
fn causal_self_attention_prefill_and_steps_match_full_causal_reference() {
    let mut report = Report::default();
    for case in family("causal_self_attention") {
        let label = name(case);
        let (prompt, steps) = (
            usize_config(case, "prompt_len"),
            usize_config(case, "decode_steps"),
        );
        let layer = causal(case);
        let x = field(case, "inputs", "x");
        assert_eq!(x.shape()[1], prompt + steps, "{label}: sequence length");
        let expected_weights = tensor(&case["weights"]);
        // A small initial capacity, so that decoding also grows the cache.
        let mut cache = KvCache::new(2);
        let rows = no_grad(|| {
            let first =
                layer.prefill(&x.narrow(1, 0, prompt), &mut cache, &Mask::none());
            report.check_tensor(
                &format!("{label}: prefill weights"),
                &layer.last_attention_weights().expect("weights are kept"),
                &expected_weights.narrow(2, 0, prompt).narrow(3, 0, prompt),
            );
            let mut rows = vec![first];
            for t in prompt..prompt + steps {
                rows.push(layer.step(&x.narrow(1, t, 1), &mut cache, &Mask::none()));
                assert_eq!(
                    cache.len(),
                    t + 1,
                    "{label}: cache length after step {t}"
                );
                report.check_tensor(
                    &format!("{label}: weights of step {t}"),
                    &layer.last_attention_weights().expect("weights are kept"),
                    &expected_weights.narrow(2, t, 1).narrow(3, 0, t + 1),
                );
            }
            Tensor::concat(&rows, 1)
        });
        assert!(!rows.requires_grad(), "{label}: decoding builds no graph");
        report.check(&format!("{label}: decoded rows"), &rows, &case["output"]);
    }
    report.finish(6);
}

// ---------------------------------------------------------------------------------------
// State dicts under PyTorch's own names
// ---------------------------------------------------------------------------------------

/// Dimension `dim` of the tensor `key` of a case's `state_dict`.
#[track_caller]
fn state_size(case: &Value, key: &str, dim: usize) -> usize {
    stored(&case["state_dict"][key]).shape[dim]
}

#[test]
fn bahdanau_attention_loads_the_articles_state_dict_and_gives_its_numbers() {
    let mut report = Report::default();
    for (case, scoring) in with_both_scorings(family("article_additive_attention")) {
        let label = format!("{} ({scoring:?})", name(case));
        let config = BahdanauAttentionConfig {
            query_size: state_size(case, "query_proj.weight", 1),
            key_size: state_size(case, "key_proj.weight", 1),
            value_size: state_size(case, "value_proj.weight", 1),
            num_hiddens: usize_config(case, "hidden"),
            fill: fill_of(case).unwrap_or_default(),
            scoring,
            activation: Activation::Tanh,
        };
        assert_eq!(
            config.fill,
            Fill::Constant(-1e9),
            "{label}: the article's fill"
        );
        let state = state_dict(case);
        let built = BahdanauAttention::from_state_dict(config, &state)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let loaded = BahdanauAttention::new(config);
        loaded
            .load_state_dict(&state)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let mask = mask_of(case, &one_query_scores(case));
        for (how, module) in
            [("from_state_dict", &built), ("load_state_dict", &loaded)]
        {
            let x = inputs(case);
            let (context, weights) =
                module.forward(&x["query"], &x["keys"], &x["values"], &mask);
            report.check(
                &format!("{label}, {how}: context"),
                &context,
                &case["output"],
            );
            report.check(
                &format!("{label}, {how}: weights"),
                &weights,
                &case["weights"],
            );
            loss(case, &context, Some(&weights)).backward();
            report.check_grads(case, "grads", &differentiable(&x, None));
        }
    }
    report.finish(2 * 2 * 5);
}

#[test]
fn multi_head_attention_loads_nn_multihead_attentions_state_dict_and_gives_its_numbers()
 {
    let mut report = Report::default();
    for case in family("torch_multihead_attention_state_dict") {
        let label = name(case);
        let config = MultiHeadAttentionConfig {
            num_hiddens: usize_config(case, "embed_dim"),
            num_heads: usize_config(case, "num_heads"),
            bias: case["config"]["bias"].as_bool().expect("config.bias"),
            ..Default::default()
        };
        let state = state_dict(case);
        let built = MultiHeadAttention::from_state_dict(config, &state)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let loaded = MultiHeadAttention::new(config);
        loaded
            .load_state_dict(&state)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        // PyTorch's key_padding_mask as it is (True = ignore); PyTorch fills with -inf,
        // which the default safe fill matches when every query has a key.
        let mask = Mask::key_padding_ignore(&tensor(&case["key_padding_mask"]));
        for (how, module) in
            [("from_state_dict", &built), ("load_state_dict", &loaded)]
        {
            let x = inputs(case);
            let output =
                module.forward(&x["queries"], &x["keys"], &x["values"], &mask);
            report.check(
                &format!("{label}, {how}: output"),
                &output,
                &case["output"],
            );
            let weights = module.last_attention_weights().expect("weights are kept");
            report.check(
                &format!("{label}, {how}: weights"),
                &weights,
                &case["weights"],
            );
            loss(case, &output, None).backward();
            report.check_grads(case, "grads", &differentiable(&x, None));
        }
    }
    report.finish(2 * 5);
}

/// Guards the helpers themselves: a case names exactly the inputs and parameters whose
/// gradients it stores, so no gradient can go unchecked.
#[test]
fn every_case_stores_gradients_for_all_its_inputs_and_parameters() {
    for f in FAMILIES {
        for case in family(f) {
            let mut expected: BTreeSet<String> = keys(case, "inputs");
            if case.get("params").is_some() {
                expected.extend(keys(case, "params"));
            }
            assert_eq!(
                keys(case, "grads"),
                expected,
                "{f}/{}: gradients for every input and parameter",
                name(case)
            );
        }
    }
}
