//! The exercises of chapter 16, held to hand-computed values and to the library's own
//! layers. They run against the reference solutions by default and against
//! `src/exercises.rs` with `--features exercises`.

use attention::prelude::*;
use chapter16::exercises::{
    decoder_layer_parameters, encoder_layer_parameters, nucleus,
    residual_stream_growth,
};

/// A layer's settings of width `d`, `heads` heads and `f` hidden units.
fn config(d: usize, heads: usize, f: usize) -> TransformerLayerConfig {
    TransformerLayerConfig {
        num_hiddens: d,
        num_heads: heads,
        ffn_num_hiddens: f,
        ..Default::default()
    }
}

#[test]
fn exercise_1_counts_an_encoder_layer_s_parameters() {
    // d = 4, f = 8: attention 4 · (16 + 4) = 80, FFN 32 + 8 + 32 + 4 = 76, norms 16.
    assert_eq!(encoder_layer_parameters(4, 8), 172);
    // The paper's base layer (d = 512, f = 2048), as PyTorch counts
    // nn.TransformerEncoderLayer(512, 8): 1_050_624 + 2_099_712 + 2_048.
    assert_eq!(encoder_layer_parameters(512, 2048), 3_152_384);
    // The number of heads changes nothing: the heads split the same projections.
    for (d, heads, f) in [(8, 2, 16), (32, 4, 64), (12, 3, 5), (64, 1, 256)] {
        engine::manual_seed(0);
        let layer = TransformerEncoderLayer::new(config(d, heads, f));
        assert_eq!(
            encoder_layer_parameters(d, f),
            layer.num_parameters(),
            "d = {d}, f = {f}"
        );
    }
}

#[test]
fn exercise_1_counts_a_decoder_layer_s_parameters() {
    // d = 4, f = 8: the encoder layer's 172, cross-attention 80, a third norm 8.
    assert_eq!(decoder_layer_parameters(4, 8), 260);
    // nn.TransformerDecoderLayer(512, 8): 3_152_384 + 1_050_624 + 1_024.
    assert_eq!(decoder_layer_parameters(512, 2048), 4_204_032);
    for (d, heads, f) in [(8, 2, 16), (32, 4, 64), (12, 3, 5), (64, 1, 256)] {
        engine::manual_seed(0);
        let layer = TransformerDecoderLayer::new(config(d, heads, f));
        assert_eq!(
            decoder_layer_parameters(d, f),
            layer.num_parameters(),
            "d = {d}, f = {f}"
        );
    }
}

#[test]
fn exercise_2_keeps_the_most_likely_ids_until_their_mass_reaches_top_p() {
    // Probabilities 0.5, 0.3, 0.2: running sums 0.5, 0.8, 1.
    let logits = [0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()];
    assert_eq!(nucleus(&logits, 1.0, 0.4), vec![0]);
    assert_eq!(nucleus(&logits, 1.0, 0.6), vec![0, 1]);
    assert_eq!(nucleus(&logits, 1.0, 0.79), vec![0, 1]);
    assert_eq!(nucleus(&logits, 1.0, 0.81), vec![0, 1, 2]);
    // The sum of all three may round a hair under 1: still all three, no more.
    assert_eq!(nucleus(&logits, 1.0, 1.0), vec![0, 1, 2]);
    // Most likely first, whatever the ids' order: 0.5 is id 1, then 0.3 is id 2.
    let shuffled = [0.2f32.ln(), 0.5f32.ln(), 0.3f32.ln()];
    assert_eq!(nucleus(&shuffled, 1.0, 0.6), vec![1, 2]);
    // Only the differences of the logits matter: adding 7 to each changes nothing.
    let shifted: Vec<f32> = logits.iter().map(|x| x + 7.0).collect();
    assert_eq!(nucleus(&shifted, 1.0, 0.6), vec![0, 1]);
}

#[test]
fn exercise_2_sharpens_the_nucleus_below_temperature_1_and_widens_it_above() {
    let logits = [0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()];
    // Temperature 1/2 squares the probabilities: 0.25, 0.09, 0.04 over 0.38, so
    // 0.658, 0.237, 0.105; id 0 alone reaches 0.6.
    assert_eq!(nucleus(&logits, 0.5, 0.6), vec![0]);
    assert_eq!(nucleus(&logits, 0.5, 0.85), vec![0, 1]);
    assert_eq!(nucleus(&logits, 0.5, 0.9), vec![0, 1, 2]);
    // Temperature 2 takes their square roots: 0.415, 0.322, 0.263; the first two
    // sum to 0.737, short of the 0.75 they reach at temperature 1.
    assert_eq!(nucleus(&logits, 2.0, 0.4), vec![0]);
    assert_eq!(nucleus(&logits, 2.0, 0.42), vec![0, 1]);
    assert_eq!(nucleus(&logits, 1.0, 0.75), vec![0, 1]);
    assert_eq!(nucleus(&logits, 2.0, 0.75), vec![0, 1, 2]);
}

#[test]
fn exercise_2_breaks_ties_towards_the_smaller_id_and_keeps_at_least_one() {
    // Four equal logits: 0.25 each; 0.25 + 0.25 reaches 0.5 exactly.
    assert_eq!(nucleus(&[0.0; 4], 1.0, 0.5), vec![0, 1]);
    assert_eq!(nucleus(&[0.0; 4], 1.0, 0.51), vec![0, 1, 2]);
    // Ids 1 and 2 tie for the top, each e³ / (2e³ + e + 1) ≈ 0.458.
    let logits = [1.0, 3.0, 3.0, 0.0];
    assert_eq!(nucleus(&logits, 1.0, 0.4), vec![1]);
    assert_eq!(nucleus(&logits, 1.0, 0.9), vec![1, 2]);
    assert_eq!(nucleus(&logits, 1.0, 0.95), vec![1, 2, 0]);
    // A tiny or zero top_p keeps just the most likely id.
    assert_eq!(nucleus(&logits, 1.0, 1e-9), vec![1]);
    assert_eq!(nucleus(&logits, 1.0, 0.0), vec![1]);
    assert_eq!(nucleus(&[2.0, -1.0, 4.5], 0.1, 1e-9), vec![2]);
    assert_eq!(nucleus(&[3.0], 1.0, 0.9), vec![0]);
}

#[test]
fn exercise_2_survives_logits_whose_exponentials_overflow() {
    // exp(1000) is infinite even in f64: the softmax must subtract the largest logit.
    assert_eq!(nucleus(&[0.0, 1000.0, -1000.0], 1.0, 0.99), vec![1]);
    assert_eq!(nucleus(&[1000.0, 1000.0, 0.0], 1.0, 0.9), vec![0, 1]);
}

#[test]
fn exercise_3_post_norm_keeps_the_residual_stream_at_size_1() {
    for seed in [0, 1, 2] {
        let sizes = residual_stream_growth(8, false, seed);
        assert_eq!(sizes.len(), 8);
        // Each layer ends with a LayerNorm whose weight is 1 and bias 0: every row
        // has mean 0 and variance 1 (less a trace of eps), so the RMS is 1.
        for (layer, size) in sizes.iter().enumerate() {
            assert!(
                (size - 1.0).abs() < 1e-3,
                "seed {seed}, layer {layer}: {size}"
            );
        }
    }
    assert_eq!(residual_stream_growth(3, false, 0).len(), 3);
    assert!(residual_stream_growth(0, false, 0).is_empty());
}

#[test]
fn exercise_3_pre_norm_lets_the_residual_stream_grow_with_depth() {
    for seed in [0, 1, 2] {
        let sizes = residual_stream_growth(8, true, seed);
        assert_eq!(sizes.len(), 8);
        // Every layer adds to x and none scales it back: the RMS rises each time.
        for pair in sizes.windows(2) {
            assert!(pair[1] > pair[0], "seed {seed}: {sizes:?}");
        }
        assert!(sizes[7] > 1.2 * sizes[0], "seed {seed}: {sizes:?}");
    }
    // The same seed, the same numbers.
    assert_eq!(
        residual_stream_growth(4, true, 5),
        residual_stream_growth(4, true, 5)
    );
}
