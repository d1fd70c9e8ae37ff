// ANCHOR: all
//! Reference solutions to the chapter 16 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::prelude::*;

// ANCHOR: layer_parameters
/// Exercise 1 (the page's section "The encoder and decoder layers"). The number of
/// parameters of one [`TransformerEncoderLayer`] of width `d = num_hiddens` whose
/// feed-forward network has `f = ffn_num_hiddens` hidden units: what
/// `num_parameters()` reports, counted by hand. The attention has four `d × d`
/// projections (`W_q`, `W_k`, `W_v`, `W_o`), each with a bias of `d`; the
/// feed-forward network is a `d → f` linear layer and an `f → d` one, with biases;
/// each of the two LayerNorms has a weight and a bias of `d`.
pub fn encoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let (d, f) = (num_hiddens, ffn_num_hiddens);
    let attention = 4 * (d * d + d);
    let ffn = (d * f + f) + (f * d + d);
    let norms = 2 * (d + d);
    attention + ffn + norms
}

/// Exercise 1, continued. The same count for one [`TransformerDecoderLayer`]: it has
/// a second attention (cross-attention to the encoder's output, the same four
/// projections) and a third LayerNorm.
pub fn decoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let d = num_hiddens;
    let cross_attention = 4 * (d * d + d);
    let third_norm = d + d;
    encoder_layer_parameters(num_hiddens, ffn_num_hiddens)
        + cross_attention
        + third_norm
}
// ANCHOR_END: layer_parameters

// ANCHOR: nucleus
/// Exercise 2 (the page's section "Generating text"). The candidates of top-p
/// (nucleus) sampling: with `p = softmax(logits / temperature)`, computed in f64,
/// the smallest set of ids, most likely first, whose probabilities sum to at least
/// `top_p`. Ids of equal probability are taken smaller id first. The set always
/// holds at least one id (the most likely), and never more than all of them, even
/// when rounding leaves the sum of all the probabilities a hair under `top_p = 1`.
/// The `temperature` is above 0; the logits may be large, as in `[0, 1000]`.
pub fn nucleus(logits: &[f32], temperature: f32, top_p: f32) -> Vec<usize> {
    assert!(!logits.is_empty(), "nucleus: no logits");
    assert!(
        temperature > 0.0,
        "nucleus: the temperature must be above 0"
    );
    // A stable softmax: subtract the largest logit, so that no exp overflows.
    let t = f64::from(temperature);
    let largest = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let exps: Vec<f64> = logits
        .iter()
        .map(|&x| ((f64::from(x) - f64::from(largest)) / t).exp())
        .collect();
    let total: f64 = exps.iter().sum();
    let probs: Vec<f64> = exps.iter().map(|e| e / total).collect();
    // The ids from the most likely down, ties broken towards the smaller id.
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
    let mut kept = Vec::new();
    let mut mass = 0.0;
    for id in order {
        kept.push(id);
        mass += probs[id];
        if mass >= f64::from(top_p) {
            break;
        }
    }
    kept
}
// ANCHOR_END: nucleus

// ANCHOR: residual_stream_growth
/// Exercise 3 (the page's section "Post-norm against pre-norm"). The size of the
/// residual stream, layer after layer. After `engine::manual_seed(seed)`, build
/// `layers` fresh [`CausalTransformerLayer`]s from one
/// [`TransformerLayerConfig`] (`num_hiddens` 32, `num_heads` 4,
/// `ffn_num_hiddens` 64, `dropout` 0, `norm_first` as given, the rest default) and
/// switch each to evaluation mode (`eval()`, from the `Module` trait); only then draw
/// the input `x = Tensor::randn([1, 16, 32])`. Run `x` through the layers one after
/// another (`forward` with `Mask::none()`: the layers are causal by themselves) and
/// return the root-mean-square `sqrt(mean(x²))` of the activations after each layer,
/// one number per layer. `use attention::prelude::*;` brings every name used here.
///
/// Post-norm ends every layer with a LayerNorm (weight 1 and bias 0 when fresh), so
/// each number is about 1. Pre-norm adds each sublayer's output to `x` and nothing
/// scales the sum back down, so the numbers grow with depth.
pub fn residual_stream_growth(
    layers: usize,
    norm_first: bool,
    seed: u64,
) -> Vec<f32> {
    engine::manual_seed(seed);
    let config = TransformerLayerConfig {
        num_hiddens: 32,
        num_heads: 4,
        ffn_num_hiddens: 64,
        dropout: 0.0,
        norm_first,
        ..Default::default()
    };
    let stack: Vec<CausalTransformerLayer> = (0..layers)
        .map(|_| {
            let mut layer = CausalTransformerLayer::new(config);
            layer.eval();
            layer
        })
        .collect();
    let mut x = Tensor::randn([1, 16, 32]);
    let mut sizes = Vec::with_capacity(layers);
    for layer in &stack {
        x = layer.forward(&x, &Mask::none());
        sizes.push(x.square().mean().sqrt().item());
    }
    sizes
}
// ANCHOR_END: residual_stream_growth
// ANCHOR_END: all
