//! `HybridGatedAttention`: its two limiting cases against the modules they must equal,
//! gradients by finite differences (inputs and every parameter, both learned gates), the
//! gate it reports, masks, its parameter names and its refused settings.

use attention::prelude::*;
use engine::gradcheck::gradcheck;
use engine::nn::StateDict;

use crate::common::panic_message;

const SIZES: HybridGatedAttentionConfig = HybridGatedAttentionConfig {
    query_size: 5,
    key_size: 3,
    additive_hiddens: 4,
    dot_hiddens: 6,
    gate: Gate::Scalar,
    dropout: 0.0,
    fill: Fill::Safe,
};

fn inputs(seed: u64) -> (Tensor, Tensor, Tensor) {
    manual_seed(seed);
    (
        Tensor::randn([2, 4, 5]),
        Tensor::randn([2, 6, 3]),
        Tensor::randn([2, 6, 2]),
    )
}

fn largest_difference(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn a_gate_fixed_at_one_is_additive_attention_with_the_same_weights() {
    manual_seed(1);
    let hybrid = HybridGatedAttention::new(HybridGatedAttentionConfig {
        gate: Gate::Fixed(1.0),
        ..SIZES
    });
    let mut state = StateDict::new();
    for name in ["W_q.weight", "W_k.weight", "w_v.weight"] {
        state.insert(name, hybrid.state_dict().get(name).unwrap().clone());
    }
    let additive = AdditiveAttention::from_state_dict(
        AdditiveAttentionConfig {
            query_size: 5,
            key_size: 3,
            num_hiddens: 4,
            ..Default::default()
        },
        &state,
    )
    .unwrap();
    let (q, k, v) = inputs(2);
    let mask = Mask::valid_lens(&Tensor::from_vec(vec![4.0, 2.0], [2]));
    let a = hybrid.forward(&q, &k, &v, &mask);
    let b = additive.forward(&q, &k, &v, &mask);
    assert_eq!(a.to_vec(), b.to_vec());
    assert_eq!(
        hybrid.last_attention_weights().unwrap().to_vec(),
        additive.last_attention_weights().unwrap().to_vec()
    );
    assert_eq!(hybrid.last_gate().unwrap().to_vec(), vec![1.0]);
}

#[test]
fn a_gate_fixed_at_zero_is_scaled_dot_product_attention_on_the_dot_projections() {
    manual_seed(3);
    let hybrid = HybridGatedAttention::new(HybridGatedAttentionConfig {
        gate: Gate::Fixed(0.0),
        ..SIZES
    });
    let state = hybrid.state_dict();
    let (q, k, v) = inputs(4);
    let mask = Mask::causal_with_offset(1);
    let out = hybrid.forward(&q, &k, &v, &mask);
    let projected_q = q.matmul_t(state.get("W_q_dot.weight").unwrap());
    let projected_k = k.matmul_t(state.get("W_k_dot.weight").unwrap());
    let (expected, weights) =
        scaled_dot_product_attention(&projected_q, &projected_k, &v, &mask);
    assert!(largest_difference(&out, &expected) <= 1e-6);
    assert!(
        largest_difference(&hybrid.last_attention_weights().unwrap(), &weights)
            <= 1e-6
    );
}

#[test]
fn a_gate_in_between_mixes_the_scores_before_the_softmax() {
    // With g = 0.25 the weights are softmax(0.25 · additive + 0.75 · dot), which is
    // neither mixture of the two weights.
    manual_seed(5);
    let mixed = HybridGatedAttention::new(HybridGatedAttentionConfig {
        gate: Gate::Fixed(0.25),
        ..SIZES
    });
    let state = mixed.state_dict();
    let at = |g: f32| {
        let m = HybridGatedAttention::from_state_dict(
            HybridGatedAttentionConfig {
                gate: Gate::Fixed(g),
                ..SIZES
            },
            &state,
        )
        .unwrap();
        let (q, k, v) = inputs(6);
        m.forward(&q, &k, &v, &Mask::none());
        m.last_attention_weights().unwrap()
    };
    let (w_add, w_dot, w_mix) = (at(1.0), at(0.0), at(0.25));
    let scores = (w_add.log() * 0.25 + w_dot.log() * 0.75).softmax(-1);
    assert!(largest_difference(&w_mix, &scores) <= 1e-5);
    let averaged = w_add * 0.25 + w_dot * 0.75;
    assert!(largest_difference(&w_mix, &averaged) > 1e-3);
}

#[test]
fn gradients_of_the_inputs_agree_with_finite_differences_for_both_learned_gates() {
    for gate in [Gate::Scalar, Gate::PerQuery] {
        manual_seed(7);
        let module =
            HybridGatedAttention::new(HybridGatedAttentionConfig { gate, ..SIZES });
        let (q, k, v) = inputs(8);
        let mask = Mask::valid_lens(&Tensor::from_vec(vec![6.0, 3.0], [2]));
        gradcheck(|x| module.forward(&x[0], &x[1], &x[2], &mask), &[q, k, v])
            .unwrap_or_else(|e| panic!("{gate:?}: {e}"));
    }
}

#[test]
fn gradients_of_every_parameter_agree_with_finite_differences() {
    for gate in [Gate::Scalar, Gate::PerQuery] {
        manual_seed(9);
        let module =
            HybridGatedAttention::new(HybridGatedAttentionConfig { gate, ..SIZES });
        let (q, k, v) = inputs(10);
        let loss = || module.forward(&q, &k, &v, &Mask::none()).square().sum();
        module.zero_grad();
        loss().backward();
        for (name, p) in module.named_parameters() {
            let analytic = p.grad().unwrap().to_vec();
            let original = p.to_vec();
            // Central differences on a few entries of each parameter.
            for i in (0..original.len()).step_by(original.len().div_ceil(3)) {
                let at = |delta: f32| {
                    let mut shifted = original.clone();
                    shifted[i] += delta;
                    no_grad(|| p.assign(&Tensor::from_vec(shifted, p.shape())));
                    f64::from(no_grad(|| loss().item()))
                };
                let h = 1e-2;
                let numeric = (at(h) - at(-h)) / (2.0 * f64::from(h));
                no_grad(|| p.assign(&Tensor::from_vec(original.clone(), p.shape())));
                let got = f64::from(analytic[i]);
                assert!(
                    (got - numeric).abs() <= 2e-2 * numeric.abs().max(1.0),
                    "{gate:?}, {name}[{i}]: autograd {got}, finite differences {numeric}"
                );
            }
        }
        let names: Vec<String> = module
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let gate_names: &[&str] = match gate {
            Gate::Scalar => &["gate_logit"],
            _ => &["gate.weight", "gate.bias"],
        };
        let mut expected = vec![
            "W_q.weight",
            "W_k.weight",
            "w_v.weight",
            "W_q_dot.weight",
            "W_k_dot.weight",
        ];
        expected.extend(gate_names);
        assert_eq!(names, expected);
    }
}

#[test]
fn the_gate_starts_at_a_half_and_a_per_query_gate_has_one_value_per_query() {
    manual_seed(11);
    let (q, k, v) = inputs(12);
    let scalar = HybridGatedAttention::new(SIZES);
    assert!(scalar.last_gate().is_none());
    scalar.forward(&q, &k, &v, &Mask::none());
    assert_eq!(scalar.last_gate().unwrap().to_vec(), vec![0.5]);
    let per_query = HybridGatedAttention::new(HybridGatedAttentionConfig {
        gate: Gate::PerQuery,
        ..SIZES
    });
    per_query.forward(&q, &k, &v, &Mask::none());
    let g = per_query.last_gate().unwrap();
    assert_eq!(g.shape(), &[2, 4]);
    assert!(g.to_vec().iter().all(|&x| x > 0.0 && x < 1.0));
    // The per-query gate is sigmoid(gate · q + bias), query by query.
    let state = per_query.state_dict();
    let by_hand = (q.matmul_t(state.get("gate.weight").unwrap())
        + state.get("gate.bias").unwrap())
    .sigmoid()
    .squeeze(-1);
    assert!(largest_difference(&g, &by_hand) <= 1e-6);
}

#[test]
fn a_query_that_sees_no_key_gets_zeros_with_the_safe_fill() {
    manual_seed(13);
    let module = HybridGatedAttention::new(SIZES);
    let (q, k, v) = inputs(14);
    let lens = Tensor::from_vec(vec![0.0, 2.0], [2]);
    let out = module
        .forward(&q, &k, &v, &Mask::valid_lens(&lens))
        .to_vec();
    assert!(out[..8].iter().all(|&x| x == 0.0));
    let w = module.last_attention_weights().unwrap().to_vec();
    // Second example: keys 2.. are masked.
    assert!((0..4).all(|qi| {
        w[24 + qi * 6 + 2..24 + qi * 6 + 6]
            .iter()
            .all(|&x| x == 0.0)
    }));
}

#[test]
fn settings_it_cannot_use_are_refused() {
    let message = panic_message(|| {
        HybridGatedAttention::new(HybridGatedAttentionConfig {
            gate: Gate::Fixed(1.5),
            ..SIZES
        });
    });
    assert!(
        message.contains("HybridGatedAttention::new")
            && message.contains("[0, 1]")
            && message.contains("1.5"),
        "{message}"
    );
    let message = panic_message(|| {
        HybridGatedAttention::new(HybridGatedAttentionConfig {
            dot_hiddens: 0,
            ..SIZES
        });
    });
    assert!(message.contains("dot_hiddens"), "{message}");
    let message = panic_message(|| {
        let module = HybridGatedAttention::new(SIZES);
        module.forward(
            &Tensor::zeros([2, 4, 3]),
            &Tensor::zeros([2, 6, 3]),
            &Tensor::zeros([2, 6, 2]),
            &Mask::none(),
        );
    });
    assert!(message.contains("HybridGatedAttention"), "{message}");
    // A state without the gate's logit is reported by name.
    let mut state = HybridGatedAttention::new(SIZES).state_dict();
    state.remove("gate_logit");
    let error = HybridGatedAttention::from_state_dict(SIZES, &state).unwrap_err();
    assert!(error.to_string().contains("gate_logit"), "{error}");
}
