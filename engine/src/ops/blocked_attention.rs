//! `blocked_attention`: exact attention `softmax(Q Kᵀ · scale) V` computed in blocks of
//! keys with an online softmax, forward and backward, in memory that grows linearly with
//! the number of keys (the kernel and its method: `cpu/blocked_attention.rs`).

use crate::check;
use crate::cpu::blocked_attention::{self, Dims, Visibility};
use crate::memory;
use crate::op::Op;
use crate::tensor::Tensor;

/// Keys per block when [`BlockedAttentionOptions::block`] is left at its default: the
/// scores of a run of 256 queries against 256 keys are 256 KiB, which stay in a core's
/// L2 cache.
pub const DEFAULT_ATTENTION_BLOCK: usize = 256;

/// The options of [`Tensor::blocked_attention`]: the scale, the block size, and which keys
/// each query sees. `BlockedAttentionOptions::default()` is plain attention with the scale
/// `1/√d` and blocks of [`DEFAULT_ATTENTION_BLOCK`] keys; set the fields you need and leave
/// the rest with `..Default::default()`.
///
/// Shapes below write the queries as `[..., Q, d]`: `...` are the leading (batch, or batch
/// and heads) dimensions, the same for queries, keys and values.
///
/// | field | query `q` sees key `k` when |
/// |---|---|
/// | `causal_offset: Some(o)` | `k ≤ q + o` (`Some(0)`: the lower triangle; `Some(K − Q)`: aligned to the last key) |
/// | `lengths`, `[...]` or `[..., Q]` (whole numbers ≥ 0, each leading dimension equal or 1) | `k < lengths[…]` |
/// | `keep`, `[..., 1, K]` or `[..., Q, K]` (0/1, each leading dimension equal or 1) | `keep[…, k] == 1` |
///
/// A key must pass every condition given. `keep` of shape `[..., 1, K]` (a key-padding
/// mask) costs memory linear in `K`; a full `[..., Q, K]` mask is as large as the weights
/// that blocked attention avoids, so prefer `causal_offset` and `lengths` where they say
/// the same thing.
#[derive(Clone, Debug)]
pub struct BlockedAttentionOptions {
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`.
    pub scale: Option<f32>,
    /// Keys per block (default [`DEFAULT_ATTENTION_BLOCK`]), at least 1. Any size gives the
    /// same result up to rounding (the order in which the online softmax meets the keys);
    /// a given size gives the same bits on every CPU and thread count.
    pub block: usize,
    /// Causal order: query `q` sees keys `k ≤ q + offset`.
    pub causal_offset: Option<usize>,
    /// Valid lengths: query `q` sees keys `0..len`.
    pub lengths: Option<Tensor>,
    /// A 0/1 keep mask: 1 where the query may see the key.
    pub keep: Option<Tensor>,
}

impl Default for BlockedAttentionOptions {
    fn default() -> Self {
        BlockedAttentionOptions {
            scale: None,
            block: DEFAULT_ATTENTION_BLOCK,
            causal_offset: None,
            lengths: None,
            keep: None,
        }
    }
}

/// What the derivative of [`Tensor::blocked_attention`] needs besides the inputs: the
/// output, each row's `log Σ exp`, and the masks as the kernel reads them.
pub(crate) struct BlockedAttentionSaved {
    pub(crate) out: Tensor,
    pub(crate) lse: Tensor,
    pub(crate) dims: Dims,
    pub(crate) scale: f32,
    pub(crate) causal_offset: Option<usize>,
    /// `[N]` or `[N, Q]` lengths, flattened, and whether per query.
    pub(crate) lengths: Option<(Tensor, bool)>,
    /// `[N, 1, K]` or `[N, Q, K]` keep mask, flattened, and whether per query.
    pub(crate) keep: Option<(Tensor, bool)>,
}

impl BlockedAttentionSaved {
    /// The masks as the kernel reads them, from their values.
    fn visibility<'a>(
        &self,
        lengths: &'a Option<Vec<f32>>,
        keep: &'a Option<Vec<f32>>,
    ) -> Visibility<'a> {
        Visibility {
            causal_offset: self.causal_offset,
            lengths: lengths
                .as_deref()
                .zip(self.lengths.as_ref().map(|(_, per_query)| *per_query)),
            keep: keep
                .as_deref()
                .zip(self.keep.as_ref().map(|(_, per_query)| *per_query)),
        }
    }
}

impl Tensor {
    /// Exact attention, `softmax(self Kᵀ · scale) V` over the keys' axis, computed in
    /// blocks of keys with an online softmax: the same result as
    /// `(self.matmul_t(keys) * scale).softmax(-1).matmul(values)` (with hidden keys
    /// left out), to rounding, without ever holding the `[..., Q, K]` weights.
    ///
    /// | argument | shape |
    /// |---|---|
    /// | `self` (queries) | `[..., Q, d]` |
    /// | `keys` | `[..., K, d]` |
    /// | `values` | `[..., K, dv]` |
    /// | output | `[..., Q, dv]` |
    ///
    /// The leading dimensions `...` must be the same for all three (expand them first to
    /// broadcast). Memory beyond the inputs is the output and one float per query (the log
    /// of each row's softmax denominator, kept for the backward pass), and the backward
    /// pass recomputes the weights block by block: `O(Q·(d + dv) + Q)`, not `O(Q·K)`. A
    /// hidden key has weight exactly 0, and a query that sees no key gets an output of 0
    /// and gradients of 0 (the safe fill of the attention library). Masks are in
    /// [`BlockedAttentionOptions`]; they take no gradient.
    ///
    /// There is no GPU kernel yet: on a GPU tensor it stops with a message.
    ///
    /// ```
    /// use engine::{BlockedAttentionOptions, Tensor};
    /// let q = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [1, 2, 2]);
    /// let k = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0], [1, 3, 2]);
    /// let v = Tensor::from_vec(vec![1.0, 2.0, 3.0], [1, 3, 1]);
    /// let options = BlockedAttentionOptions { block: 2, ..Default::default() };
    /// let blocked = q.blocked_attention(&k, &v, &options);
    /// let full = (q.matmul_t(&k) * (0.5f32).sqrt()).softmax(-1).matmul(&v);
    /// for (a, b) in blocked.to_vec().iter().zip(full.to_vec()) {
    ///     assert!((a - b).abs() < 1e-6);
    /// }
    /// // Causal order: query 0 sees key 0 only.
    /// let causal = BlockedAttentionOptions { causal_offset: Some(0), ..Default::default() };
    /// assert_eq!(q.blocked_attention(&k, &v, &causal).to_vec()[0], 1.0);
    /// ```
    #[track_caller]
    pub fn blocked_attention(
        &self,
        keys: &Tensor,
        values: &Tensor,
        options: &BlockedAttentionOptions,
    ) -> Tensor {
        let op = "blocked_attention";
        let _device = check::device(op, &[self, keys, values]);
        check::no_gpu_kernel(op, self);
        let dims = check_shapes(self.shape(), keys.shape(), values.shape(), options);
        if let Some(p) = crate::autocast::active() {
            // Inputs and output rounded, the softmax and sums in f32 (`crate::autocast`).
            let _off = crate::autocast::suspend();
            let (q, k, v) = (
                self.to_precision(p),
                keys.to_precision(p),
                values.to_precision(p),
            );
            return q.blocked_attention(&k, &v, options).to_precision(p);
        }
        let scale = options.scale.unwrap_or(1.0 / (dims.features as f32).sqrt());
        check::ensure(scale.is_finite() && scale > 0.0, op, || {
            format!("the scale must be finite and greater than 0, found {scale}")
        });
        let leading = &self.shape()[..self.rank() - 2];
        // `match`, not `Option::map`: a closure would hide the caller's line from a
        // refusal inside the checks.
        #[expect(clippy::manual_map, reason = "keeps #[track_caller] working")]
        let lengths = match &options.lengths {
            Some(t) => Some(broadcast_lengths(t, leading, dims)),
            None => None,
        };
        #[expect(clippy::manual_map, reason = "keeps #[track_caller] working")]
        let keep = match &options.keep {
            Some(t) => Some(broadcast_keep(t, leading, dims)),
            None => None,
        };
        let mut shape = self.shape().to_vec();
        *shape.last_mut().expect("rank ≥ 2") = dims.value_features;
        memory::ensure_can_allocate(op, &shape);
        let saved_lengths = lengths.as_ref().map(|(t, _)| t.to_vec());
        let saved_keep = keep.as_ref().map(|(t, _)| t.to_vec());
        let visibility = Visibility {
            causal_offset: options.causal_offset,
            lengths: saved_lengths.as_deref().zip(lengths.as_ref().map(|l| l.1)),
            keep: saved_keep.as_deref().zip(keep.as_ref().map(|k| k.1)),
        };
        let (out, lse) = blocked_attention::forward(
            self.buffer().as_slice(),
            keys.buffer().as_slice(),
            values.buffer().as_slice(),
            dims,
            scale,
            visibility,
        );
        let lse = Tensor::from_parts(op, lse, vec![dims.batch, dims.queries]);
        Tensor::from_op_keeping_output(op, out, shape, |out| Op::BlockedAttention {
            queries: self.clone(),
            keys: keys.clone(),
            values: values.clone(),
            saved: Box::new(BlockedAttentionSaved {
                out,
                lse,
                dims,
                scale,
                causal_offset: options.causal_offset,
                lengths,
                keep,
            }),
        })
    }

    /// The gradients of [`blocked_attention`](Tensor::blocked_attention) with respect to
    /// its queries (`self`), keys and values, given `upstream`, the gradient of the loss
    /// with respect to its output. Used by its derivative; records nothing.
    pub(crate) fn blocked_attention_grads(
        &self,
        keys: &Tensor,
        values: &Tensor,
        saved: &BlockedAttentionSaved,
        upstream: &Tensor,
    ) -> [Tensor; 3] {
        let lengths = saved.lengths.as_ref().map(|(t, _)| t.to_vec());
        let keep = saved.keep.as_ref().map(|(t, _)| t.to_vec());
        let [dq, dk, dv] = blocked_attention::backward(
            (
                self.buffer().as_slice(),
                keys.buffer().as_slice(),
                values.buffer().as_slice(),
            ),
            saved.out.buffer().as_slice(),
            saved.lse.buffer().as_slice(),
            upstream.buffer().as_slice(),
            saved.dims,
            saved.scale,
            saved.visibility(&lengths, &keep),
        );
        let op = "blocked_attention";
        [
            Tensor::from_parts(op, dq, self.shape().to_vec()),
            Tensor::from_parts(op, dk, keys.shape().to_vec()),
            Tensor::from_parts(op, dv, values.shape().to_vec()),
        ]
    }
}

/// Checks the three shapes and the block size; returns the sizes.
#[track_caller]
fn check_shapes(
    q: &[usize],
    k: &[usize],
    v: &[usize],
    options: &BlockedAttentionOptions,
) -> Dims {
    let op = "blocked_attention";
    check::ensure(q.len() >= 2 && k.len() >= 2 && v.len() >= 2, op, || {
        format!(
            "queries, keys and values need shape [..., entries, features], found {q:?}, {k:?} and {v:?}"
        )
    });
    let (lq, lk, lv) = (&q[..q.len() - 2], &k[..k.len() - 2], &v[..v.len() - 2]);
    check::ensure(lq == lk && lk == lv, op, || {
        format!(
            "the leading dimensions of queries {q:?}, keys {k:?} and values {v:?} differ ({lq:?}, {lk:?}, {lv:?})\n  expected: queries [..., Q, d], keys [..., K, d], values [..., K, dv] with the same leading dimensions\n  hint: expand a shared one first, e.g. keys.expand(…)"
        )
    });
    let (d, dk) = (q[q.len() - 1], k[k.len() - 1]);
    check::ensure(d == dk && d > 0, op, || {
        format!(
            "queries {q:?} and keys {k:?} must have the same number of features d ≥ 1 (the size that Q Kᵀ sums over), found {d} and {dk}"
        )
    });
    let (keys, value_keys) = (k[k.len() - 2], v[v.len() - 2]);
    check::ensure(keys == value_keys, op, || {
        format!(
            "keys {k:?} and values {v:?} must have one value per key, found {keys} keys and {value_keys} values"
        )
    });
    let dv = v[v.len() - 1];
    check::ensure(dv > 0, op, || {
        format!("values {v:?} have no features (dv = 0)")
    });
    check::positive(op, "the block size (keys per block)", options.block);
    Dims {
        batch: lq.iter().product(),
        queries: q[q.len() - 2],
        keys,
        features: d,
        value_features: dv,
        block: options.block,
    }
}

/// The lengths broadcast to `[N]` (one per batch row) or `[N, Q]`, checked whole and ≥ 0.
#[track_caller]
fn broadcast_lengths(
    lengths: &Tensor,
    leading: &[usize],
    dims: Dims,
) -> (Tensor, bool) {
    let op = "blocked_attention";
    let per_query = lengths.rank() == leading.len() + 1;
    check::ensure(per_query || lengths.rank() == leading.len(), op, || {
        format!(
            "lengths {:?} must have the queries' leading dimensions {leading:?} (one length per row of the batch) or those and the queries ({:?}), each dimension equal or 1",
            lengths.shape(),
            [leading, &[dims.queries]].concat()
        )
    });
    let target = if per_query {
        [leading, &[dims.queries]].concat()
    } else {
        leading.to_vec()
    };
    let lengths = lengths.to(&crate::Device::Cpu).broadcast_to(target);
    for (i, &len) in lengths.to_vec().iter().enumerate() {
        check::ensure(len >= 0.0 && len.fract() == 0.0, op, || {
            format!("lengths must be whole numbers ≥ 0, found {len} at position {i}")
        });
    }
    (lengths, per_query)
}

/// The keep mask broadcast to `[N, 1, K]` or `[N, Q, K]`, checked 0/1.
#[track_caller]
fn broadcast_keep(keep: &Tensor, leading: &[usize], dims: Dims) -> (Tensor, bool) {
    let op = "blocked_attention";
    let rank = leading.len() + 2;
    check::ensure(keep.rank() == rank, op, || {
        format!(
            "the keep mask {:?} must have rank {rank}: [..., 1, K] or [..., Q, K] for queries with leading dimensions {leading:?}, Q = {} and K = {}",
            keep.shape(),
            dims.queries,
            dims.keys
        )
    });
    let per_query = keep.shape()[rank - 2] != 1;
    let rows = if per_query { dims.queries } else { 1 };
    let keep = keep
        .to(&crate::Device::Cpu)
        .broadcast_to([leading, &[rows, dims.keys]].concat());
    check::zero_one(op, "the keep mask", &keep.to_vec());
    (keep, per_query)
}
