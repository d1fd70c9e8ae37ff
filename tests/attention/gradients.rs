//! Finite-difference checks of every module's gradients, with respect to its inputs and
//! every parameter. Inputs go through [`gradcheck`]; a module owns its parameters (loading a
//! state copies the values in), so [`gradcheck_parameters`] moves each parameter element
//! through `load_state_dict` and compares with the gradient the module's own parameter
//! received.

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, BahdanauAttention,
    BahdanauAttentionConfig, CausalSelfAttention, CausalSelfAttentionConfig,
    DotProductAttention, DotProductAttentionConfig, Fill, Mask,
    MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig, MultiHeadAttention,
    MultiHeadAttentionConfig, masked_softmax, scaled_dot_product_attention,
};
use engine::gradcheck::{GradcheckOptions, gradcheck};
use engine::nn::{Module, StateDict};
use engine::random::rng_from_seed;
use engine::{Tensor, no_grad};

/// Checks the gradient of `f(module)` with respect to every element of every parameter of
/// `module` against central differences, with [`gradcheck`]'s step and tolerances: the
/// output is reduced to `L = Σ w ⊙ f(module)` with fixed random weights `w`, `backward`
/// gives the analytic gradient in each parameter, and each element is moved by ±ε with
/// `load_state_dict` for the numeric one. The module's values are restored afterwards.
fn gradcheck_parameters<M: Module>(
    module: &M,
    f: impl Fn(&M) -> Tensor,
) -> Result<(), String> {
    let opts = GradcheckOptions::default();
    let base = module.state_dict();
    module.zero_grad();
    let out = f(module);
    let w =
        Tensor::normal_with(out.shape(), 0.0, 1.0, &mut rng_from_seed(0x7061_7261));
    (&out * &w).sum().backward();
    let w = w.to_vec();
    let loss = |state: &StateDict| -> f64 {
        module.load_state_dict(state).unwrap();
        let y = no_grad(|| f(module)).to_vec();
        y.iter()
            .zip(&w)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum()
    };
    let mut worst: Option<(f32, String)> = None;
    for (name, p) in module.named_parameters() {
        // A parameter the output does not depend on gets no gradient: zero, which the
        // finite differences must confirm.
        let analytic = p
            .grad()
            .map(|g| g.to_vec())
            .unwrap_or_else(|_| vec![0.0; p.numel()]);
        let values = base
            .get(&name)
            .expect("every parameter is in the state")
            .to_vec();
        for j in 0..values.len() {
            let moved = |by: f32| {
                let mut v = values.clone();
                v[j] += by;
                let mut state = base.clone();
                state.insert(name.clone(), Tensor::from_vec(v, p.shape()));
                loss(&state)
            };
            let numeric = ((moved(opts.eps) - moved(-opts.eps))
                / (2.0 * f64::from(opts.eps))) as f32;
            let excess = (analytic[j] - numeric).abs()
                / (opts.atol + opts.rtol * numeric.abs());
            if excess > 1.0 && worst.as_ref().is_none_or(|(e, _)| excess > *e) {
                worst = Some((
                    excess,
                    format!(
                        "{name}[{j}]: backward gives {}, finite differences give {numeric}",
                        analytic[j]
                    ),
                ));
            }
        }
    }
    module.load_state_dict(&base).unwrap();
    match worst {
        Some((_, message)) => Err(message),
        None => Ok(()),
    }
}

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
    let state = named(&["W_q.weight", "W_k.weight", "w_v.weight"], &inputs, 3);
    let attention = AdditiveAttention::from_state_dict(config, &state).unwrap();
    let run = |m: &AdditiveAttention, t: &[Tensor]| {
        m.forward(&t[0], &t[1], &t[2], &lens(&[2.0, 4.0]))
    };
    gradcheck(|t| run(&attention, t), &inputs[..3]).unwrap();
    gradcheck_parameters(&attention, |m| run(m, &inputs)).unwrap();
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
    let attention =
        BahdanauAttention::from_state_dict(config, &named(&BAHDANAU, &inputs, 3))
            .unwrap();
    let run = |m: &BahdanauAttention, t: &[Tensor], pick_weights: bool| {
        let (context, weights) = m.forward(&t[0], &t[1], &t[2], &mask);
        if pick_weights { weights } else { context }
    };
    for pick_weights in [false, true] {
        gradcheck(|t| run(&attention, t, pick_weights), &inputs[..3]).unwrap();
        gradcheck_parameters(&attention, |m| run(m, &inputs, pick_weights)).unwrap();
    }
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
    let attention =
        MultiHeadAttention::from_state_dict(config, &named(&names, &inputs, 2))
            .unwrap();
    let run = |m: &MultiHeadAttention, t: &[Tensor]| {
        m.forward(&t[0], &t[1], &t[1], &lens(&[2.0, 5.0]))
    };
    gradcheck(|t| run(&attention, t), &inputs[..2]).unwrap();
    gradcheck_parameters(&attention, |m| run(m, &inputs)).unwrap();
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
    let attention = MultiHeadAdditiveAttention::from_state_dict(
        config,
        &named(&names, &inputs, 3),
    )
    .unwrap();
    let run = |m: &MultiHeadAdditiveAttention, t: &[Tensor]| {
        m.forward(&t[0], &t[1], &t[2], &lens(&[3.0, 1.0])).0
    };
    gradcheck(|t| run(&attention, t), &inputs[..3]).unwrap();
    gradcheck_parameters(&attention, |m| run(m, &inputs)).unwrap();
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
        num_hiddens: 4,
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
    let layer =
        CausalSelfAttention::from_state_dict(config, &named(&names, &inputs, 1))
            .unwrap();
    let run = |m: &CausalSelfAttention, t: &[Tensor]| m.forward(&t[0], &Mask::none());
    gradcheck(|t| run(&layer, t), &inputs[..1]).unwrap();
    gradcheck_parameters(&layer, |m| run(m, &inputs)).unwrap();
}
