//! The two ways of computing additive scores, fused and broadcast, give the same module:
//! the same outputs, weights and gradients, with very different memory; with either
//! activation of the energies, and the activation reaches every additive module.

use attention::prelude::*;
use engine::memory;

/// Output, weights and the gradient of every parameter and input, for one scoring.
fn run(scoring: AdditiveScoring) -> Vec<(String, Vec<f32>)> {
    run_with(scoring, Activation::Tanh)
}

/// [`run`] with the given activation of the energies.
fn run_with(
    scoring: AdditiveScoring,
    activation: Activation,
) -> Vec<(String, Vec<f32>)> {
    engine::manual_seed(3);
    let module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 12,
        key_size: 7,
        num_hiddens: 20,
        scoring,
        activation,
        ..Default::default()
    });
    let queries = Tensor::randn([3, 5, 12]).requires_grad_();
    let keys = Tensor::randn([3, 9, 7]).requires_grad_();
    let values = Tensor::randn([3, 9, 4]).requires_grad_();
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![9.0, 4.0, 1.0], [3]));
    let output = module.forward(&queries, &keys, &values, &lens);
    let weights = module.last_attention_weights().unwrap();
    (output.square().sum() + (&weights * &Tensor::randn([3, 5, 9])).sum()).backward();
    let mut seen = vec![
        ("output".to_string(), output.to_vec()),
        ("weights".to_string(), weights.to_vec()),
    ];
    for (name, t) in [("queries", &queries), ("keys", &keys), ("values", &values)] {
        seen.push((format!("d {name}"), t.grad().unwrap().to_vec()));
    }
    for (name, p) in module.named_parameters() {
        seen.push((format!("d {name}"), p.grad().unwrap().to_vec()));
    }
    seen
}

#[test]
fn fused_and_broadcast_scoring_agree_in_values_and_gradients() {
    assert_agree(run(AdditiveScoring::Fused), run(AdditiveScoring::Broadcast));
}

#[test]
fn fused_and_broadcast_scoring_agree_with_relu_energies() {
    let fused = run_with(AdditiveScoring::Fused, Activation::Relu);
    let broadcast = run_with(AdditiveScoring::Broadcast, Activation::Relu);
    assert_agree(fused.clone(), broadcast);
    // And ReLU is not tanh: the same module and inputs give other weights.
    let tanh = run(AdditiveScoring::Fused);
    assert_ne!(fused[1].1, tanh[1].1, "the weights under relu and tanh");
}

#[track_caller]
fn assert_agree(fused: Vec<(String, Vec<f32>)>, broadcast: Vec<(String, Vec<f32>)>) {
    assert_eq!(fused.len(), broadcast.len());
    for ((name, a), (_, b)) in fused.iter().zip(&broadcast) {
        let scale = b.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-5 * scale,
            "{name}: largest difference {worst:e}"
        );
    }
}

/// The peak memory of one forward and backward pass, above what was live before.
fn peak(scoring: AdditiveScoring, q: usize, k: usize, h: usize) -> usize {
    engine::manual_seed(0);
    let module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 8,
        key_size: 8,
        num_hiddens: h,
        scoring,
        ..Default::default()
    });
    let queries = Tensor::randn([2, q, 8]);
    let keys = Tensor::randn([2, k, 8]);
    memory::reset_peak();
    let before = memory::live_bytes();
    module
        .forward(&queries, &keys, &keys, &Mask::none())
        .sum()
        .backward();
    memory::peak_bytes() - before
}

#[test]
fn fused_scoring_never_holds_the_broadcast_tensor() {
    let (q, k, h) = (32, 48, 64);
    let broadcast_tensor = 2 * q * k * h * 4;
    let fused = peak(AdditiveScoring::Fused, q, k, h);
    let broadcast = peak(AdditiveScoring::Broadcast, q, k, h);
    assert!(
        broadcast >= broadcast_tensor,
        "the broadcast form holds [B, Q, K, h]: {broadcast} < {broadcast_tensor}"
    );
    assert!(
        fused < broadcast_tensor / 4,
        "the fused form holds no [B, Q, K, h] tensor: {fused} bytes"
    );
}

/// The scores a module's weights come from, recomputed by hand with `f`:
/// `softmax(v · f(W_q q + W_k k))` for the single-query form.
#[test]
fn bahdanau_and_multi_head_additive_use_the_configured_activation() {
    for activation in [Activation::Tanh, Activation::Relu] {
        engine::manual_seed(5);
        let config = BahdanauAttentionConfig {
            query_size: 6,
            key_size: 4,
            value_size: 3,
            num_hiddens: 8,
            activation,
            ..Default::default()
        };
        let module = BahdanauAttention::new(config);
        let query = Tensor::randn([2, 6]);
        let keys = Tensor::randn([2, 5, 4]);
        let values = Tensor::randn([2, 5, 3]);
        module.forward(&query, &keys, &values, &Mask::none());
        let got = module.last_attention_weights().unwrap();
        let state = module.state_dict();
        let w = |name: &str| state.get(name).unwrap().clone();
        let q = query.matmul_t(&w("W_q.weight")) + w("W_q.bias");
        let k = keys.matmul_t(&w("W_k.weight")) + w("W_k.bias");
        let energies =
            activation.apply(&(q.unsqueeze(1).unsqueeze(2) + k.unsqueeze(1)));
        let want = energies
            .matmul(&w("v").unsqueeze(1))
            .squeeze(-1)
            .softmax(-1);
        let worst = got
            .to_vec()
            .iter()
            .zip(want.to_vec())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-6, "{activation}: {worst:e}");
    }
    // Every head takes the setting: the same weights (same seed) attend differently.
    let heads_output = |activation| {
        engine::manual_seed(6);
        let heads =
            MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
                query_size: 6,
                key_size: 4,
                value_size: 3,
                num_hiddens: 8,
                num_heads: 2,
                activation,
                ..Default::default()
            });
        let (query, keys) = (Tensor::randn([2, 6]), Tensor::randn([2, 5, 4]));
        let values = Tensor::randn([2, 5, 3]);
        heads.forward(&query, &keys, &values, &Mask::none());
        heads.last_attention_weights().unwrap().to_vec()
    };
    assert_ne!(
        heads_output(Activation::Tanh),
        heads_output(Activation::Relu)
    );
}
