//! The six ways the chapter computes self-attention over `n` positions, with the
//! settings it measures them at.

use attention::{
    LshOptions, SdpaOptions, SparsePattern, blocked_attention,
    local_window_attention, low_rank_attention, lsh_attention,
    scaled_dot_product_attention,
};
use engine::{DEFAULT_ATTENTION_BLOCK, Tensor};

/// Features per query, key and value in the chapter's measurements (one head of a
/// model of 512 features split into 8 heads).
pub const FEATURES: usize = 64;

// ANCHOR: settings
/// The local window's half-width: query `i` sees keys `i − 64 ..= i + 64`.
pub const WINDOW: usize = 64;
/// The sparse pattern: blocks of 128 positions, and the first 16 positions global.
pub const SPARSE: SparsePattern = SparsePattern {
    block: 128,
    global: 16,
    scale: None,
};
/// The number of mixtures of the low-rank method, `k`.
pub const LOW_RANK: usize = 128;
/// LSH: 16 buckets, chunks of 128 positions of the sorted sequence, seed 0.
pub const LSH: LshOptions = LshOptions {
    n_buckets: 16,
    chunk: 128,
    seed: 0,
    exclude_self: true,
    scale: None,
};
// ANCHOR_END: settings

/// One way of computing self-attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `softmax(Q Kᵀ / √d) V` with the `[n, n]` weights as a tensor
    /// ([`scaled_dot_product_attention`]).
    Full,
    /// The same numbers in blocks of keys, without the `[n, n]` weights
    /// ([`blocked_attention`], blocks of [`DEFAULT_ATTENTION_BLOCK`]).
    Blocked,
    /// [`local_window_attention`] with half-width [`WINDOW`].
    Window,
    /// [`attention::sparse_attention`] under [`SPARSE`].
    Sparse,
    /// [`low_rank_attention`] with [`LOW_RANK`] segment means ([`segment_means`]) as
    /// `E` and `F`.
    LowRank,
    /// [`lsh_attention`] with [`LSH`]: the queries are also the keys.
    Lsh,
}

impl Method {
    /// Every method, in the order of the tables.
    pub const ALL: [Method; 6] = [
        Method::Full,
        Method::Blocked,
        Method::Window,
        Method::Sparse,
        Method::LowRank,
        Method::Lsh,
    ];

    /// The approximations: every method but the two exact ones.
    pub const APPROXIMATIONS: [Method; 4] =
        [Method::Window, Method::Sparse, Method::LowRank, Method::Lsh];

    /// The name in the data file.
    pub fn key(self) -> &'static str {
        match self {
            Method::Full => "full",
            Method::Blocked => "blocked",
            Method::Window => "window",
            Method::Sparse => "sparse",
            Method::LowRank => "low_rank",
            Method::Lsh => "lsh",
        }
    }

    /// The method whose [`key`](Method::key) is `key`.
    pub fn from_key(key: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.key() == key)
    }

    /// The name in tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Method::Full => "full",
            Method::Blocked => "blocked",
            Method::Window => "window",
            Method::Sparse => "sparse",
            Method::LowRank => "low-rank",
            Method::Lsh => "LSH",
        }
    }

    /// Whether the method gives full attention's output (to rounding).
    pub fn is_exact(self) -> bool {
        matches!(self, Method::Full | Method::Blocked)
    }

    // ANCHOR: attend
    /// Self-attention of `q`, `k`, `v` (each `[B, n, d]`) by this method, with the
    /// chapter's settings. LSH uses `q` as both queries and keys and ignores `k`.
    pub fn attend(self, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
        match self {
            Method::Full => {
                scaled_dot_product_attention(q, k, v, &Default::default()).0
            }
            Method::Blocked => {
                let options = SdpaOptions::default();
                blocked_attention(q, k, v, &options, DEFAULT_ATTENTION_BLOCK)
            }
            Method::Window => local_window_attention(q, k, v, WINDOW),
            Method::Sparse => attention::sparse_attention(q, k, v, &SPARSE),
            Method::LowRank => {
                let e = segment_means(LOW_RANK.min(k.size(1)), k.size(1));
                low_rank_attention(q, k, v, &e, &e)
            }
            Method::Lsh => lsh_attention(q, v, &LSH),
        }
    }
    // ANCHOR_END: attend
}

// ANCHOR: segment_means
/// A `[k, n]` projection whose row `r` averages positions `r·n/k .. (r + 1)·n/k`:
/// `E K` is then `k` keys, each the mean of one stretch of the sequence. It needs no
/// training, unlike Linformer's learned `E` and `F` (Nyströmformer takes its
/// landmarks this way).
pub fn segment_means(k: usize, n: usize) -> Tensor {
    assert!(
        0 < k && k <= n,
        "segment_means: need 1 ≤ k ≤ n, found k = {k}, n = {n}"
    );
    let mut e = vec![0.0; k * n];
    for r in 0..k {
        let (start, end) = (r * n / k, (r + 1) * n / k);
        for j in start..end {
            e[r * n + j] = 1.0 / (end - start) as f32;
        }
    }
    Tensor::from_vec(e, [k, n])
}
// ANCHOR_END: segment_means

/// Seeded queries, keys and values for self-attention over `n` positions: three
/// `[1, n, FEATURES]` tensors of standard normal values.
pub fn random_inputs(n: usize, seed: u64) -> (Tensor, Tensor, Tensor) {
    engine::manual_seed(seed);
    (
        Tensor::randn([1, n, FEATURES]),
        Tensor::randn([1, n, FEATURES]),
        Tensor::randn([1, n, FEATURES]),
    )
}
