//! Multi-head additive attention: several Bahdanau heads side by side (the first article).

use engine::Tensor;
use engine::nn::{Linear, Module, prefixed};

use crate::bahdanau::BahdanauAttention;
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::weights::{AttentionWeights, WeightsSlot};

/// `num_heads` independent [`BahdanauAttention`] heads of hidden size
/// `hidden / num_heads`, their contexts concatenated and projected back to `value_size`.
///
/// | argument | shape |
/// |---|---|
/// | `query` | `[B, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `mask` | as for [`BahdanauAttention`] |
/// | context | `[B, value_size]` |
/// | weights (and [`last_attention_weights`](AttentionWeights::last_attention_weights)) | `[B, num_heads, K]` |
///
/// Parameters: `heads.i.*` for each head (see [`BahdanauAttention`]) and
/// `W_o: Linear(num_heads · value_size, value_size)`.
///
/// ```
/// use attention::{Mask, MultiHeadAdditiveAttention};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = MultiHeadAdditiveAttention::new(6, 4, 5, 8, 2);
/// let (context, weights) =
///     attention.forward(&Tensor::randn(&[3, 6]), &Tensor::randn(&[3, 7, 4]), &Tensor::randn(&[3, 7, 5]), &Mask::None);
/// assert_eq!((context.shape(), weights.shape()), (&[3, 5][..], &[3, 2, 7][..]));
/// ```
#[derive(Debug)]
pub struct MultiHeadAdditiveAttention {
    heads: Vec<BahdanauAttention>,
    w_o: Linear,
    weights: WeightsSlot,
}

impl MultiHeadAdditiveAttention {
    /// `num_heads` heads sharing the total hidden size `hidden`.
    #[track_caller]
    pub fn new(
        query_size: usize,
        key_size: usize,
        value_size: usize,
        hidden: usize,
        num_heads: usize,
    ) -> Self {
        check::heads_divide(
            "MultiHeadAdditiveAttention::new",
            "hidden",
            hidden,
            num_heads,
        );
        let heads = (0..num_heads)
            .map(|_| BahdanauAttention::new(query_size, key_size, value_size, hidden / num_heads))
            .collect();
        Self::from_parts(heads, Linear::new(num_heads * value_size, value_size, true))
    }

    /// A module from given heads and output projection.
    #[track_caller]
    pub fn from_parts(heads: Vec<BahdanauAttention>, w_o: Linear) -> Self {
        assert!(
            !heads.is_empty(),
            "MultiHeadAdditiveAttention: needs at least one head"
        );
        MultiHeadAdditiveAttention {
            heads,
            w_o,
            weights: WeightsSlot::default(),
        }
    }

    /// The same module with another fill policy in every head.
    pub fn with_fill(mut self, fill: Fill) -> Self {
        self.heads = self.heads.into_iter().map(|h| h.with_fill(fill)).collect();
        self
    }

    /// Returns `(context [B, value_size], weights [B, num_heads, K])`.
    #[track_caller]
    pub fn forward(
        &self,
        query: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let (contexts, weights): (Vec<Tensor>, Vec<Tensor>) = self
            .heads
            .iter()
            .map(|head| head.forward(query, keys, values, mask))
            .unzip();
        let concatenated = Tensor::concat(&contexts, -1);
        assert!(
            concatenated.size(-1) == self.w_o.in_features(),
            "MultiHeadAdditiveAttention: {} heads give {} features but W_o reads {}",
            self.heads.len(),
            concatenated.size(-1),
            self.w_o.in_features()
        );
        let weights = Tensor::stack(&weights, 1);
        self.weights.store(&weights);
        (self.w_o.forward(&concatenated), weights)
    }
}

impl Module for MultiHeadAdditiveAttention {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut all: Vec<(String, Tensor)> = self
            .heads
            .iter()
            .enumerate()
            .flat_map(|(i, h)| prefixed(&format!("heads.{i}"), h))
            .collect();
        all.extend(prefixed("W_o", &self.w_o));
        all
    }
}

impl AttentionWeights for MultiHeadAdditiveAttention {
    fn last_attention_weights(&self) -> Option<Tensor> {
        self.weights.get()
    }
}
