//! The two ways of computing additive scores, fused and broadcast, give the same module:
//! the same outputs, weights and gradients, with very different memory.

use attention::prelude::*;
use engine::memory;

/// Output, weights and the gradient of every parameter and input, for one scoring.
fn run(scoring: AdditiveScoring) -> Vec<(String, Vec<f32>)> {
    engine::manual_seed(3);
    let module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 12,
        key_size: 7,
        num_hiddens: 20,
        scoring,
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
    let fused = run(AdditiveScoring::Fused);
    let broadcast = run(AdditiveScoring::Broadcast);
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
