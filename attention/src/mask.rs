//! Which keys each query may attend to, said explicitly.
//!
//! A [`Mask`] is a value, not a convention hidden in a function: valid lengths per batch
//! element or per query, an explicit 0/1 tensor, or causal order (with an offset for
//! cached decoding). [`Mask::keep_for`] turns any of them into the same thing: a 0/1
//! "keep" tensor that broadcasts to the attention scores `[..., Q, K]`.

use engine::Tensor;
use engine::shape::broadcast_shapes;

/// Which key positions each query may attend to.
///
/// | variant | tensor shape | query `q` of batch element `b` sees key `k` when |
/// |---|---|---|
/// | `None` | — | always |
/// | `ValidLens(lens)` | `[B]`, for scores `[B, ..., Q, K]` | `k < lens[b]` (every query of `b` alike) |
/// | `ValidLens(lens)` | `[B, Q]` | `k < lens[b, q]` |
/// | `Keep(mask)` | broadcasts to the scores `[..., Q, K]` | `mask[.., q, k] == 1` |
/// | `Causal { offset }` | — | `k <= q + offset` |
///
/// Valid lengths larger than the number of keys `K` are clamped to `K` (every key is
/// visible), which is what d2l's `sequence_mask` does; lengths must be whole numbers ≥ 0.
/// `Keep` masks hold only 0 and 1 (1 = may attend, as in PyTorch's boolean
/// `scaled_dot_product_attention` mask; note that `nn.MultiheadAttention`'s
/// `key_padding_mask` uses the opposite sense).
///
/// ```
/// use attention::Mask;
/// use engine::Tensor;
///
/// let mask = Mask::ValidLens(Tensor::from_vec(vec![2.0, 3.0], &[2]));
/// let keep = mask.keep_for("example", &[2, 1, 4]).unwrap();
/// assert_eq!(keep.shape(), &[2, 1, 4]);
/// assert_eq!(keep.to_vec(), vec![1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]);
/// ```
#[derive(Clone, Debug)]
pub enum Mask {
    /// Every key is visible.
    None,
    /// Keys `0..len` are visible: one length per batch element (`[B]`) or per query
    /// (`[B, Q]`).
    ValidLens(Tensor),
    /// A 0/1 tensor, broadcastable to the scores, with 1 where a query may attend to a key.
    Keep(Tensor),
    /// Causal order: query `q` (at absolute position `offset + q`) sees keys `0..=offset + q`.
    /// `offset` is the number of tokens already in a KV cache.
    Causal {
        /// The absolute position of the first query.
        offset: usize,
    },
}

impl Mask {
    /// Causal order for a full sequence (no cache): `Causal { offset: 0 }`.
    pub fn causal() -> Mask {
        Mask::Causal { offset: 0 }
    }

    /// The 0/1 keep tensor for scores of shape `scores` (`[..., Q, K]`), with the same rank
    /// as the scores, or `None` when nothing is masked. `module` names the caller in
    /// error messages.
    #[track_caller]
    pub fn keep_for(&self, module: &str, scores: &[usize]) -> Option<Tensor> {
        let rank = scores.len();
        assert!(
            rank >= 2,
            "{module}: attention scores must be at least [Q, K], found {scores:?}"
        );
        let (q, k) = (scores[rank - 2], scores[rank - 1]);
        match self {
            Mask::None => None,
            Mask::ValidLens(lens) => Some(valid_lens_keep(module, lens, scores)),
            Mask::Keep(mask) => {
                let fits = broadcast_shapes(mask.shape(), scores).as_deref() == Some(scores);
                assert!(
                    fits,
                    "{module}: the mask has shape {:?}, which does not broadcast to the attention scores {scores:?} ([..., queries, keys])",
                    mask.shape()
                );
                let values = mask.to_vec();
                if let Some(bad) = values.iter().find(|&&v| v != 0.0 && v != 1.0) {
                    panic!(
                        "{module}: a keep mask holds only 0 (masked) and 1 (may attend), found {bad}; hint: an additive float mask (0 / -inf) is not accepted, convert it to 0/1"
                    );
                }
                let mut shape = vec![1; rank - mask.rank()];
                shape.extend_from_slice(mask.shape());
                Some(mask.reshape(shape))
            }
            Mask::Causal { offset } => {
                let rows = Tensor::arange(q).reshape([q, 1]) + *offset as f32;
                let cols = Tensor::arange(k).reshape([1, k]);
                let mut shape = vec![1; rank - 2];
                shape.extend([q, k]);
                Some(cols.le(&rows).reshape(shape))
            }
        }
    }

    /// The same mask for d2l-style multi-head attention, where the heads of batch element
    /// `b` are folded into the batch as rows `b·H .. b·H + H` (`[B·H, Q, K]` scores).
    ///
    /// Per-batch tensors are repeated with `repeat_interleave` (`[a, b] → [a, a, b, b]`), not
    /// tiled (`[a, b, a, b]`): tiling would give head 1 of element 0 the mask of element 1.
    pub fn repeat_for_heads(&self, heads: usize) -> Mask {
        match self {
            Mask::None | Mask::Causal { .. } => self.clone(),
            Mask::ValidLens(lens) => Mask::ValidLens(lens.repeat_interleave(heads, 0)),
            // Only a mask with its own batch dimension varies across the batch.
            Mask::Keep(mask) if mask.rank() >= 3 && mask.shape()[0] > 1 => {
                Mask::Keep(mask.repeat_interleave(heads, 0))
            }
            Mask::Keep(_) => self.clone(),
        }
    }
}

#[track_caller]
fn valid_lens_keep(module: &str, lens: &Tensor, scores: &[usize]) -> Tensor {
    let rank = scores.len();
    assert!(
        rank >= 3,
        "{module}: valid lengths need attention scores with a batch dimension, [B, ..., Q, K], found {scores:?}; hint: unsqueeze(0) the scores, or use a Keep mask"
    );
    let (batch, q, k) = (scores[0], scores[rank - 2], scores[rank - 1]);
    let per_query = match lens.shape() {
        [b] if *b == batch => false,
        [b, lq] if *b == batch && *lq == q => true,
        other => panic!(
            "{module}: valid lengths must have shape [{batch}] (one per batch element) or [{batch}, {q}] (one per query) for attention scores {scores:?}, found {other:?}"
        ),
    };
    if let Some(bad) = lens.to_vec().iter().find(|v| v.fract() != 0.0 || **v < 0.0) {
        panic!("{module}: valid lengths must be whole numbers ≥ 0, found {bad}");
    }
    // keep[b, .., q, k] = k < len: positions as a row, lengths as a column.
    let mut len_shape = vec![1; rank];
    len_shape[0] = batch;
    if per_query {
        len_shape[rank - 2] = q;
    }
    let mut pos_shape = vec![1; rank];
    pos_shape[rank - 1] = k;
    Tensor::arange(k)
        .reshape(pos_shape)
        .lt(&lens.reshape(len_shape))
}
