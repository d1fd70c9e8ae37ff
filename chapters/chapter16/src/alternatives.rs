//! A second solution to each chapter 16 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::prelude::*;

/// Exercise 1, as the expanded polynomial: `4d² + 2df + 9d + f` (weights `4d² + 2df`,
/// biases `4d + f + d`, norms `4d`).
pub fn encoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let (d, f) = (num_hiddens, ffn_num_hiddens);
    4 * d * d + 2 * d * f + 9 * d + f
}

/// Exercise 1, continued, as its own polynomial: `8d² + 2df + 15d + f` (one more
/// attention, `4d² + 4d`, and one more norm, `2d`).
pub fn decoder_layer_parameters(num_hiddens: usize, ffn_num_hiddens: usize) -> usize {
    let (d, f) = (num_hiddens, ffn_num_hiddens);
    8 * d * d + 2 * d * f + 15 * d + f
}

/// Exercise 2, with the probabilities from a log-sum-exp, `exp(x/T − logsumexp(x/T))`,
/// and the loop stopping at the last id at the latest.
pub fn nucleus(logits: &[f32], temperature: f32, top_p: f32) -> Vec<usize> {
    assert!(!logits.is_empty(), "nucleus: no logits");
    assert!(
        temperature > 0.0,
        "nucleus: the temperature must be above 0"
    );
    let scaled: Vec<f64> = logits
        .iter()
        .map(|&x| f64::from(x) / f64::from(temperature))
        .collect();
    let top = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lse = top + scaled.iter().map(|s| (s - top).exp()).sum::<f64>().ln();
    let probs: Vec<f64> = scaled.iter().map(|s| (s - lse).exp()).collect();
    let mut ids: Vec<usize> = (0..logits.len()).collect();
    // A stable sort on the probability alone keeps equal ones in id order.
    ids.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
    let mut mass = 0.0;
    let mut count = 0;
    while count < ids.len() && (count == 0 || mass < f64::from(top_p)) {
        mass += probs[ids[count]];
        count += 1;
    }
    ids.truncate(count);
    ids
}

/// Exercise 3, with the layers and the input made in the stated order, the stack run by
/// a fold, and each root-mean-square summed on the host in `f64`.
pub fn residual_stream_growth(
    layers: usize,
    norm_first: bool,
    seed: u64,
) -> Vec<f32> {
    engine::manual_seed(seed);
    let mut stack = Vec::new();
    for _ in 0..layers {
        let mut layer = CausalTransformerLayer::new(TransformerLayerConfig {
            num_hiddens: 32,
            num_heads: 4,
            ffn_num_hiddens: 64,
            dropout: 0.0,
            norm_first,
            ..Default::default()
        });
        layer.eval();
        stack.push(layer);
    }
    let x = Tensor::randn([1, 16, 32]);
    let mut sizes = Vec::new();
    stack.iter().fold(x, |x, layer| {
        let y = layer.forward(&x, &Mask::none());
        let values = y.to_vec();
        let squares: f64 = values.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
        sizes.push((squares / values.len() as f64).sqrt() as f32);
        y
    });
    sizes
}
