//! LSH attention (Reformer): vectors are hashed into buckets by random rotations, the
//! sequence is sorted by bucket, and attention runs within chunks of the sorted order.

use engine::random::rng_from_seed;
use engine::{Tensor, no_grad};

use super::{
    Sizes, chunks_with_neighbours, pad_positions, scale_or_default, sequence_sizes,
};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};

/// The score a query gives itself when [`LshOptions::exclude_self`] is on, Reformer's
/// (the Hugging Face port's value in `f32`): low enough that any other visible key
/// takes all the weight, finite so that a query with no other key attends to itself.
const SELF_SCORE: f32 = -1e5;

/// The settings of [`lsh_attention`] and [`lsh_buckets`].
///
/// ```
/// use attention::LshOptions;
/// let options = LshOptions { n_buckets: 8, chunk: 16, ..Default::default() };
/// assert_eq!((options.seed, options.exclude_self, options.scale), (0, true, None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LshOptions {
    /// The number of buckets (no default): 1 (no hashing: one bucket for all), or an even
    /// number, since the hash takes the argmax over `[xR, −xR]` with `R` of
    /// `n_buckets / 2` random directions; at most 2²⁴ (a bucket's number is an `f32`).
    pub n_buckets: usize,
    /// The number of positions of the sorted sequence in a chunk (no default: at least 1).
    /// Reformer takes it about as large as a bucket is expected to be, `n / n_buckets`, so
    /// that a bucket spans about two chunks.
    pub chunk: usize,
    /// The seed of the random rotations (default 0): the same seed gives the same buckets,
    /// call after call, whatever else draws from [`engine::manual_seed`]'s generator.
    pub seed: u64,
    /// Reformer's rule that a position attends to itself only when no other key is
    /// visible (default `true`). With shared queries and keys, `q · k` is largest for a
    /// vector with itself, which would otherwise take most of the weight.
    pub exclude_self: bool,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
}

impl Default for LshOptions {
    fn default() -> Self {
        LshOptions {
            n_buckets: 0,
            chunk: 0,
            seed: 0,
            exclude_self: true,
            scale: None,
        }
    }
}

/// The bucket of every position: `argmax([xR, −xR])` over the last dimension, where `R`
/// is a `[d, n_buckets / 2]` matrix of standard normal values drawn from
/// `options.seed` (random directions: vectors at a small angle tend to share the
/// direction they are closest to). With `n_buckets = 1` every position is in bucket 0.
/// The hash is of plain values: no gradient flows through it.
///
/// | argument | shape |
/// |---|---|
/// | `x` | `[B, n, d]`, the shared queries and keys |
/// | result | `[B, n]`, whole numbers in `0..n_buckets` |
///
/// One `R` serves every row of the batch (and every head folded into it).
///
/// ```
/// use attention::{lsh_buckets, LshOptions};
/// use engine::Tensor;
///
/// let options = LshOptions { n_buckets: 4, chunk: 2, ..Default::default() };
/// let x = Tensor::from_vec(vec![1.0, 0.0, 2.0, 0.0, -1.0, 0.0], [1, 3, 2]);
/// let buckets = lsh_buckets(&x, &options).to_vec();
/// assert_eq!(buckets[0], buckets[1]); // the same direction: the same bucket
/// assert_ne!(buckets[0], buckets[2]); // opposite directions: never the same
/// ```
#[track_caller]
pub fn lsh_buckets(x: &Tensor, options: &LshOptions) -> Tensor {
    let module = "lsh_buckets";
    check_options(module, options);
    super::vectors(module, "x", x);
    buckets(x, options)
}

/// The most buckets: a bucket's number is an `f32`, exact for whole numbers up to 2²⁴.
const MAX_BUCKETS: usize = 1 << 24;

#[track_caller]
fn check_options(module: &str, options: &LshOptions) {
    let b = options.n_buckets;
    check::ensure(b <= MAX_BUCKETS, module, || {
        format!(
            "n_buckets must be at most 2²⁴ = {MAX_BUCKETS}, found {b}: bucket numbers are f32 values, whole numbers exactly only up to 2²⁴"
        )
    });
    check::ensure(b == 1 || (b >= 2 && b.is_multiple_of(2)), module, || {
        format!(
            "n_buckets must be 1 or an even number ≥ 2, found {b}{}; hint: the hash is the argmax over [xR, −xR], two buckets per random direction",
            if b == 0 {
                " (it has no default: set it)"
            } else {
                ""
            }
        )
    });
    check::positive(module, "chunk", options.chunk);
    check::scale(module, options.scale);
}

/// The buckets, `[B, n]`, for checked options.
#[track_caller]
fn buckets(x: &Tensor, options: &LshOptions) -> Tensor {
    let (batch, n, d) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    if options.n_buckets == 1 || n == 0 {
        return Tensor::zeros([batch, n]);
    }
    let mut rng = rng_from_seed(options.seed);
    let rotations =
        Tensor::normal_with([d, options.n_buckets / 2], 0.0, 1.0, &mut rng);
    no_grad(|| {
        let rotated = x.detach().matmul(&rotations.to(&x.device()));
        Tensor::concat(&[&rotated, &-&rotated], -1).argmax(-1)
    })
}

/// Reformer's LSH self-attention, with one round of hashing: each position attends to
/// the positions hashed to its own bucket that are in its chunk of the sorted sequence
/// or the chunk before.
///
/// | argument | shape |
/// |---|---|
/// | `qk` | `[B, n, d]`: the queries, which are also the keys |
/// | `values` | `[B, n, dv]` |
/// | output | `[B, n, dv]` |
///
/// **The steps.**
/// 1. Hash: [`lsh_buckets`] puts each position in one of `n_buckets` buckets (plain
///    values, no gradient).
/// 2. Sort the positions by bucket, and within a bucket by position, then cut the sorted
///    sequence into chunks of `chunk` positions (the last one padded).
/// 3. Each chunk's queries attend to the keys of their own chunk and of the chunk before
///    (`2·chunk` keys, one batched product), keeping only keys of their own bucket, and
///    leaving themselves out while any other key is visible (when `exclude_self`). The
///    first chunk has no chunk before it: the sorted order does not wrap around (Reformer's
///    code lets the first chunk look back at the last one).
/// 4. Put the outputs back in the order of the positions.
///
/// The sort and the bucket test are bookkeeping on plain values; the attention itself is
/// differentiable, through `index_select` (the sort and its inverse) and the batched
/// products, so gradients reach `qk` and `values`.
///
/// **Scores.** Queries and keys are the same vectors, as in Reformer: the queries are `qk`
/// as given, the keys are `qk` normalised to unit length, `k = x / √(‖x‖² + 10⁻⁶)`, so a
/// score is `‖q‖ cos θ · scale` (Reformer normalises the keys so that a query does not
/// simply prefer long keys). The default scale is `1/√d`, as in the PyTorch port
/// `reformer_pytorch`; the Hugging Face port uses 1.
///
/// **Cost.** `O(n · chunk)` for the scores, `O(n log n)` for the sort. Not included:
/// several hash rounds (Reformer's `n_hashes`), causal order, and a padding mask.
///
/// With `n_buckets = 1` and `chunk ≥ n` it is full attention with keys normalised, and
/// without the diagonal when `exclude_self` (and `n ≥ 2`).
///
/// ```
/// use attention::{lsh_attention, lsh_buckets, LshOptions};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let (x, v) = (Tensor::randn([2, 32, 8]), Tensor::randn([2, 32, 4]));
/// let options = LshOptions { n_buckets: 4, chunk: 8, seed: 7, ..Default::default() };
/// let out = lsh_attention(&x, &v, &options);
/// assert_eq!(out.shape(), &[2, 32, 4]);
/// // The same seed, the same buckets: the same output.
/// assert_eq!(lsh_attention(&x, &v, &options).to_vec(), out.to_vec());
/// ```
#[track_caller]
pub fn lsh_attention(qk: &Tensor, values: &Tensor, options: &LshOptions) -> Tensor {
    let module = "lsh_attention";
    check_options(module, options);
    let Sizes { batch, n, d, dv } = sequence_sizes(module, "qk", qk, values);
    let scale = scale_or_default(module, options.scale, d);
    if n == 0 {
        return values.narrow(1, 0, 0);
    }
    let buckets = buckets(qk, options).to_vec();
    // The sorted order of each row, as indices into the flattened [B·n, ..] rows.
    let mut sorted = Vec::with_capacity(batch * n);
    let mut unsorted = vec![0.0; batch * n];
    let mut sorted_buckets = Vec::with_capacity(batch * n);
    for b in 0..batch {
        let row = &buckets[b * n..(b + 1) * n];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| row[i].total_cmp(&row[j])); // stable: position breaks ties
        for (slot, &i) in order.iter().enumerate() {
            sorted.push((b * n + i) as f32);
            unsorted[b * n + i] = (b * n + slot) as f32;
            sorted_buckets.push(row[i]);
        }
    }
    let sorted = Tensor::from_vec(sorted, [batch * n]);
    let unsorted = Tensor::from_vec(unsorted, [batch * n]);
    let in_order =
        |t: &Tensor, f: usize| t.reshape([batch * n, f]).index_select(0, &sorted);

    let size = options.chunk.min(n);
    let chunks = n.div_ceil(size);
    let len = chunks * size;
    let x = in_order(qk, d).reshape([batch, n, d]);
    let keys = &x / (x.square().sum_dim_keepdim(-1) + 1e-6).sqrt();
    let queries = pad_positions(&x, len).reshape([batch, chunks, size, d]);
    let keys = chunks_with_neighbours(&pad_positions(&keys, len), size, true, false);
    let v = in_order(values, dv).reshape([batch, n, dv]);
    let v = chunks_with_neighbours(&pad_positions(&v, len), size, true, false);
    let mut scores = queries.matmul_t(&keys) * scale; // [B, chunks, size, 2·size]
    if options.exclude_self {
        let slots = self_slots(size).to(&scores.device());
        scores = scores.masked_fill(&slots, SELF_SCORE);
    }
    let keep = same_bucket(&sorted_buckets, batch, n, chunks, size);
    let weights = masked_softmax_in(module, &scores, &Mask::keep(&keep), Fill::Safe);
    let out = weights.matmul(&v).reshape([batch, len, dv]);
    let out = if len == n { out } else { out.narrow(1, 0, n) };
    out.reshape([batch * n, dv])
        .index_select(0, &unsorted)
        .reshape([batch, n, dv])
}

/// `[1, 1, size, 2·size]`, 1 where the key slot is the query itself: row `r` of a chunk is
/// slot `size + r` of its keys (the chunk before comes first).
fn self_slots(size: usize) -> Tensor {
    let mut slots = vec![0.0; size * 2 * size];
    for r in 0..size {
        slots[r * 2 * size + size + r] = 1.0;
    }
    Tensor::from_vec(slots, [1, 1, size, 2 * size])
}

/// `[B, chunks, size, 2·size]`, 1 where query slot `s = c·size + r` and key slot
/// `u = (c − 1)·size + t` of the sorted sequence are both real positions in the same
/// bucket.
fn same_bucket(
    sorted_buckets: &[f32],
    batch: usize,
    n: usize,
    chunks: usize,
    size: usize,
) -> Tensor {
    let width = 2 * size;
    let mut keep = Vec::with_capacity(batch * chunks * size * width);
    for b in 0..batch {
        let bucket = |slot: usize| (slot < n).then(|| sorted_buckets[b * n + slot]);
        for c in 0..chunks {
            for r in 0..size {
                let query = bucket(c * size + r);
                for t in 0..width {
                    let key = (c * size + t).checked_sub(size).and_then(bucket);
                    let seen = query.is_some() && key == query;
                    keep.push(f32::from(u8::from(seen)));
                }
            }
        }
    }
    Tensor::from_vec(keep, [batch, chunks, size, width])
}
