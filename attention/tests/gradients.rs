//! Finite-difference checks of every module's gradients, with respect to its inputs and
//! every parameter.

use attention::{
    AdditiveAttention, BahdanauAttention, CausalSelfAttention, DotProductAttention, Fill, Mask,
    MultiHeadAdditiveAttention, MultiHeadAttention, masked_softmax, scaled_dot_product_attention,
};
use engine::Tensor;
use engine::gradcheck::gradcheck;
use engine::nn::Linear;

fn lens(values: &[f32]) -> Mask {
    Mask::ValidLens(Tensor::from_vec(values.to_vec(), &[values.len()]))
}

fn randn(shape: &[usize]) -> Tensor {
    Tensor::randn(shape) * 0.5
}

#[test]
fn masked_softmax_gradient_under_every_fill() {
    engine::manual_seed(1);
    let scores = randn(&[2, 3, 4]);
    for fill in [Fill::Safe, Fill::D2l, Fill::Constant(-1e9)] {
        for mask in [Mask::None, lens(&[2.0, 0.0]), Mask::causal()] {
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
    for mask in [Mask::None, lens(&[3.0, 5.0])] {
        gradcheck(
            |t| scaled_dot_product_attention(&t[0], &t[1], &t[2], &mask, Fill::Safe, None).0,
            &[q.clone(), k.clone(), v.clone()],
        )
        .unwrap();
    }
    let square = randn(&[2, 4, 4]);
    gradcheck(
        |t| scaled_dot_product_attention(&t[0], &t[0], &t[0], &Mask::causal(), Fill::Safe, None).0,
        &[square],
    )
    .unwrap();
}

#[test]
fn dot_product_module_gradient() {
    engine::manual_seed(3);
    let attention = DotProductAttention::new(0.0);
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
    gradcheck(
        |t| {
            AdditiveAttention::from_weights(&t[3], &t[4], &t[5], 0.0).forward(
                &t[0],
                &t[1],
                &t[2],
                &lens(&[2.0, 4.0]),
            )
        },
        &inputs,
    )
    .unwrap();
}

fn linear(t: &[Tensor], w: usize, b: usize) -> Linear {
    Linear::from_weights(&t[w], Some(&t[b]))
}

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
    let mask = Mask::Keep(Tensor::from_vec(
        vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
        &[2, 3],
    ));
    let run = |t: &[Tensor], pick_weights: bool| {
        let attention = BahdanauAttention::from_parts(
            linear(t, 3, 4),
            linear(t, 5, 6),
            t[7].clone(),
            linear(t, 8, 9),
        );
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
    gradcheck(
        |t| {
            let linears = [
                linear(t, 2, 3),
                linear(t, 4, 5),
                linear(t, 6, 7),
                linear(t, 8, 9),
            ];
            MultiHeadAttention::from_linears(linears, 2, 0.0).forward(
                &t[0],
                &t[1],
                &t[1],
                &lens(&[2.0, 5.0]),
            )
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
    gradcheck(
        |t| {
            let heads = (0..2)
                .map(|h| {
                    let base = 3 + 7 * h;
                    BahdanauAttention::from_parts(
                        linear(t, base, base + 1),
                        linear(t, base + 2, base + 3),
                        t[base + 4].clone(),
                        linear(t, base + 5, base + 6),
                    )
                })
                .collect();
            MultiHeadAdditiveAttention::from_parts(heads, linear(t, 17, 18))
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
    gradcheck(
        |t| {
            let linears = [
                linear(t, 1, 2),
                linear(t, 3, 4),
                linear(t, 5, 6),
                linear(t, 7, 8),
            ];
            CausalSelfAttention::from_linears(linears, 2).forward(&t[0])
        },
        &inputs,
    )
    .unwrap();
}
