//! Self-attention and positions: what the layer of this chapter computes, why it
//! needs to be told where each token stands, and the two ways of telling it.
//!
//! - [`permutation_gap`]: self-attention without positions is
//!   permutation-equivariant: shuffling the tokens shuffles the outputs the same way,
//!   and nothing else changes.
//! - [`sinusoidal_encoding`]: the fixed encoding of "Attention Is All You Need", and
//!   [`relative_dot_products`]: its dot products depend only on the distance between
//!   two positions; [`exercises::shift_encoding`](crate::exercises::shift_encoding)
//!   (exercise 4) moves an encoding by `k` positions with a rotation.
//! - [`LayerCost`]: self-attention beside a recurrent and a convolutional layer, as
//!   operation counts, sequential steps and path lengths.

use attention::prelude::*;

// ANCHOR: permutation_gap
/// The largest difference between `layer(P x)` and `P layer(x)`, for `x: [1, T, d]`
/// and the permutation `perm` of its `T` tokens (`P x` takes token `perm[i]` to place
/// `i`). For a layer that sees no positions and no mask, 0 up to rounding: it cannot
/// tell the order of its input.
pub fn permutation_gap(
    layer: &impl Fn(&Tensor) -> Tensor,
    x: &Tensor,
    perm: &[usize],
) -> f32 {
    let index =
        Tensor::from_vec(perm.iter().map(|&p| p as f32).collect(), [perm.len()]);
    let permuted_then_layer = layer(&x.index_select(1, &index));
    let layer_then_permuted = layer(x).index_select(1, &index);
    crate::max_abs_diff(&permuted_then_layer, &layer_then_permuted)
}
// ANCHOR_END: permutation_gap

// ANCHOR: sinusoidal_encoding
/// The frequency of pair `i` of a sinusoidal encoding of width `d`: `ωᵢ =
/// 10000^(−2i/d)`, from one turn per 2π positions (`i = 0`) down to one per 2π·10000.
pub fn frequency(i: usize, d: usize) -> f64 {
    10000f64.powf(-2.0 * i as f64 / d as f64)
}

/// The sinusoidal positional encoding, `[max_len, d]` (`d` even): row `p` holds
/// `sin(p·ωᵢ)` at column `2i` and `cos(p·ωᵢ)` at column `2i + 1`. Computed in `f64`
/// with the `libm` crate's `sin` and `cos`, so every machine gets the same bits.
pub fn sinusoidal_encoding(max_len: usize, d: usize) -> Tensor {
    assert!(
        d.is_multiple_of(2),
        "sinusoidal_encoding: the width must be even (pairs of sin and cos), \
         found {d}"
    );
    let mut values = Vec::with_capacity(max_len * d);
    for p in 0..max_len {
        for i in 0..d / 2 {
            let angle = p as f64 * frequency(i, d);
            values.push(libm::sin(angle) as f32);
            values.push(libm::cos(angle) as f32);
        }
    }
    Tensor::from_vec(values, [max_len, d])
}
// ANCHOR_END: sinusoidal_encoding

/// `PE[p] · PE[p + k]` for each `p` of `starts`: the dot product of two encodings `k`
/// apart. It is `Σᵢ cos(k·ωᵢ)`, the same for every `p` (up to rounding).
pub fn relative_dot_products(pe: &Tensor, k: usize, starts: &[usize]) -> Vec<f32> {
    starts
        .iter()
        .map(|&p| {
            let (a, b) = (pe.narrow(0, p, 1), pe.narrow(0, p + k, 1));
            (&a * &b).sum().item()
        })
        .collect()
}

/// `Σᵢ cos(k·ωᵢ)` over the `d / 2` pairs: what [`relative_dot_products`] must give.
pub fn expected_dot_product(k: usize, d: usize) -> f64 {
    (0..d / 2)
        .map(|i| libm::cos(k as f64 * frequency(i, d)))
        .sum()
}

/// One layer of a sequence model, for a sequence of `n` tokens of width `d`, as the
/// Transformer paper's Table 1 compares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerCost {
    /// Self-attention: every token attends to every other.
    SelfAttention,
    /// A recurrent layer (an RNN or GRU): one step per token, each waiting for the
    /// last.
    Recurrent,
    /// A convolution of width `k` over the sequence.
    Convolution {
        /// The kernel width.
        k: usize,
    },
}

// ANCHOR: layer_cost
impl LayerCost {
    /// Multiply-adds of the layer's core, by the leading term: `n²·d` for the scores
    /// and the weighted sum of self-attention, `n·d²` for a recurrent layer's `n`
    /// products of a state with a `d × d` matrix, `k·n·d²` for a convolution.
    pub fn multiply_adds(self, n: usize, d: usize) -> usize {
        match self {
            LayerCost::SelfAttention => n * n * d,
            LayerCost::Recurrent => n * d * d,
            LayerCost::Convolution { k } => k * n * d * d,
        }
    }

    /// Steps that must run one after another: 1 for self-attention and a convolution
    /// (every position at once), `n` for a recurrent layer.
    pub fn sequential_steps(self, n: usize) -> usize {
        match self {
            LayerCost::SelfAttention | LayerCost::Convolution { .. } => 1,
            LayerCost::Recurrent => n,
        }
    }

    /// The most layers a signal crosses between two tokens `n − 1` apart: 1 for
    /// self-attention (a direct weight), `n − 1` steps for a recurrent layer, and for
    /// a stack of convolutions of width `k` (each widening the view by `k − 1`) the
    /// layers needed to span the sequence, `⌈(n − 1) / (k − 1)⌉`.
    pub fn path_length(self, n: usize) -> usize {
        match self {
            LayerCost::SelfAttention => 1,
            LayerCost::Recurrent => n.saturating_sub(1),
            LayerCost::Convolution { k } => n.saturating_sub(1).div_ceil(k - 1),
        }
    }
}
// ANCHOR_END: layer_cost

/// The encoding the page draws: 64 positions of width 32.
pub const FIGURE_POSITIONS: usize = 64;
/// The width of the figure's encoding.
pub const FIGURE_WIDTH: usize = 32;

/// The heatmap of the sinusoidal encoding, positions down, columns across.
pub fn encoding_heatmap() -> String {
    let pe = sinusoidal_encoding(FIGURE_POSITIONS, FIGURE_WIDTH);
    let values = pe.to_vec();
    let every = |n: usize, step: usize| -> Vec<String> {
        (0..n)
            .map(|i| {
                if i % step == 0 {
                    i.to_string()
                } else {
                    String::new()
                }
            })
            .collect()
    };
    let (rows, cols) = (every(FIGURE_POSITIONS, 8), every(FIGURE_WIDTH, 4));
    figures::heatmap(&figures::Heatmap {
        title: "sinusoidal positional encoding, d = 32",
        row_desc: "position p",
        col_desc: "column (2i: sin, 2i + 1: cos)",
        panels: &[figures::Panel {
            title: "PE[p, column]".into(),
            values: &values,
            row_labels: &rows,
            col_labels: &cols,
        }],
        range: Some((-1.0, 1.0)),
    })
}

/// What the section of the page prints (`cargo run -p chapter08` prints it after the
/// tour).
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_permutation
    line("== Self-attention and positions".into());
    manual_seed(81);
    let layer = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 16,
        num_heads: 2,
        ..Default::default()
    });
    let self_attention =
        |x: &Tensor| no_grad(|| layer.forward(x, x, x, &Mask::none()));
    let x = Tensor::randn([1, 6, 16]);
    let perm = [3, 0, 5, 1, 4, 2];
    line(format!(
        "self-attention, tokens shuffled by {perm:?}: outputs shuffled the same way,"
    ));
    line(format!(
        "  largest difference {:.1e}",
        permutation_gap(&self_attention, &x, &perm)
    ));
    let pe = sinusoidal_encoding(6, 16);
    let with_positions = |x: &Tensor| self_attention(&(x + &pe));
    line(format!(
        "the same with positions added first: largest difference {:.3}",
        permutation_gap(&with_positions, &x, &perm)
    ));
    // ANCHOR_END: tour_permutation

    // ANCHOR: tour_encoding
    let pe = sinusoidal_encoding(128, 32);
    line(format!(
        "sinusoidal_encoding(128, 32): shape {:?}, frequencies from {:.4} to {:.6}",
        pe.shape(),
        frequency(0, 32),
        frequency(15, 32)
    ));
    line("PE[p] · PE[p + k] at p = 0, 17, 60, 100:".into());
    for k in [1, 5, 20] {
        let dots = relative_dot_products(&pe, k, &[0, 17, 60, 100]);
        let text: Vec<String> = dots.iter().map(|v| format!("{v:.4}")).collect();
        line(format!(
            "  k = {k:>2}: {}; Σ cos(k·ωᵢ) = {:.4}",
            text.join(", "),
            expected_dot_product(k, 32)
        ));
    }
    // ANCHOR_END: tour_encoding

    // ANCHOR: tour_costs
    let (n, d) = (256, 64);
    line(format!("one layer over n = {n} tokens of width d = {d}:"));
    for (name, layer) in [
        ("self-attention", LayerCost::SelfAttention),
        ("recurrent", LayerCost::Recurrent),
        ("convolution, k = 3", LayerCost::Convolution { k: 3 }),
    ] {
        line(format!(
            "  {name:<19} {:>10} multiply-adds, {:>3} sequential steps, path length {:>3}",
            layer.multiply_adds(n, d),
            layer.sequential_steps(n),
            layer.path_length(n)
        ));
    }
    // ANCHOR_END: tour_costs
    out
}
