//! Agreement with PyTorch: every attention module against the reference implementations
//! in `tests/golden/attention.py` (d2l's code, the first article's additive attention,
//! `torch.nn.MultiheadAttention`, `F.scaled_dot_product_attention`), on outputs, attention
//! weights and the gradients of every input and parameter.
//!
//! Tolerance: `|engine − PyTorch| ≤ 1e-5 + 1e-4 · |PyTorch|` everywhere (the references are
//! float64; the engine computes in f32 from the same f32-exact inputs).

mod common;

use std::collections::BTreeSet;

use attention::{
    AdditiveAttention, AttentionWeights, BahdanauAttention, CausalSelfAttention,
    DotProductAttention, Fill, KvCache, Mask, MultiHeadAdditiveAttention, MultiHeadAttention,
    masked_softmax, scaled_dot_product_attention,
};
use common::{
    Report, differentiable, family, field, fill_of, golden, inputs, keys, linear, loss, mask_of,
    name, stored, tensor,
};
use engine::{Tensor, no_grad};
use serde_json::Value;

/// Every case family the golden file may hold, each read by one test below.
const FAMILIES: [&str; 8] = [
    "masked_softmax",
    "additive_attention",
    "bahdanau_attention",
    "scaled_dot_product_attention",
    "multi_head_attention",
    "torch_multihead_attention",
    "multi_head_additive_attention",
    "causal_self_attention",
];

fn with_fill<M>(module: M, case: &Value, set: impl FnOnce(M, Fill) -> M) -> M {
    match fill_of(case) {
        Some(fill) => set(module, fill),
        None => module,
    }
}

#[track_caller]
fn usize_config(case: &Value, key: &str) -> usize {
    case["config"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("case {:?} has no config.{key}", name(case))) as usize
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
        "valid_lens" => format!("valid lengths of rank {}", stored(&m["lens"]).shape.len()),
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
        let mask = mask_of(case);
        let fill = fill_of(case).unwrap_or_default();
        grid.insert((mask_kind(case), format!("{fill:?}")));
        if let Mask::ValidLens(lens) = &mask {
            let k = stored(&case["inputs"]["scores"]).shape[2] as f32;
            empty_length |= lens.to_vec().contains(&0.0);
            clamped_length |= lens.to_vec().iter().any(|&l| l > k);
        }
        let scores = field(case, "inputs", "scores").requires_grad_();
        let weights = masked_softmax(&scores, &mask, fill);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        weights.backward_with(&field(case, "upstream", "weights"));
        report.check_grads(case, "grads", &[("scores".into(), scores)]);
    }
    report.finish(2 * 21);
    let kinds: BTreeSet<&String> = grid.iter().map(|(k, _)| k).collect();
    let fills: BTreeSet<&String> = grid.iter().map(|(_, f)| f).collect();
    assert_eq!(kinds.len(), 7, "mask kinds covered: {kinds:?}");
    let all_fills = [Fill::D2l, Fill::Constant(-1e9), Fill::Safe].map(|f| format!("{f:?}"));
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
    for case in family("additive_attention") {
        let label = name(case);
        let module = AdditiveAttention::from_weights(
            &field(case, "params", "W_q.weight"),
            &field(case, "params", "W_k.weight"),
            &field(case, "params", "w_v.weight"),
            0.0,
        );
        let module = with_fill(module, case, AdditiveAttention::with_fill);
        let mask = mask_of(case);
        if let Mask::ValidLens(lens) = &mask {
            lens_ranks.insert(lens.rank());
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
    report.finish(2 * 8);
    assert_eq!(
        lens_ranks,
        BTreeSet::from([1, 2]),
        "valid lengths [B] and [B, Q]"
    );
}

fn bahdanau(case: &Value, prefix: &str) -> BahdanauAttention {
    let p = |s: &str| format!("{prefix}{s}");
    BahdanauAttention::from_parts(
        linear(case, &p("W_q")),
        linear(case, &p("W_k")),
        field(case, "params", &p("v")),
        linear(case, &p("W_o")),
    )
}

#[test]
fn bahdanau_attention_matches_first_article_reference() {
    let mut report = Report::default();
    let mut fills = BTreeSet::new();
    for case in family("bahdanau_attention") {
        let label = name(case);
        let module = with_fill(bahdanau(case, ""), case, BahdanauAttention::with_fill);
        fills.insert(format!("{:?}", fill_of(case)));
        assert_eq!(module.hidden(), usize_config(case, "hidden"), "{label}");
        let x = inputs(case);
        let (context, weights) =
            module.forward(&x["query"], &x["keys"], &x["values"], &mask_of(case));
        report.check(&format!("{label}: context"), &context, &case["output"]);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        let kept = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: kept weights"), &kept, &case["weights"]);
        report.check_params(case, &module);
        loss(case, &context, Some(&weights)).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&module)));
    }
    report.finish(5 * 13);
    let article = format!("{:?}", Some(Fill::Constant(-1e9)));
    assert!(
        fills.contains(&article) && fills.contains("None"),
        "the article's fill and the default fill are both covered: {fills:?}"
    );
}

#[test]
fn multi_head_additive_attention_matches_reference() {
    let mut report = Report::default();
    for case in family("multi_head_additive_attention") {
        let label = name(case);
        let heads = usize_config(case, "num_heads");
        assert!(heads >= 2, "{label}: several heads");
        let module = MultiHeadAdditiveAttention::from_parts(
            (0..heads)
                .map(|i| bahdanau(case, &format!("heads.{i}.")))
                .collect(),
            linear(case, "W_o"),
        );
        let module = with_fill(module, case, MultiHeadAdditiveAttention::with_fill);
        let x = inputs(case);
        let (context, weights) =
            module.forward(&x["query"], &x["keys"], &x["values"], &mask_of(case));
        report.check(&format!("{label}: context"), &context, &case["output"]);
        report.check(&format!("{label}: weights"), &weights, &case["weights"]);
        let kept = module.last_attention_weights().expect("weights are kept");
        report.check(&format!("{label}: kept weights"), &kept, &case["weights"]);
        report.check_params(case, &module);
        loss(case, &context, Some(&weights)).backward();
        report.check_grads(case, "grads", &differentiable(&x, Some(&module)));
    }
    report.finish(2 * 30);
}

// ---------------------------------------------------------------------------------------
// Scaled dot-product attention
// ---------------------------------------------------------------------------------------

#[test]
fn scaled_dot_product_attention_matches_torch_sdpa_and_d2l() {
    let mut report = Report::default();
    for case in family("scaled_dot_product_attention") {
        let label = name(case);
        let mask = mask_of(case);
        let fill = fill_of(case);
        let scale = case["config"]["scale"].as_f64().map(|s| s as f32);

        // The function: output and weights are both in the graph.
        let x = inputs(case);
        let (output, weights) = scaled_dot_product_attention(
            &x["queries"],
            &x["keys"],
            &x["values"],
            &mask,
            fill.unwrap_or_default(),
            scale,
        );
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
        let mut module = with_fill(DotProductAttention::new(0.0), case, |m, f| m.with_fill(f));
        if let Some(s) = scale {
            module = module.with_scale(s);
        }
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
    let linears = ["W_q", "W_k", "W_v", "W_o"].map(|p| linear(case, p));
    MultiHeadAttention::from_linears(linears, usize_config(case, "num_heads"), 0.0)
}

/// Runs a multi-head case: output, per-head weights `[B, H, Q, K]`, parameters, gradients.
fn check_multi_head(report: &mut Report, case: &Value, module: &MultiHeadAttention) {
    let label = name(case);
    let x = inputs(case);
    let output = module.forward(&x["queries"], &x["keys"], &x["values"], &mask_of(case));
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
        let module = with_fill(multi_head(case), case, MultiHeadAttention::with_fill);
        assert!(module.num_heads() >= 2, "{label}: several heads");
        if let Mask::ValidLens(lens) = mask_of(case) {
            // Per-example lengths that differ, so a tiled mask would give other numbers.
            let first_per_example: Vec<f32> = lens
                .to_vec()
                .chunks(lens.numel() / lens.shape()[0])
                .map(|c| c[0])
                .collect();
            assert!(
                lens.shape()[0] >= 2 && first_per_example.windows(2).any(|w| w[0] != w[1]),
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
        let Mask::Keep(keep) = mask_of(case) else {
            panic!("{label}: a keep mask")
        };
        assert_eq!(keep.shape(), &[b, 1, k], "{label}: keep mask [B, 1, K]");
        let complement: Vec<f32> = padding.to_vec().iter().map(|p| 1.0 - p).collect();
        assert_eq!(
            keep.to_vec(),
            complement,
            "{label}: keep = !key_padding_mask"
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
    let linears = ["W_q", "W_k", "W_v", "W_o"].map(|p| linear(case, p));
    CausalSelfAttention::from_linears(linears, usize_config(case, "num_heads"))
}

#[test]
fn causal_self_attention_forward_matches_full_causal_reference() {
    let mut report = Report::default();
    for case in family("causal_self_attention") {
        let label = name(case);
        assert!(
            matches!(mask_of(case), Mask::Causal { offset: 0 }) && fill_of(case).is_none(),
            "{label}: a full causal pass with the default fill"
        );
        let layer = causal(case);
        let x = inputs(case);
        let output = layer.forward(&x["x"]);
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
            let first = layer.prefill(&x.narrow(1, 0, prompt), &mut cache);
            report.check_tensor(
                &format!("{label}: prefill weights"),
                &layer.last_attention_weights().expect("weights are kept"),
                &expected_weights.narrow(2, 0, prompt).narrow(3, 0, prompt),
            );
            let mut rows = vec![first];
            for t in prompt..prompt + steps {
                rows.push(layer.step(&x.narrow(1, t, 1), &mut cache));
                assert_eq!(cache.len(), t + 1, "{label}: cache length after step {t}");
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
