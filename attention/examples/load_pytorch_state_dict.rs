//! Loads two PyTorch state dicts by PyTorch's own names and compares the outputs with
//! PyTorch's:
//!
//! - the first article's single-query additive attention (`query_proj`, `key_proj`,
//!   `value_proj`, `v`) into [`BahdanauAttention`];
//! - `nn.MultiheadAttention(8, 2, bias=True, batch_first=True)` (`in_proj_weight`,
//!   `in_proj_bias`, `out_proj.*`) into [`MultiHeadAttention`], with its
//!   `key_padding_mask` passed as it is.
//!
//! The state dicts, inputs and PyTorch's outputs are those `tests/golden/attention.py`
//! wrote into `tests/golden/attention.json` (float64, from fixed seeds).
//!
//! ```sh
//! cargo run -p attention --example load_pytorch_state_dict
//! ```

use attention::prelude::*;
use serde_json::Value;

/// A tensor stored as `{"shape": [...], "data": [...]}`.
fn tensor(value: &Value) -> Tensor {
    let shape: Vec<usize> = value["shape"]
        .as_array()
        .expect("a shape")
        .iter()
        .map(|d| d.as_u64().expect("a size") as usize)
        .collect();
    let data: Vec<f32> = value["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|v| v.as_f64().expect("a number") as f32)
        .collect();
    Tensor::from_vec(data, shape)
}

/// Every entry of an object of stored tensors, by name, as PyTorch's `state_dict()` gives.
fn state_dict(value: &Value) -> StateDict {
    value
        .as_object()
        .expect("a state dict")
        .iter()
        .map(|(name, t)| (name.clone(), tensor(t)))
        .collect()
}

/// The largest `|ours − PyTorch's|`, which must be within f32 rounding (PyTorch computed
/// in float64 from the same float32 values).
fn largest_difference(ours: &Tensor, theirs: &Value) -> f32 {
    let theirs = tensor(theirs);
    assert_eq!(ours.shape(), theirs.shape());
    let largest = ours
        .to_vec()
        .iter()
        .zip(theirs.to_vec())
        .fold(0.0, |m: f32, (a, b)| m.max((a - b).abs()));
    assert!(largest < 1e-4, "{largest} is more than rounding");
    largest
}

fn print_state(state: &StateDict) {
    for (name, t) in state.iter() {
        println!("  {name:<20} {:?}", t.shape());
    }
}

fn main() {
    let golden: Value =
        serde_json::from_str(include_str!("../../tests/golden/attention.json"))
            .expect("attention.json is valid JSON");

    // The article's module: names query_proj, key_proj, value_proj, v.
    let case = &golden["article_additive_attention"][0];
    let state = state_dict(&case["state_dict"]);
    println!("== The article's additive attention, loaded by its names");
    print_state(&state);
    let size = |name: &str| state.get(name).expect("in the state").shape()[1];
    let config = BahdanauAttentionConfig {
        query_size: size("query_proj.weight"),
        key_size: size("key_proj.weight"),
        value_size: size("value_proj.weight"),
        num_hiddens: size("v.weight"),
        fill: Fill::Constant(-1e9), // the article's fill
        ..Default::default()
    };
    let module =
        BahdanauAttention::from_state_dict(config, &state).expect("the state fits");
    let x = &case["inputs"];
    let mask = Mask::key_padding(&tensor(&case["mask"]["keep"])); // 1 = a real key
    let (context, weights) = module.forward(
        &tensor(&x["query"]),
        &tensor(&x["keys"]),
        &tensor(&x["values"]),
        &mask,
    );
    println!(
        "context {:?}, weights {:?}",
        context.shape(),
        weights.shape()
    );
    println!(
        "largest difference from PyTorch: context {:.1e}, weights {:.1e}",
        largest_difference(&context, &case["output"]),
        largest_difference(&weights, &case["weights"])
    );
    println!(
        "its own state_dict() names: {}",
        module.state_dict().names().collect::<Vec<_>>().join(", ")
    );

    // nn.MultiheadAttention: in_proj_weight holds W_q, W_k, W_v stacked on dimension 0.
    let case = &golden["torch_multihead_attention_state_dict"][0];
    let state = state_dict(&case["state_dict"]);
    println!();
    println!(
        "== nn.MultiheadAttention(8, 2, bias=True, batch_first=True), loaded by its names"
    );
    print_state(&state);
    let config = MultiHeadAttentionConfig {
        num_hiddens: case["config"]["embed_dim"].as_u64().expect("embed_dim")
            as usize,
        num_heads: case["config"]["num_heads"].as_u64().expect("num_heads") as usize,
        bias: true, // PyTorch's default; d2l's, and this config's, is false
        ..Default::default()
    };
    let mut module =
        MultiHeadAttention::from_state_dict(config, &state).expect("the state fits");
    module.eval();
    let x = &case["inputs"];
    // PyTorch's key_padding_mask: True (1) where a key is ignored.
    let mask = Mask::key_padding_ignore(&tensor(&case["key_padding_mask"]));
    let output = module.forward(
        &tensor(&x["queries"]),
        &tensor(&x["keys"]),
        &tensor(&x["values"]),
        &mask,
    );
    let weights = module
        .last_attention_weights()
        .expect("kept by the forward pass");
    println!(
        "output {:?}, weights per head {:?}",
        output.shape(),
        weights.shape()
    );
    println!(
        "largest difference from PyTorch: output {:.1e}, weights {:.1e}",
        largest_difference(&output, &case["output"]),
        largest_difference(&weights, &case["weights"])
    );
    println!(
        "its own state_dict() names: {}",
        module.state_dict().names().collect::<Vec<_>>().join(", ")
    );
}
