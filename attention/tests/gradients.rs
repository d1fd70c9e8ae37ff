//! Finite-difference checks of every module's gradients, with respect to its inputs and
//! every parameter. The parameters are the checker's own leaf tensors, handed to the
//! modules with `from_state_dict` (which shares them), so gradients reach them.

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, BahdanauAttention, BahdanauAttentionConfig,
    CausalSelfAttention, CausalSelfAttentionConfig, DotProductAttention, DotProductAttentionConfig,
    Fill, Mask, MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig, MultiHeadAttention,
    MultiHeadAttentionConfig, masked_softmax, scaled_dot_product_attention,
};
use engine::Tensor;
use engine::gradcheck::gradcheck;
use engine::nn::StateDict;

fn lens(values: &[f32]) -> Mask {
    Mask::valid_lens(&Tensor::from_vec(values.to_vec(), [values.len()]))
}

fn randn(shape: &[usize]) -> Tensor {
    Tensor::randn(shape) * 0.5
}

/// The tensors `t[first..]` under `names`, in order.
fn named(names: &[&str], t: &[Tensor], first: usize) -> StateDict {
    assert_eq!(names.len(), t.len() - first, "one name per parameter");
    names
        .iter()
        .zip(&t[first..])
        .map(|(n, t)| (*n, t.clone()))
        .collect()
}

#[test]
fn masked_softmax_gradient_under_every_fill() {
    engine::manual_seed(1);
    let scores = randn(&[2, 3, 4]);
    for fill in [Fill::Safe, Fill::D2l, Fill::Constant(-1e9)] {
        for mask in [Mask::none(), lens(&[2.0, 0.0]), Mask::causal()] {
            gradcheck(
                |t| masked_softmax(&t[0], &mask, fill),
                std::slice::from_ref(&scores),
            )
            .unwrap_or_else(|e| panic!("{fill:?} {mask:?}: {e}"));
        }
    }
}

#[test]
fn scaled_dot_product_gradient_wrt_queries_keys_values() {
    engine::manual_seed(2);
    let (q, k, v) = (randn(&[2, 3, 4]), randn(&[2, 5, 4]), randn(&[2, 5, 3]));
    for mask in [Mask::none(), lens(&[3.0, 5.0])] {
        gradcheck(
            |t| scaled_dot_product_attention(&t[0], &t[1], &t[2], &mask).0,
            &[q.clone(), k.clone(), v.clone()],
        )
        .unwrap();
    }
    let square = randn(&[2, 4, 4]);
    gradcheck(
        |t| scaled_dot_product_attention(&t[0], &t[0], &t[0], &Mask::causal()).0,
        &[square],
    )
    .unwrap();
}

#[test]
fn dot_product_module_gradient() {
    engine::manual_seed(3);
    let attention = DotProductAttention::new(DotProductAttentionConfig::default());
    gradcheck(
        |t| attention.forward(&t[0], &t[1], &t[2], &lens(&[1.0, 4.0])),
        &[randn(&[2, 2, 3]), randn(&[2, 4, 3]), randn(&[2, 4, 2])],
    )
    .unwrap();
}

#[test]
fn additive_attention_gradient_wrt_inputs_and_parameters() {
    engine::manual_seed(4);
    let inputs = [
        randn(&[2, 3, 5]), // queries, query_size 5
        randn(&[2, 4, 3]), // keys, key_size 3
        randn(&[2, 4, 2]), // values
        randn(&[6, 5]),    // W_q
        randn(&[6, 3]),    // W_k
        randn(&[1, 6]),    // w_v
    ];
    let config = AdditiveAttentionConfig {
        query_size: 5,
        key_size: 3,
        num_hiddens: 6,
        ..Default::default()
    };
    gradcheck(
        |t| {
            let state = named(&["W_q.weight", "W_k.weight", "w_v.weight"], t, 3);
            AdditiveAttention::from_state_dict(config, &state)
                .unwrap()
                .forward(&t[0], &t[1], &t[2], &lens(&[2.0, 4.0]))
        },
        &inputs,
    )
    .unwrap();
}

const BAHDANAU: [&str; 7] = [
    "W_q.weight",
    "W_q.bias",
    "W_k.weight",
    "W_k.bias",
    "v",
    "W_o.weight",
    "W_o.bias",
];

#[test]
fn bahdanau_attention_gradient_wrt_inputs_and_parameters() {
    engine::manual_seed(5);
    let inputs = [
        randn(&[2, 4]),    // query
        randn(&[2, 3, 3]), // keys
        randn(&[2, 3, 2]), // values
        randn(&[5, 4]),    // W_q
        randn(&[5]),       // b_q
        randn(&[5, 3]),    // W_k
        randn(&[5]),       // b_k
        randn(&[5]),       // v
        randn(&[2, 2]),    // W_o
        randn(&[2]),       // b_o
    ];
    // Key 2 of example 0 is padding.
    let mask = Mask::key_padding(&Tensor::from_vec(
        vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
        [2, 3],
    ));
    let config = BahdanauAttentionConfig {
        query_size: 4,
        key_size: 3,
        value_size: 2,
        num_hiddens: 5,
        ..Default::default()
    };
    let run = |t: &[Tensor], pick_weights: bool| {
        let attention =
            BahdanauAttention::from_state_dict(config, &named(&BAHDANAU, t, 3)).unwrap();
        let (context, weights) = attention.forward(&t[0], &t[1], &t[2], &mask);
        if pick_weights { weights } else { context }
    };
    gradcheck(|t| run(t, false), &inputs).unwrap();
    gradcheck(|t| run(t, true), &inputs).unwrap();
}

#[test]
fn multi_head_attention_gradient_wrt_inputs_and_parameters() {
    engine::manual_seed(6);
    let mut inputs = vec![randn(&[2, 3, 4]), randn(&[2, 5, 4])];
    for _ in 0..4 {
        inputs.push(randn(&[4, 4]));
        inputs.push(randn(&[4]));
    }
    let config = MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        bias: true,
        ..Default::default()
    };
    let names = [
        "W_q.weight",
        "W_q.bias",
        "W_k.weight",
        "W_k.bias",
        "W_v.weight",
        "W_v.bias",
        "W_o.weight",
        "W_o.bias",
    ];
    gradcheck(
        |t| {
            MultiHeadAttention::from_state_dict(config, &named(&names, t, 2))
                .unwrap()
                .forward(&t[0], &t[1], &t[1], &lens(&[2.0, 5.0]))
        },
        &inputs,
    )
    .unwrap();
}

#[test]
fn multi_head_additive_attention_gradient_wrt_inputs_and_parameters() {
    engine::manual_seed(7);
    // Two heads of hidden size 2 for query_size 3, key_size 3, value_size 2.
    let mut inputs = vec![randn(&[2, 3]), randn(&[2, 4, 3]), randn(&[2, 4, 2])];
    for _ in 0..2 {
        inputs.extend([
            randn(&[2, 3]),
            randn(&[2]),
            randn(&[2, 3]),
            randn(&[2]),
            randn(&[2]),
            randn(&[2, 2]),
            randn(&[2]),
        ]);
    }
    inputs.extend([randn(&[2, 4]), randn(&[2])]);
    let mut names: Vec<String> = (0..2)
        .flat_map(|h| BAHDANAU.map(|n| format!("heads.{h}.{n}")))
        .collect();
    names.extend(["W_o.weight".to_string(), "W_o.bias".to_string()]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let config = MultiHeadAdditiveAttentionConfig {
        query_size: 3,
        key_size: 3,
        value_size: 2,
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    };
    gradcheck(
        |t| {
            MultiHeadAdditiveAttention::from_state_dict(config, &named(&names, t, 3))
                .unwrap()
                .forward(&t[0], &t[1], &t[2], &lens(&[3.0, 1.0]))
                .0
        },
        &inputs,
    )
    .unwrap();
}

#[test]
fn causal_self_attention_gradient_wrt_input_and_parameters() {
    engine::manual_seed(8);
    let mut inputs = vec![randn(&[2, 3, 4])];
    for _ in 0..4 {
        inputs.push(randn(&[4, 4]));
        inputs.push(randn(&[4]));
    }
    let config = CausalSelfAttentionConfig {
        d_model: 4,
        num_heads: 2,
        ..Default::default()
    };
    let names = [
        "W_q.weight",
        "W_q.bias",
        "W_k.weight",
        "W_k.bias",
        "W_v.weight",
        "W_v.bias",
        "W_o.weight",
        "W_o.bias",
    ];
    gradcheck(
        |t| {
            CausalSelfAttention::from_state_dict(config, &named(&names, t, 1))
                .unwrap()
                .forward(&t[0], &Mask::none())
        },
        &inputs,
    )
    .unwrap();
}
