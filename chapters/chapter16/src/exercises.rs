//! Your solutions to the chapter 16 exercises. Replace each `todo!()` with your code,
//! then check it with `cargo test -p chapter16 --features exercises` (the same tests
//! the reference solutions pass). The page's "Exercises" section explains each one.

/// Exercise 1 (the page's section "The encoder and decoder layers"). The number of
/// parameters of one [`TransformerEncoderLayer`](attention::TransformerEncoderLayer)
/// of width `d = num_hiddens` whose feed-forward network has `f = ffn_num_hiddens`
/// hidden units: what `num_parameters()` reports, counted by hand. The attention
/// has four `d × d` projections (`W_q`, `W_k`, `W_v`, `W_o`), each with a bias of
/// `d`; the feed-forward network is a `d → f` linear layer and an `f → d` one, with
/// biases; each of the two LayerNorms has a weight and a bias of `d`.
pub fn encoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let _ = (num_hiddens, ffn_num_hiddens);
    todo!(
        "exercise 1: add up the attention's four projections, the FFN and two norms"
    )
}

/// Exercise 1, continued. The same count for one
/// [`TransformerDecoderLayer`](attention::TransformerDecoderLayer): it has a second
/// attention (cross-attention to the encoder's output, the same four projections) and
/// a third LayerNorm.
pub fn decoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let _ = (num_hiddens, ffn_num_hiddens);
    todo!("exercise 1: the encoder layer's count, one more attention, one more norm")
}

/// Exercise 2 (the page's section "Generating text"). The candidates of top-p
/// (nucleus) sampling: with `p = softmax(logits / temperature)`, computed in f64,
/// the smallest set of ids, most likely first, whose probabilities sum to at least
/// `top_p`. Ids of equal probability are taken smaller id first. The set always
/// holds at least one id (the most likely), and never more than all of them, even
/// when rounding leaves the sum of all the probabilities a hair under `top_p = 1`.
/// The `temperature` is above 0; the logits may be large, as in `[0, 1000]`.
pub fn nucleus(logits: &[f32], temperature: f32, top_p: f32) -> Vec<usize> {
    let _ = (logits, temperature, top_p);
    todo!(
        "exercise 2: a stable f64 softmax, sort the ids, keep them until top_p is met"
    )
}

/// Exercise 3 (the page's section "Post-norm against pre-norm"). The size of the
/// residual stream, layer after layer. After `engine::manual_seed(seed)`, build
/// `layers` fresh [`CausalTransformerLayer`](attention::CausalTransformerLayer)s from
/// one [`TransformerLayerConfig`](attention::TransformerLayerConfig) (`num_hiddens`
/// 32, `num_heads` 4, `ffn_num_hiddens` 64, `dropout` 0, `norm_first` as given, the
/// rest default) and switch each to evaluation mode (`eval()`, from the `Module`
/// trait); only then draw the input `x = Tensor::randn([1, 16, 32])`. Run `x` through
/// the layers one after another (`forward` with `Mask::none()`: the layers are causal
/// by themselves) and return the root-mean-square `sqrt(mean(x²))` of the activations
/// after each layer, one number per layer. `use attention::prelude::*;` brings every
/// name used here.
///
/// Post-norm ends every layer with a LayerNorm (weight 1 and bias 0 when fresh), so
/// each number is about 1. Pre-norm adds each sublayer's output to `x` and nothing
/// scales the sum back down, so the numbers grow with depth.
pub fn residual_stream_growth(
    layers: usize,
    norm_first: bool,
    seed: u64,
) -> Vec<f32> {
    let _ = (layers, norm_first, seed);
    todo!("exercise 3: seed, build the layers, draw x, then one RMS after each layer")
}
