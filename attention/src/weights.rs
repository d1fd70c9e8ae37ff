//! Keeping the last attention weights of a module, for plotting.

use std::sync::Mutex;

use engine::Tensor;

/// Implemented by every attention module: the weights of its most recent forward pass.
///
/// | module | weights shape |
/// |---|---|
/// | [`DotProductAttention`](crate::DotProductAttention), [`AdditiveAttention`](crate::AdditiveAttention) | `[B, Q, K]` |
/// | [`BahdanauAttention`](crate::BahdanauAttention) | `[B, K]` |
/// | [`MultiHeadAttention`](crate::MultiHeadAttention), [`CausalSelfAttention`](crate::CausalSelfAttention) | `[B, heads, Q, K]` |
/// | [`MultiHeadAdditiveAttention`](crate::MultiHeadAdditiveAttention) | `[B, heads, K]` |
///
/// ```
/// use attention::{AttentionWeights, DotProductAttention, DotProductAttentionConfig, Mask};
/// use engine::Tensor;
///
/// let attention = DotProductAttention::new(DotProductAttentionConfig::default());
/// assert!(attention.last_attention_weights().is_none());
/// let x = Tensor::randn(&[1, 3, 4]);
/// attention.forward(&x, &x, &x, &Mask::causal());
/// let w = attention.last_attention_weights().unwrap(); // ready for a heatmap
/// assert_eq!(w.shape(), &[1, 3, 3]);
/// ```
pub trait AttentionWeights {
    /// The attention weights of the last `forward` (detached from the graph), or `None`
    /// before the first call. The shape is documented on each module.
    fn last_attention_weights(&self) -> Option<Tensor>;
}

/// A slot holding the last weights a module computed. Detached, so keeping them does not
/// keep the whole graph alive.
#[derive(Debug, Default)]
pub(crate) struct WeightsSlot(Mutex<Option<Tensor>>);

impl WeightsSlot {
    pub(crate) fn store(&self, weights: &Tensor) {
        *self.0.lock().expect("weights slot poisoned") = Some(weights.detach());
    }

    pub(crate) fn get(&self) -> Option<Tensor> {
        self.0.lock().expect("weights slot poisoned").clone()
    }
}
