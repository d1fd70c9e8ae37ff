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
        let module = "MultiHeadAdditiveAttention";
        assert!(!heads.is_empty(), "{module}: needs at least one head");
        let sizes = |h: &BahdanauAttention| [h.query_size(), h.key_size(), h.value_size()];
        let first = sizes(&heads[0]);
        for (i, head) in heads.iter().enumerate() {
            assert!(
                sizes(head) == first,
                "{module}: head {i} takes [query_size, key_size, value_size] = {:?} but head 0 takes {first:?}",
                sizes(head)
            );
        }
        assert!(
            w_o.in_features() == heads.len() * first[2],
            "{module}: {} heads of value_size {} give {} features but W_o {:?} reads {}",
            heads.len(),
            first[2],
            heads.len() * first[2],
            w_o.weight().shape(),
            w_o.in_features()
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
        let first = &self.heads[0];
        let expected = check::Expected {
            query_rank: 2,
            query_size: first.query_size(),
            key_size: first.key_size(),
            value_size: Some(first.value_size()),
        };
        check::inputs("MultiHeadAdditiveAttention", query, keys, values, expected);
        let module = "MultiHeadAdditiveAttention";
        let (mut contexts, mut weights) = (Vec::new(), Vec::new());
        for head in &self.heads {
            let (context, w) = head.attend(module, query, keys, values, mask);
            contexts.push(context);
            weights.push(w);
        }
        let concatenated = Tensor::concat(&contexts, -1);
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
