//! Which keys each query sees, as `[n, n]` keep masks to draw: the local window and
//! the sparse pattern from the library's own `keep_mask`, and LSH's, which depends on
//! the vectors, rebuilt here from its buckets.

use attention::{LocalWindow, LshOptions, SparsePattern, lsh_buckets};
use engine::Tensor;

/// The sequence length of the pattern figure.
pub const PATTERN_N: usize = 32;

/// The window of the figure: half-width 3.
pub const FIGURE_WINDOW: LocalWindow = LocalWindow {
    window: 3,
    causal: false,
    scale: None,
};

/// The sparse pattern of the figure: blocks of 8, the first 2 positions global.
pub const FIGURE_SPARSE: SparsePattern = SparsePattern {
    block: 8,
    global: 2,
    scale: None,
};

/// LSH in the figure: 4 buckets, chunks of 8.
pub const FIGURE_LSH: LshOptions = LshOptions {
    n_buckets: 4,
    chunk: 8,
    seed: 0,
    exclude_self: true,
    scale: None,
};

/// The order LSH puts the positions of one sequence in: by bucket, then by position.
/// `buckets` holds each position's bucket.
pub fn sorted_order(buckets: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..buckets.len()).collect();
    order.sort_by(|&i, &j| buckets[i].total_cmp(&buckets[j]));
    order
}

// ANCHOR: lsh_keep_mask
/// The `[n, n]` keep mask of [`lsh_attention`](attention::lsh_attention) for one
/// sequence `x: [1, n, d]`: query `i` sees key `j` when both hash to one bucket and,
/// in the sorted order, `j` is in `i`'s chunk or the chunk before it. (With
/// `exclude_self`, `i` uses itself only when it sees no other key.)
pub fn lsh_keep_mask(x: &Tensor, options: &LshOptions) -> Tensor {
    let n = x.size(1);
    let buckets = lsh_buckets(x, options).to_vec();
    let order = sorted_order(&buckets);
    let chunk = options.chunk.min(n);
    let mut keep = vec![0.0; n * n];
    for (s, &i) in order.iter().enumerate() {
        // Slots of the query's own chunk and the one before: `lo .. hi`.
        let hi = ((s / chunk + 1) * chunk).min(n);
        let lo = (s / chunk).saturating_sub(1) * chunk;
        for &j in &order[lo..hi] {
            if buckets[j] == buckets[i] {
                keep[i * n + j] = 1.0;
            }
        }
    }
    Tensor::from_vec(keep, [n, n])
}
// ANCHOR_END: lsh_keep_mask

/// `mask: [n, n]` with its rows and columns put in `order`: entry `(a, b)` is
/// `mask[order[a], order[b]]`.
pub fn reordered(mask: &[f32], order: &[usize]) -> Vec<f32> {
    let n = order.len();
    let mut out = Vec::with_capacity(n * n);
    for &i in order {
        for &j in order {
            out.push(mask[i * n + j]);
        }
    }
    out
}

/// The fraction of an `[n, n]` mask that is kept.
pub fn density(mask: &[f32]) -> f64 {
    mask.iter().filter(|&&m| m != 0.0).count() as f64 / mask.len() as f64
}

/// The vectors whose LSH pattern the figure draws: `[1, 32, 8]`, standard normal,
/// seeded.
pub fn figure_vectors() -> Tensor {
    engine::manual_seed(5);
    Tensor::randn([1, PATTERN_N, 8])
}
