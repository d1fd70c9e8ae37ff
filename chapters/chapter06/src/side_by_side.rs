//! Additive and scaled dot-product attention on the same shapes: parameters and the
//! memory of one forward pass (deterministic, printed by the tour), and the inputs
//! the `compare` example times.

use attention::prelude::*;
use engine::memory;

// ANCHOR: same_shapes
/// The two scoring functions set up on the same self-attention inputs: `batch`
/// sequences of `n` tokens of size `d`, with additive attention's hidden size `h =
/// d`, its scores computed as d2l writes them (through `[B, Q, K, h]`; chapter 5
/// shows the fused default). Both modules are in evaluation mode.
#[derive(Debug)]
pub struct SameShapes {
    /// `w · tanh(W_q q + W_k k)`, with `W_q, W_k: [d, d]` and `w: [1, d]`.
    pub additive: AdditiveAttention,
    /// `q · k / √d`, no parameters.
    pub dot_product: DotProductAttention,
    /// `[batch, n, d]`.
    pub queries: Tensor,
    /// `[batch, n, d]`.
    pub keys: Tensor,
    /// `[batch, n, d]`.
    pub values: Tensor,
}

impl SameShapes {
    /// Seeded modules and inputs for `batch` sequences of `n` tokens of size `d`.
    pub fn new(batch: usize, n: usize, d: usize) -> SameShapes {
        manual_seed(5);
        let mut additive = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: d,
            key_size: d,
            num_hiddens: d,
            scoring: AdditiveScoring::Broadcast,
            ..Default::default()
        });
        let mut dot_product =
            DotProductAttention::new(DotProductAttentionConfig::default());
        additive.eval();
        dot_product.eval();
        SameShapes {
            additive,
            dot_product,
            queries: Tensor::randn([batch, n, d]),
            keys: Tensor::randn([batch, n, d]),
            values: Tensor::randn([batch, n, d]),
        }
    }

    /// One forward pass of additive attention: `[batch, n, d]`.
    pub fn additive_forward(&self) -> Tensor {
        self.additive
            .forward(&self.queries, &self.keys, &self.values, &Mask::none())
    }

    /// One forward pass of scaled dot-product attention: `[batch, n, d]`.
    pub fn dot_product_forward(&self) -> Tensor {
        self.dot_product.forward(
            &self.queries,
            &self.keys,
            &self.values,
            &Mask::none(),
        )
    }

    /// The extra bytes each forward pass holds at its peak (see
    /// [`forward_peak_bytes`]).
    pub fn peak_bytes(&self) -> Costs {
        Costs {
            additive: forward_peak_bytes(|| self.additive_forward()),
            dot_product: forward_peak_bytes(|| self.dot_product_forward()),
        }
    }
}
// ANCHOR_END: same_shapes

/// The peak memory of one forward pass of each module, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Costs {
    /// Additive attention.
    pub additive: usize,
    /// Scaled dot-product attention.
    pub dot_product: usize,
}

// ANCHOR: forward_peak_bytes
/// The largest number of bytes that tensors made by `forward` held at once, beyond
/// what was alive before it started (its output included). It runs without recording
/// the graph, as inference does, so only the intermediates the computation itself
/// needs are counted. The engine counts every buffer it allocates, so the number is
/// exact and the same on every machine.
pub fn forward_peak_bytes(forward: impl FnOnce() -> Tensor) -> usize {
    memory::reset_peak();
    let before = memory::live_bytes();
    let output = no_grad(forward);
    let peak = memory::peak_bytes() - before;
    drop(output);
    peak
}
// ANCHOR_END: forward_peak_bytes
