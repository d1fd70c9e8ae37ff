//! The exercises of chapter 12, held to hand-computed values. They run against the
//! reference solutions by default and against `src/exercises.rs` with `--features
//! exercises`.

use attention::prelude::*;
use chapter09::DecoderAttention;
use chapter12::compare::branch_scores;
use chapter12::exercises::{Bilinear, mixed_weights, self_attention_multiply_adds};
use lesson::assert_close;

#[test]
fn exercise_1_counts_the_projections_once_per_token_and_the_pairs_n_squared_times() {
    // n = 4 tokens of d = 2: projections 2 · 4 · 2 · 2 = 32, pairs 4 · 4 · (2 + 2) =
    // 64.
    assert_eq!(self_attention_multiply_adds(4, 2, true), 96);
    assert_eq!(self_attention_multiply_adds(4, 2, false), 64);
    assert_eq!(self_attention_multiply_adds(1, 1, false), 2);
    // The projections dominate when d > n (2 · 64 · 1024² of them against
    // 2 · 64² · 1024 for the pairs), the pairs when n > d.
    let with = self_attention_multiply_adds(64, 1024, true);
    let without = self_attention_multiply_adds(64, 1024, false);
    assert_eq!((with - without, without), (134_217_728, 8_388_608));
    assert_eq!(self_attention_multiply_adds(1024, 64, false), 134_217_728);
}

#[test]
fn exercise_2_bilinear_scores_states_and_outputs_of_different_sizes() {
    // B = 2 states of 2 features, 3 outputs of 3 features; the second example has 2
    // real outputs. W = [[1, 0, 0], [0, 0, 2]].
    let w = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0, 0.0, 2.0], [2, 3]);
    let attention = Bilinear::from_weight(&w);
    let query = Tensor::from_vec(vec![1.0, 1.0, 0.0, 1.0], [2, 2]);
    let outputs = Tensor::from_vec(
        vec![
            1.0, 5.0, 0.0, /**/ 0.0, 5.0, 1.0, /**/ 0.0, 0.0,
            0.0, // example 0
            0.0, 1.0, 0.5, /**/ 2.0, 0.0, 0.0, /**/ 9.0, 9.0,
            9.0, // example 1
        ],
        [2, 3, 3],
    );
    let lens = Tensor::from_vec(vec![3.0, 2.0], [2]);
    let (context, weights) =
        attention.attend(&query, &outputs, &Mask::valid_lens(&lens));
    assert_eq!(
        (context.shape(), weights.shape()),
        (&[2, 3][..], &[2, 3][..])
    );
    // Example 0: W hⱼ = [1, 0], [0, 2], [0, 0]; s = [1, 1]: scores 1, 2, 0.
    let e = [1f32.exp(), 2f32.exp(), 1.0];
    let sum: f32 = e.iter().sum();
    // Example 1: W hⱼ = [0, 1], [2, 0]; s = [0, 1]: scores 1, 0 (the third is
    // padding).
    let f = [
        1f32.exp() / (1f32.exp() + 1.0),
        1.0 / (1f32.exp() + 1.0),
        0.0,
    ];
    let want: Vec<f32> = e.iter().map(|x| x / sum).chain(f).collect();
    assert_close(&weights.to_vec(), &want, 1e-6);
    let c0: Vec<f32> = (0..3)
        .map(|i| (0..3).map(|j| want[j] * outputs.to_vec()[j * 3 + i]).sum())
        .collect();
    let c1 = [2.0 * f[1], f[0], 0.5 * f[0]];
    assert_close(&context.to_vec(), &[c0, c1.to_vec()].concat(), 1e-5);
    assert_eq!(attention.num_parameters(), 6);
}

#[test]
fn exercise_2_bilinear_with_the_identity_is_the_unscaled_dot_product() {
    engine::manual_seed(3);
    let (query, outputs) = (Tensor::randn([2, 4]), Tensor::randn([2, 5, 4]));
    let eye: Vec<f32> = (0..16)
        .map(|i| if i % 5 == 0 { 1.0 } else { 0.0 })
        .collect();
    let attention = Bilinear::from_weight(&Tensor::from_vec(eye, [4, 4]));
    let mask = Mask::valid_lens(&Tensor::from_vec(vec![5.0, 3.0], [2]));
    let (_, weights) = attention.attend(&query, &outputs, &mask);
    let (_, want) = scaled_dot_product_attention_with(
        &query.unsqueeze(1),
        &outputs,
        &outputs,
        &SdpaOptions {
            mask,
            scale: Some(1.0),
            ..Default::default()
        },
    );
    assert_close(&weights.to_vec(), &want.squeeze(1).to_vec(), 1e-6);
}

#[test]
fn exercise_3_mixes_the_scores_before_one_softmax_over_the_real_keys() {
    // One row of 3 keys, 2 real: additive [ln 4, 0, 7], dot [0, ln 4, 7], g = 3/4:
    // mixed scores ln 4 · 3/4 and ln 4 · 1/4, weights 4^(1/2) : 1 over the two.
    let additive = Tensor::from_vec(vec![4f32.ln(), 0.0, 7.0], [1, 3]);
    let dot = Tensor::from_vec(vec![0.0, 4f32.ln(), 7.0], [1, 3]);
    let w = mixed_weights(&additive, &dot, 0.75, &[2]);
    assert_eq!(w.shape(), &[1, 3]);
    assert_close(&w.to_vec(), &[2.0 / 3.0, 1.0 / 3.0, 0.0], 1e-6);
    // The limiting cases: g = 1 is the additive scores' softmax, g = 0 the dot's.
    assert_close(
        &mixed_weights(&additive, &dot, 1.0, &[2]).to_vec(),
        &[0.8, 0.2, 0.0],
        1e-6,
    );
    assert_close(
        &mixed_weights(&additive, &dot, 0.0, &[2]).to_vec(),
        &[0.2, 0.8, 0.0],
        1e-6,
    );
}

#[test]
fn exercise_3_gives_the_hybrid_module_s_own_weights() {
    engine::manual_seed(5);
    let hybrid = HybridGatedAttention::new(HybridGatedAttentionConfig {
        query_size: 6,
        key_size: 6,
        additive_hiddens: 3,
        dot_hiddens: 8,
        ..Default::default()
    });
    let (state, outputs) = (Tensor::randn([2, 6]), Tensor::randn([2, 4, 6]));
    let lens = Tensor::from_vec(vec![4.0, 2.0], [2]);
    hybrid.forward(
        &state.unsqueeze(1),
        &outputs,
        &outputs,
        &Mask::valid_lens(&lens),
    );
    let module = hybrid.last_attention_weights().unwrap().squeeze(1);
    let (additive, dot) = branch_scores(&hybrid, &state, &outputs);
    let g = 0.5; // a scalar gate starts at sigmoid(0)
    let w = mixed_weights(&additive.squeeze(1), &dot.squeeze(1), g, &[4, 2]);
    assert_close(&w.to_vec(), &module.to_vec(), 1e-6);
}
