//! Agreement with PyTorch for the Transformer's layers: `nn.TransformerEncoderLayer` and
//! `nn.TransformerDecoderLayer` (`batch_first=True`, dropout 0), post-norm and pre-norm,
//! ReLU and GELU, with padding and causal masks, against `tests/golden/transformer.json`
//! (written by `tests/golden/transformer.py`). Each layer is built from PyTorch's own
//! `state_dict()`, by PyTorch's names; the output and the gradients of every input and
//! every parameter are compared, the parameters under PyTorch's names (the stacked
//! `in_proj_weight` is the three projections' gradients stacked).
//!
//! Tolerance: `|engine − PyTorch| ≤ 1e-5 + 1e-4 · |PyTorch|`, as in `parity.rs`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use attention::transformer::{
    CausalTransformerLayer, FeedForwardActivation, TransformerDecoderLayer,
    TransformerEncoderLayer, TransformerLayerConfig,
};
use attention::{KvCache, Mask};
use engine::nn::{Module, StateDict};
use engine::{Tensor, no_grad};
use serde_json::Value;

use crate::common::{Report, name, stored, tensor};

static GOLDEN: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../golden/transformer.json"))
        .expect("transformer.json is valid JSON")
});

fn cases(kind: &str) -> Vec<&'static Value> {
    let all = GOLDEN["cases"].as_array().expect("a list of cases");
    let picked: Vec<&Value> = all.iter().filter(|c| c["kind"] == kind).collect();
    assert!(!picked.is_empty(), "no {kind} case in transformer.json");
    picked
}

fn config(case: &Value) -> TransformerLayerConfig {
    let c = &case["config"];
    let size = |k: &str| c[k].as_u64().expect("a size") as usize;
    TransformerLayerConfig {
        num_hiddens: size("d_model"),
        num_heads: size("nhead"),
        ffn_num_hiddens: size("dim_feedforward"),
        dropout: 0.0,
        activation: match c["activation"].as_str() {
            Some("relu") => FeedForwardActivation::Relu,
            Some("gelu") => FeedForwardActivation::Gelu,
            other => panic!("{}: unknown activation {other:?}", name(case)),
        },
        layer_norm_eps: c["layer_norm_eps"].as_f64().expect("eps") as f32,
        norm_first: c["norm_first"].as_bool().expect("norm_first"),
    }
}

fn torch_state(case: &Value) -> StateDict {
    case["state_dict"]
        .as_object()
        .expect("a state dict")
        .iter()
        .map(|(n, t)| (n.clone(), tensor(t)))
        .collect()
}

fn input(case: &Value, key: &str) -> Tensor {
    tensor(&case["inputs"][key]).requires_grad_()
}

fn lengths(case: &Value, key: &str) -> Mask {
    let lens: Vec<f32> = case["lengths"][key]
        .as_array()
        .expect("lengths")
        .iter()
        .map(|v| v.as_f64().expect("a length") as f32)
        .collect();
    let n = lens.len();
    Mask::valid_lens(&Tensor::from_vec(lens, [n]))
}

/// The gradient of each parameter under PyTorch's name: `{prefix}in_proj_weight` and
/// `{prefix}in_proj_bias` are the gradients of `W_q`, `W_k`, `W_v` stacked on dimension 0,
/// `{prefix}out_proj.*` those of `W_o`; every other name is the module's own.
fn torch_grads(module: &impl Module) -> BTreeMap<String, Tensor> {
    let ours: BTreeMap<String, Tensor> = module
        .named_parameters()
        .into_iter()
        .map(|(n, p)| {
            let g = p
                .grad()
                .unwrap_or_else(|_| panic!("{n} received no gradient"));
            (n, g)
        })
        .collect();
    let mut theirs = BTreeMap::new();
    for (n, g) in &ours {
        let Some((prefix, rest)) = n.split_once("attn.") else {
            theirs.insert(n.clone(), g.clone());
            continue;
        };
        let prefix = format!("{prefix}attn.");
        match rest {
            "W_q.weight" | "W_q.bias" => {
                let part = rest.strip_prefix("W_q.").expect("matched");
                let stacked = ["W_q", "W_k", "W_v"]
                    .map(|w| &ours[&format!("{prefix}{w}.{part}")]);
                theirs.insert(
                    format!("{prefix}in_proj_{part}"),
                    Tensor::concat(&stacked, 0),
                );
            }
            "W_o.weight" | "W_o.bias" => {
                let part = rest.strip_prefix("W_o.").expect("matched");
                theirs.insert(format!("{prefix}out_proj.{part}"), g.clone());
            }
            _ => {}
        }
    }
    theirs
}

fn check_case(
    report: &mut Report,
    case: &Value,
    output: &Tensor,
    inputs: &[(&str, &Tensor)],
    module: &impl Module,
) {
    let label = name(case);
    report.check(&format!("{label}: output"), output, &case["output"]);
    (output * &tensor(&case["upstream"])).sum().backward();
    for (key, t) in inputs {
        let g = t.grad().expect("an input's gradient");
        report.check(&format!("{label}: grad of {key}"), &g, &case["grads"][*key]);
    }
    let grads = torch_grads(module);
    let stored_names: Vec<&String> = case["grads"]
        .as_object()
        .expect("grads")
        .keys()
        .filter(|k| !inputs.iter().any(|(i, _)| i == k))
        .collect();
    let ours: Vec<&String> = grads.keys().collect();
    let mut sorted = stored_names.clone();
    sorted.sort();
    if ours != sorted {
        report.fail(format!(
            "{label}: parameters {ours:?}, PyTorch's {sorted:?}"
        ));
    }
    for n in stored_names {
        if let Some(g) = grads.get(n) {
            report.check(&format!("{label}: grad of {n}"), g, &case["grads"][n]);
        }
    }
}

#[test]
fn the_encoder_layer_matches_torch_in_both_placements_and_activations() {
    let mut report = Report::default();
    let mut kinds = Vec::new();
    for case in cases("encoder") {
        let c = config(case);
        kinds.push((c.norm_first, c.activation));
        let layer = TransformerEncoderLayer::from_state_dict(c, &torch_state(case))
            .unwrap_or_else(|e| panic!("{}: {e}", name(case)));
        let src = input(case, "src");
        let out = layer.forward(&src, &lengths(case, "src"));
        check_case(&mut report, case, &out, &[("src", &src)], &layer);
    }
    assert_eq!(kinds.len(), 4, "post/pre × relu/gelu: {kinds:?}");
    // Per case: the output, the input's gradient, 12 parameters' gradients.
    report.finish(4 * (1 + 1 + 12));
}

#[test]
fn the_decoder_layer_matches_torch_in_both_placements_and_activations() {
    let mut report = Report::default();
    for case in cases("decoder") {
        let layer = TransformerDecoderLayer::from_state_dict(
            config(case),
            &torch_state(case),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", name(case)));
        let (tgt, memory) = (input(case, "tgt"), input(case, "memory"));
        let self_mask = Mask::causal() & lengths(case, "tgt");
        let out = layer.forward(&tgt, &memory, &self_mask, &lengths(case, "memory"));
        check_case(
            &mut report,
            case,
            &out,
            &[("tgt", &tgt), ("memory", &memory)],
            &layer,
        );
    }
    // Per case: the output, two inputs' gradients, 18 parameters' gradients.
    report.finish(4 * (1 + 2 + 18));
}

#[test]
fn a_torch_state_dict_round_trips_through_the_layers_own_names() {
    for case in cases("decoder").into_iter().chain(cases("encoder")) {
        let c = config(case);
        let mask = Mask::causal();
        let run = |state: &StateDict| -> Vec<f32> {
            if case["kind"] == "encoder" {
                let layer = TransformerEncoderLayer::from_state_dict(c, state)
                    .expect("loads");
                layer
                    .forward(&tensor(&case["inputs"]["src"]), &mask)
                    .to_vec()
            } else {
                let layer = TransformerDecoderLayer::from_state_dict(c, state)
                    .expect("loads");
                let (tgt, memory) = (
                    tensor(&case["inputs"]["tgt"]),
                    tensor(&case["inputs"]["memory"]),
                );
                layer.forward(&tgt, &memory, &mask, &Mask::none()).to_vec()
            }
        };
        let torch = torch_state(case);
        let own = if case["kind"] == "encoder" {
            TransformerEncoderLayer::from_state_dict(c, &torch)
                .expect("loads")
                .state_dict()
        } else {
            TransformerDecoderLayer::from_state_dict(c, &torch)
                .expect("loads")
                .state_dict()
        };
        assert!(
            own.names().all(|n| !n.contains("in_proj")),
            "{}",
            name(case)
        );
        assert_eq!(run(&torch), run(&own), "{}", name(case));
    }
}

#[test]
fn the_causal_layer_reads_an_encoder_layers_state_and_computes_it_under_a_causal_mask()
 {
    for case in cases("encoder") {
        let c = config(case);
        let state = torch_state(case);
        let encoder =
            TransformerEncoderLayer::from_state_dict(c, &state).expect("loads");
        let causal =
            CausalTransformerLayer::from_state_dict(c, &state).expect("loads");
        let x = tensor(&case["inputs"]["src"]);
        let expected = encoder.forward(&x, &Mask::causal());
        let full = causal.forward(&x, &Mask::none());
        let gap = (&expected - &full).abs().max().item();
        assert!(gap < 1e-6, "{}: forward differs by {gap}", name(case));
        // Token by token from a cache: the same numbers.
        let mut cache = KvCache::new(2);
        let stepped = no_grad(|| {
            let mut rows =
                vec![causal.prefill(&x.narrow(1, 0, 2), &mut cache, &Mask::none())];
            for t in 2..x.size(1) {
                rows.push(causal.step(&x.narrow(1, t, 1), &mut cache, &Mask::none()));
            }
            Tensor::concat(&rows, 1)
        });
        let gap = (&expected - &stepped).abs().max().item();
        assert!(
            gap < 1e-5,
            "{}: cached decoding differs by {gap}",
            name(case)
        );
    }
}

#[test]
fn the_golden_file_stores_finite_values_and_both_placements() {
    let all = GOLDEN["cases"].as_array().expect("cases");
    assert_eq!(GOLDEN["meta"]["cases"].as_u64(), Some(all.len() as u64));
    for case in all {
        let out = stored(&case["output"]);
        assert!(out.data.iter().all(|v| v.is_finite()), "{}", name(case));
    }
    let firsts: Vec<bool> = all
        .iter()
        .map(|c| c["config"]["norm_first"] == true)
        .collect();
    assert!(firsts.contains(&true) && firsts.contains(&false));
}
