//! Keeping the last attention weights of a module, for plotting.

use std::sync::Mutex;

use engine::Tensor;

use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};

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

/// A slot holding the last weights a module computed, or what recomputes them (after a
/// blocked pass, which never builds them). Detached, so keeping them does not keep the
/// whole graph alive.
#[derive(Debug, Default)]
pub(crate) struct WeightsSlot(Mutex<Option<Stored>>);

#[derive(Debug)]
enum Stored {
    Weights(Tensor),
    /// `masked_softmax(queries keysᵀ · scale)` with the safe fill, computed when asked.
    Recompute {
        queries: Tensor,
        keys: Tensor,
        mask: Mask,
        scale: Option<f32>,
    },
}

impl WeightsSlot {
    pub(crate) fn store(&self, weights: &Tensor) {
        *self.0.lock().expect("weights slot poisoned") =
            Some(Stored::Weights(weights.detach()));
    }

    /// Keeps the queries and keys of a blocked pass (shared, not copied) so that
    /// [`get`](Self::get) can compute the weights if it is called.
    pub(crate) fn store_recipe(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        mask: &Mask,
        scale: Option<f32>,
    ) {
        *self.0.lock().expect("weights slot poisoned") = Some(Stored::Recompute {
            queries: queries.detach(),
            keys: keys.detach(),
            mask: mask.clone(),
            scale,
        });
    }

    pub(crate) fn get(&self) -> Option<Tensor> {
        let stored = self.0.lock().expect("weights slot poisoned");
        match stored.as_ref()? {
            Stored::Weights(w) => Some(w.clone()),
            Stored::Recompute {
                queries,
                keys,
                mask,
                scale,
            } => Some(engine::no_grad(|| {
                let scale = scale.unwrap_or(1.0 / (queries.size(-1) as f32).sqrt());
                let scores = queries.matmul_t(keys) * scale;
                masked_softmax_in("last_attention_weights", &scores, mask, Fill::Safe)
            })),
        }
    }
}
