//! Which keys each query may attend to, said explicitly, and combined with `&`.
//!
//! A [`Mask`] is a value, not a convention hidden in a function: valid lengths per batch
//! element or per query, a key-padding mask, a full keep mask, or causal order. Masks
//! compose: `Mask::causal() & Mask::key_padding(&pad)` lets a query see a key only where
//! both allow it. [`Mask::keep_for`] turns any of them into the same thing: a 0/1 "keep"
//! tensor that broadcasts to the attention scores.

use std::ops::BitAnd;

use engine::{Device, Tensor};

/// Which key positions each query may attend to.
///
/// Shapes are those of the scores *as the module documents them*: `[B, Q, K]` for the
/// batched modules (heads are handled inside), `[..., Q, K]` for
/// [`masked_softmax`](crate::masked_softmax) and
/// [`scaled_dot_product_attention`](crate::scaled_dot_product_attention).
///
/// | constructor | tensor shape | query `q` of batch element `b` sees key `k` when |
/// |---|---|---|
/// | [`none`](Mask::none) | — | always |
/// | [`valid_lens`](Mask::valid_lens) | `[B]` | `k < lens[b]` (every query of `b` alike) |
/// | [`valid_lens`](Mask::valid_lens) | `[B, Q]` | `k < lens[b, q]` |
/// | [`key_padding`](Mask::key_padding) | `[B, K]` | `pad[b, k] == 1` (1 = a real token, 0 = padding) |
/// | [`key_padding_ignore`](Mask::key_padding_ignore) | `[B, K]` | `ignore[b, k] == 0` (1 = padding, PyTorch's `key_padding_mask`) |
/// | [`keep`](Mask::keep) | the scores' rank, each dimension equal or 1 | `keep[b, .., q, k] == 1` |
/// | [`causal`](Mask::causal) | — | `k <= q + (K − Q)`: aligned to the *last* key |
/// | [`causal_with_offset`](Mask::causal_with_offset) | — | `k <= q + offset` |
/// | `a & b` | — | both `a` and `b` allow it |
///
/// **Which sense a 0/1 tensor takes.** [`key_padding`](Mask::key_padding) and
/// [`keep`](Mask::keep) read 1 as *may attend*: the sense of `masked_fill(mask == 0, …)`
/// in d2l and the articles, and of a boolean `attn_mask` of PyTorch's
/// `F.scaled_dot_product_attention` (True = takes part). [`key_padding_ignore`](Mask::key_padding_ignore)
/// reads 1 as *ignore this key*: the sense of `key_padding_mask` in `nn.MultiheadAttention`
/// and `nn.Transformer`, so a mask from PyTorch code is passed as it is. (The boolean
/// `attn_mask` of `nn.MultiheadAttention` is also True = not allowed: pass `1 − mask` to
/// `keep`.)
///
/// A key-padding mask and a full keep mask are different constructors, so a `[B, K]`
/// padding mask can never be read as a `[Q, K]` mask: a keep mask must have the rank of
/// the scores (write `[1, Q, K]` for one mask shared by the batch).
///
/// Valid lengths larger than the number of keys `K` are clamped to `K` (every key is
/// visible), which is what d2l's `sequence_mask` does; lengths must be whole numbers ≥ 0.
/// Padding and keep masks hold only 0 and 1.
///
/// ```
/// use attention::Mask;
/// use engine::Tensor;
///
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 3.0], [2]));
/// let keep = lens.keep_for("example", &[2, 1, 4]).unwrap();
/// assert_eq!(keep.to_vec(), vec![1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]);
///
/// // Causal order and padding together: one expression.
/// let pad = Tensor::from_vec(vec![1.0, 1.0, 0.0], [1, 3]);
/// let both = Mask::causal() & Mask::key_padding(&pad);
/// let keep = both.keep_for("example", &[1, 3, 3]).unwrap();
/// assert_eq!(keep.to_vec(), vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Mask {
    /// The conditions that must all hold; none means every key is visible.
    parts: Vec<Part>,
}

#[derive(Clone, Debug)]
enum Part {
    ValidLens(Tensor),
    /// `ignore`: true when 1 marks a key to ignore (PyTorch's `key_padding_mask`), false
    /// when 1 marks a real key.
    KeyPadding {
        pad: Tensor,
        ignore: bool,
    },
    Keep(Tensor),
    /// `None`: aligned to the last key (offset `K − Q`).
    Causal(Option<usize>),
}

impl Mask {
    /// Every key is visible.
    pub fn none() -> Mask {
        Mask::default()
    }

    /// Keys `0..len` are visible: one length per batch element (`[B]`) or per query
    /// (`[B, Q]`), whole numbers ≥ 0 (d2l's `valid_lens`).
    pub fn valid_lens(lens: &Tensor) -> Mask {
        Mask::from_part(Part::ValidLens(lens.clone()))
    }

    /// Which keys are real tokens: `[B, K]`, 1 for a real token and 0 for padding. Every
    /// query of batch element `b` sees the same keys.
    pub fn key_padding(keep: &Tensor) -> Mask {
        Mask::from_part(Part::KeyPadding {
            pad: keep.clone(),
            ignore: false,
        })
    }

    /// Which keys are padding, in PyTorch's sense: `[B, K]`, 1 (True) for a key to
    /// *ignore* and 0 for a real token, as the `key_padding_mask` of
    /// `nn.MultiheadAttention` and `nn.Transformer` is written. The opposite sense of
    /// [`key_padding`](Mask::key_padding), which this equals with `1 − ignore`; a boolean
    /// mask from PyTorch code becomes a 0/1 tensor and is passed as it is.
    ///
    /// ```
    /// use attention::Mask;
    /// use engine::Tensor;
    ///
    /// // torch.tensor([[False, False, True]]): the third key is padding.
    /// let key_padding_mask = Tensor::from_vec(vec![0.0, 0.0, 1.0], [1, 3]);
    /// let keep = Mask::key_padding_ignore(&key_padding_mask).keep_for("example", &[1, 1, 3]);
    /// assert_eq!(keep.unwrap().to_vec(), vec![1.0, 1.0, 0.0]);
    /// ```
    pub fn key_padding_ignore(ignore: &Tensor) -> Mask {
        Mask::from_part(Part::KeyPadding {
            pad: ignore.clone(),
            ignore: true,
        })
    }

    /// A full 0/1 mask with the rank of the scores (`[B, Q, K]` for the batched modules),
    /// each dimension equal to the scores' or 1: `[1, Q, K]` is one mask for the whole
    /// batch, `[B, 1, K]` one row per example.
    pub fn keep(mask: &Tensor) -> Mask {
        Mask::from_part(Part::Keep(mask.clone()))
    }

    /// Causal order, aligned to the last key: with `Q` queries and `K ≥ Q` keys, query `q`
    /// is the token at position `K − Q + q` and sees keys `0..=K − Q + q`. For a full
    /// sequence (`K = Q`) that is "each token sees itself and the past"; for one new token
    /// against a cache of `K` keys, it sees all of them, as decoding needs.
    pub fn causal() -> Mask {
        Mask::from_part(Part::Causal(None))
    }

    /// Causal order with the first query at absolute position `offset`: query `q` sees
    /// keys `0..=offset + q`, whatever the number of keys.
    pub fn causal_with_offset(offset: usize) -> Mask {
        Mask::from_part(Part::Causal(Some(offset)))
    }

    /// Both masks at once: a key is visible only where `self` and `other` both allow it.
    /// The same as `self & other`.
    pub fn and(&self, other: &Mask) -> Mask {
        let mut parts = self.parts.clone();
        parts.extend(other.parts.iter().cloned());
        Mask { parts }
    }

    /// True when the mask hides nothing.
    pub fn is_none(&self) -> bool {
        self.parts.is_empty()
    }

    /// True when causal order is part of the mask.
    pub(crate) fn is_causal(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Causal(_)))
    }

    /// True when causal order aligned to the last key ([`Mask::causal`]) is part of the
    /// mask: it needs at least as many keys as queries.
    pub(crate) fn is_causal_from_last(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Causal(None)))
    }

    /// The mask as the engine's `blocked_attention` takes it, for scores of shape
    /// `scores` (`[..., Q, K]`), checked as [`keep_for`](Mask::keep_for) checks it, without
    /// building anything of size `Q·K` for causal order, valid lengths or padding.
    #[track_caller]
    pub(crate) fn blocked_parts(
        &self,
        module: &str,
        scores: &[usize],
    ) -> BlockedParts {
        let rank = scores.len();
        let (q, k) = (scores[rank - 2], scores[rank - 1]);
        let mut parts = BlockedParts::default();
        for part in &self.parts {
            match part {
                Part::Causal(offset) => {
                    let offset = offset.unwrap_or_else(|| {
                        assert!(
                            k >= q,
                            "{module}: a causal mask aligned to the last key needs at least as many keys as queries, found {q} queries and {k} keys (scores {scores:?}); hint: Mask::causal_with_offset(o) says where the first query stands"
                        );
                        k - q
                    });
                    parts.causal_offset =
                        Some(parts.causal_offset.map_or(offset, |o| o.min(offset)));
                }
                Part::ValidLens(lens) => {
                    // [B, 1, ..., 1] or [B, 1, ..., Q]: the keep mask's shape without K.
                    let keep = valid_lens_keep(module, lens, scores);
                    let mut shape = keep.shape().to_vec();
                    shape.pop();
                    let lens = lens.reshape(shape).to(&Device::Cpu);
                    parts.lengths = Some(match parts.lengths.take() {
                        None => lens,
                        Some(other) => other.minimum(&lens),
                    });
                }
                Part::KeyPadding { .. } | Part::Keep(_) => {
                    let keep = part_keep(module, part, scores).to(&Device::Cpu);
                    parts.keep = Some(match parts.keep.take() {
                        None => keep,
                        Some(other) => &other * &keep,
                    });
                }
            }
        }
        parts
    }

    fn from_part(part: Part) -> Mask {
        Mask { parts: vec![part] }
    }

    /// The 0/1 keep tensor for scores of shape `scores` (`[..., Q, K]`), with the same rank
    /// as the scores, or `None` when nothing is masked. `module` names the caller in error
    /// messages.
    #[track_caller]
    pub fn keep_for(&self, module: &str, scores: &[usize]) -> Option<Tensor> {
        let rank = scores.len();
        assert!(
            rank >= 2,
            "{module}: attention scores must be at least [Q, K], found {scores:?}"
        );
        let mut keep: Option<Tensor> = None;
        for part in &self.parts {
            // Combined on the CPU (masks are small): the caller moves the result to its
            // scores' device.
            let this = part_keep(module, part, scores).to(&Device::Cpu);
            keep = Some(match keep {
                None => this,
                Some(k) => &k * &this,
            });
        }
        keep
    }

    /// The same mask for d2l-style multi-head attention, where the heads of batch element
    /// `b` are folded into the batch as rows `b·H .. b·H + H` (`[B·H, Q, K]` scores).
    ///
    /// Per-batch tensors are repeated with `repeat_interleave` (`[a, b] → [a, a, b, b]`), not
    /// tiled (`[a, b, a, b]`): tiling would give head 1 of element 0 the mask of element 1.
    ///
    /// # Panics
    /// When `heads` is 0, or the repeated mask would not fit in memory.
    #[track_caller]
    pub fn repeat_for_heads(&self, heads: usize) -> Mask {
        crate::check::positive("Mask::repeat_for_heads", "heads", heads);
        // A loop, not `map`: a refusal inside `repeat_interleave` then points at the
        // caller's line (a closure would stop `#[track_caller]` at itself).
        let mut parts = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            parts.push(match part {
                Part::ValidLens(t) => Part::ValidLens(t.repeat_interleave(heads, 0)),
                Part::KeyPadding { pad, ignore } => Part::KeyPadding {
                    pad: pad.repeat_interleave(heads, 0),
                    ignore: *ignore,
                },
                // A keep mask with a batch dimension of 1 is shared by every row already.
                Part::Keep(t) if t.rank() >= 3 && t.shape()[0] > 1 => {
                    Part::Keep(t.repeat_interleave(heads, 0))
                }
                other => other.clone(),
            });
        }
        Mask { parts }
    }
}

impl Mask {
    /// The same mask for scores with a head axis, `[B, H, Q, K]`, when it was written for
    /// `[B, Q, K]`: a keep mask gains that axis (the other kinds fit any rank already).
    pub(crate) fn with_head_axis(&self) -> Mask {
        let parts = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Keep(t) => Part::Keep(t.unsqueeze(1)),
                other => other.clone(),
            })
            .collect();
        Mask { parts }
    }
}

/// A [`Mask`] as the engine's `blocked_attention` takes it (see its options).
#[derive(Debug, Default)]
pub(crate) struct BlockedParts {
    /// Query `q` sees keys `k ≤ q + offset`.
    pub(crate) causal_offset: Option<usize>,
    /// Valid lengths with the scores' rank less one: `[B, 1, ..., 1 or Q]`.
    pub(crate) lengths: Option<Tensor>,
    /// A 0/1 keep mask with the scores' rank, each dimension equal or 1.
    pub(crate) keep: Option<Tensor>,
}

impl BitAnd for Mask {
    type Output = Mask;

    /// Both masks at once (see [`Mask::and`]).
    fn bitand(self, other: Mask) -> Mask {
        self.and(&other)
    }
}

impl BitAnd for &Mask {
    type Output = Mask;

    /// Both masks at once (see [`Mask::and`]).
    fn bitand(self, other: &Mask) -> Mask {
        self.and(other)
    }
}

#[track_caller]
fn part_keep(module: &str, part: &Part, scores: &[usize]) -> Tensor {
    let rank = scores.len();
    let (q, k) = (scores[rank - 2], scores[rank - 1]);
    match part {
        Part::ValidLens(lens) => valid_lens_keep(module, lens, scores),
        Part::KeyPadding { pad, ignore } => {
            key_padding_keep(module, pad, *ignore, scores)
        }
        Part::Keep(mask) => {
            let fits = mask.rank() == rank
                && mask
                    .shape()
                    .iter()
                    .zip(scores)
                    .all(|(&m, &s)| m == s || m == 1);
            assert!(
                fits,
                "{module}: a keep mask must have the rank of the attention scores {scores:?} with each dimension equal or 1, found {:?}; hint: a [B, K] padding mask is Mask::key_padding, and one [Q, K] mask for every example is Mask::keep of mask.unsqueeze(0)",
                mask.shape()
            );
            zero_one(module, "a keep mask", mask);
            mask.clone()
        }
        Part::Causal(offset) => {
            let offset = causal_offset(module, *offset, scores);
            // Query i may see key j ≤ i + offset: the lower triangle from diagonal `offset`.
            let mut shape = vec![1; rank - 2];
            shape.extend([q, k]);
            // Not `as i64`, which turns an offset past `i64::MAX` into a negative diagonal.
            Tensor::ones(shape).tril(i64::try_from(offset).unwrap_or(i64::MAX))
        }
    }
}

/// The offset of a causal part for `scores`: the one it was given, or `K − Q` (aligned to
/// the last key), which needs `K ≥ Q`.
#[track_caller]
fn causal_offset(module: &str, offset: Option<usize>, scores: &[usize]) -> usize {
    let rank = scores.len();
    let (q, k) = (scores[rank - 2], scores[rank - 1]);
    match offset {
        Some(o) => o,
        None => {
            assert!(
                k >= q,
                "{module}: a causal mask aligned to the last key needs at least as many keys as queries, found {q} queries and {k} keys (scores {scores:?}); hint: Mask::causal_with_offset(o) says where the first query stands"
            );
            k - q
        }
    }
}

#[track_caller]
fn zero_one(module: &str, what: &str, mask: &Tensor) {
    if let Some(bad) = mask.to_vec().iter().find(|&&v| v != 0.0 && v != 1.0) {
        panic!(
            "{module}: {what} holds only 0 (masked) and 1 (may attend), found {bad}; hint: an additive float mask (0 / -inf) is not accepted, convert it to 0/1"
        );
    }
}

#[track_caller]
fn batch_dim(module: &str, what: &str, scores: &[usize]) -> usize {
    assert!(
        scores.len() >= 3,
        "{module}: {what} need attention scores with a batch dimension, [B, ..., Q, K], found {scores:?}; hint: unsqueeze(0) the scores, or use Mask::keep"
    );
    scores[0]
}

#[track_caller]
fn key_padding_keep(
    module: &str,
    pad: &Tensor,
    ignore: bool,
    scores: &[usize],
) -> Tensor {
    let rank = scores.len();
    let batch = batch_dim(module, "key-padding masks", scores);
    let k = scores[rank - 1];
    assert!(
        pad.shape() == [batch, k],
        "{module}: a key-padding mask must have shape [B, K] = [{batch}, {k}] for attention scores {scores:?}, found {:?}",
        pad.shape()
    );
    let mut shape = vec![1; rank];
    shape[0] = batch;
    shape[rank - 1] = k;
    if ignore {
        ignore_zero_one(module, pad);
        (1.0 - pad).reshape(shape)
    } else {
        zero_one(module, "a key-padding mask", pad);
        pad.reshape(shape)
    }
}

/// Checks a mask in PyTorch's ignore sense: only 0 (a real key) and 1 (ignore it).
#[track_caller]
fn ignore_zero_one(module: &str, mask: &Tensor) {
    if let Some(bad) = mask.to_vec().iter().find(|&&v| v != 0.0 && v != 1.0) {
        panic!(
            "{module}: a key-padding mask in PyTorch's sense (Mask::key_padding_ignore) holds only 1 (ignore the key) and 0 (a real key), found {bad}"
        );
    }
}

#[track_caller]
fn valid_lens_keep(module: &str, lens: &Tensor, scores: &[usize]) -> Tensor {
    let rank = scores.len();
    let batch = batch_dim(module, "valid lengths", scores);
    let (q, k) = (scores[rank - 2], scores[rank - 1]);
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
