//! A sparse pattern: attention within blocks, plus a few global positions that see and
//! are seen by every position (BigBird's block and global parts, Longformer's global
//! tokens).

use engine::Tensor;

use super::{Sizes, pad_positions, scale_or_default, self_attention_sizes};
use crate::check;
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};

/// The pattern of [`sparse_attention`]: blocks of `block` consecutive positions that see
/// each other, and `global` positions at the start that see everything and that everyone
/// sees.
///
/// | query `i` sees key `j` when | why |
/// |---|---|
/// | `i / block == j / block` | they are in the same block (integer division) |
/// | `j < global` | the key is global: every query reads it |
/// | `i < global` | the query is global: it reads every key |
///
/// Any one of the three is enough. The global positions are the first `global` ones
/// (Longformer's classification token, BigBird's `g` global tokens); give them that role by
/// what is put there. A global position sees everything, so it carries information
/// between blocks, which block attention alone cannot.
///
/// Not included: BigBird's random keys per block and its sliding window (see
/// [`LocalWindow`](crate::LocalWindow) for a window), and the strided pattern of the Sparse
/// Transformer (Child et al., 2019).
///
/// ```
/// use attention::SparsePattern;
///
/// let pattern = SparsePattern { block: 2, global: 1, ..Default::default() };
/// assert_eq!(pattern.keep_mask(5).to_vec(), vec![
///     1.0, 1.0, 1.0, 1.0, 1.0, // position 0 is global: it sees everything
///     1.0, 1.0, 0.0, 0.0, 0.0, // block {0, 1}
///     1.0, 0.0, 1.0, 1.0, 0.0, // block {2, 3}, and the global key 0
///     1.0, 0.0, 1.0, 1.0, 0.0,
///     1.0, 0.0, 0.0, 0.0, 1.0, // the last block holds only position 4
/// ]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SparsePattern {
    /// The number of positions in a block (no default: must be at least 1). The last
    /// block is shorter when `block` does not divide the length.
    pub block: usize,
    /// How many positions, from the start, are global (default 0: blocks only).
    pub global: usize,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
}

impl SparsePattern {
    /// True when query `i` may attend to key `j` (the table above).
    ///
    /// # Panics
    /// When `block` is 0.
    #[track_caller]
    pub fn sees(&self, i: usize, j: usize) -> bool {
        check::positive("SparsePattern::sees", "block", self.block);
        i / self.block == j / self.block || i < self.global || j < self.global
    }

    /// The whole pattern as an `[n, n]` tensor of 0s and 1s, row `i` holding 1 at the keys
    /// query `i` sees: to plot, or to give to
    /// [`scaled_dot_product_attention_with`](crate::scaled_dot_product_attention_with) as
    /// `Mask::keep(&mask.unsqueeze(0))`. This *is* the `n²` matrix [`sparse_attention`]
    /// avoids; keep `n` small.
    ///
    /// # Panics
    /// When `block` is 0.
    #[track_caller]
    pub fn keep_mask(&self, n: usize) -> Tensor {
        check::positive("SparsePattern::keep_mask", "block", self.block);
        let keep = (0..n)
            .flat_map(|i| (0..n).map(move |j| f32::from(u8::from(self.sees(i, j)))))
            .collect();
        Tensor::from_vec(keep, [n, n])
    }
}

/// Self-attention under a [`SparsePattern`]: block-local attention plus global positions,
/// in `O(n · (block + global))` time and memory, without an `[n, n]` matrix.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, n, d]` |
/// | `keys` | `[B, n, d]` |
/// | `values` | `[B, n, dv]` |
/// | output | `[B, n, dv]` |
///
/// The numbers are those of full attention under the pattern's mask,
/// `scaled_dot_product_attention_with(q, k, v, &SdpaOptions { mask:
/// Mask::keep(&pattern.keep_mask(n).unsqueeze(0)), .. })`, gradients included.
///
/// **How.** Two parts, with one softmax per query over everything it sees.
/// - A query that is not global compares itself with the `block` keys of its block (one
///   batched product `[B, n/block, block, d] × [B, n/block, block, d]ᵀ`, the sequence
///   padded with zeros to whole blocks) and with the `global` global keys (`[B, n, d] ×
///   [B, global, d]ᵀ`). The two score tables are joined side by side, `[B, n, block +
///   global]`, and one softmax runs over each row; a global key inside the query's own
///   block appears in both tables and is kept only in the first, so it is counted once.
/// - A global query sees every key: ordinary attention of `global` queries against all `n`
///   keys, `[B, global, n]` scores.
///
/// ```
/// use attention::{sparse_attention, SparsePattern};
/// use engine::Tensor;
///
/// // Values 0, 1, …, 5 with equal scores: each position averages the values it sees.
/// let (x, v) = (Tensor::zeros([1, 6, 2]), Tensor::arange(6).reshape([1, 6, 1]));
/// let pattern = SparsePattern { block: 2, global: 1, ..Default::default() };
/// let out = sparse_attention(&x, &x, &v, &pattern).to_vec();
/// let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
/// assert!(close(out[0], 2.5)); // global: the mean of 0..=5
/// assert!(close(out[1], 0.5)); // its block {0, 1}
/// assert!(close(out[2], 5.0 / 3.0)); // its block {2, 3} and the global position 0
/// ```
#[track_caller]
pub fn sparse_attention(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    pattern: &SparsePattern,
) -> Tensor {
    let module = "sparse_attention";
    check::positive(module, "SparsePattern::block", pattern.block);
    let Sizes { batch, n, d, dv } =
        self_attention_sizes(module, queries, keys, values);
    let scale = scale_or_default(module, pattern.scale, d);
    if n == 0 {
        return values.narrow(1, 0, 0);
    }
    // A block longer than the sequence is the whole sequence, one block.
    let block = pattern.block.min(n);
    let global = pattern.global.min(n);
    let blocks = n.div_ceil(block);
    let len = blocks * block;
    let (q, k, v) = (
        pad_positions(queries, len),
        pad_positions(keys, len),
        pad_positions(values, len),
    );
    let in_blocks = |t: &Tensor, f: usize| t.reshape([batch, blocks, block, f]);
    // [B, blocks, block, block] → one row of `block` scores per position, [B, len, block].
    let local = in_blocks(&q, d).matmul_t(&in_blocks(&k, d)) * scale;
    let local = local.reshape([batch, len, block]);
    let keep = pattern_keep(n, block, global, len);
    let out = if global == 0 {
        let weights =
            masked_softmax_in(module, &local, &Mask::keep(&keep), Fill::Safe);
        in_blocks(&weights, block)
            .matmul(&in_blocks(&v, dv))
            .reshape([batch, len, dv])
    } else {
        let global_keys = keys.narrow(1, 0, global);
        let to_global = q.matmul_t(&global_keys) * scale; // [B, len, global]
        let scores = Tensor::concat(&[&local, &to_global], -1);
        let weights =
            masked_softmax_in(module, &scores, &Mask::keep(&keep), Fill::Safe);
        let w_local = in_blocks(&weights.narrow(-1, 0, block), block);
        let w_global = weights.narrow(-1, block, global);
        let from_blocks =
            w_local.matmul(&in_blocks(&v, dv)).reshape([batch, len, dv]);
        from_blocks + w_global.matmul(&values.narrow(1, 0, global))
    };
    let out = if len == n { out } else { out.narrow(1, 0, n) };
    if global == 0 {
        return out;
    }
    // The global queries' rows, from ordinary attention over all n keys.
    let global_scores = queries.narrow(1, 0, global).matmul_t(keys) * scale;
    let global_rows = global_scores.softmax(-1).matmul(values);
    if global == n {
        return global_rows;
    }
    Tensor::concat(&[&global_rows, &out.narrow(1, global, n - global)], 1)
}

/// Which of the `[len, block + global]` scores a query keeps: row `i`, slot `t < block` is
/// key `(i / block)·block + t` of its block (kept when it is a real position), slot
/// `block + g` is global key `g` (kept unless it is in the query's block, where the first
/// part already holds it). Shape `[1, len, block + global]`, shared by the batch.
fn pattern_keep(n: usize, block: usize, global: usize, len: usize) -> Tensor {
    let width = block + global;
    let mut keep = Vec::with_capacity(len * width);
    for i in 0..len {
        let start = i / block * block;
        keep.extend((0..block).map(|t| f32::from(u8::from(start + t < n))));
        keep.extend((0..global).map(|g| f32::from(u8::from(g / block != i / block))));
    }
    Tensor::from_vec(keep, [1, len, width])
}
