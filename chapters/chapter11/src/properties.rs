//! The defining property of each method, checked on small random inputs: the exact
//! ones agree with full attention, outputs and gradients; the window and the sparse
//! pattern are full attention under their masks; low-rank with `k = n` and identity
//! projections is full attention; LSH is attention under its own keep mask, and with
//! one bucket and one chunk it is full attention of its shared vectors.

use attention::{
    LocalWindow, LshOptions, Mask, SdpaOptions, SparsePattern,
    local_window_attention_with, low_rank_attention, lsh_attention,
    scaled_dot_product_attention, scaled_dot_product_attention_with,
    sparse_attention,
};
use engine::Tensor;

use crate::methods::{Method, random_inputs};
use crate::patterns::lsh_keep_mask;

/// The largest `|a − b|` over two tensors of one shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape(), "max_abs_diff: shapes differ");
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Full attention under a keep mask `[n, n]` (shared by the batch).
fn masked_full(q: &Tensor, k: &Tensor, v: &Tensor, keep: &Tensor) -> Tensor {
    let options = SdpaOptions {
        mask: Mask::keep(&keep.unsqueeze(0)),
        ..Default::default()
    };
    scaled_dot_product_attention_with(q, k, v, &options).0
}

/// How far blocked attention is from full attention at `n` positions (seeded inputs):
/// the largest difference of the outputs, and of the gradients of `q`, `k` and `v`
/// for the loss `output.sum()`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactGap {
    /// The outputs.
    pub output: f32,
    /// The gradients of the queries, keys and values.
    pub grads: [f32; 3],
}

// ANCHOR: exact_gap
/// Runs full and blocked attention forward and backward on the same seeded inputs and
/// compares the outputs and the three gradients.
pub fn exact_gap(n: usize) -> ExactGap {
    let (q, k, v) = random_inputs(n, 1);
    let run = |method: Method| {
        let leaf = |t: &Tensor| t.detach().requires_grad_();
        let (q, k, v) = (leaf(&q), leaf(&k), leaf(&v));
        let out = method.attend(&q, &k, &v);
        out.sum().backward();
        let grads = [&q, &k, &v].map(|t| t.grad().expect("a gradient"));
        (out, grads)
    };
    let (full, full_grads) = run(Method::Full);
    let (blocked, blocked_grads) = run(Method::Blocked);
    ExactGap {
        output: max_abs_diff(&full, &blocked),
        grads: [0, 1, 2].map(|i| max_abs_diff(&full_grads[i], &blocked_grads[i])),
    }
}
// ANCHOR_END: exact_gap

/// `[1, n, d]` queries, keys and values for the pattern checks, seeded.
fn small_inputs(n: usize, d: usize) -> (Tensor, Tensor, Tensor) {
    engine::manual_seed(3);
    (
        Tensor::randn([1, n, d]),
        Tensor::randn([1, n, d]),
        Tensor::randn([1, n, d]),
    )
}

/// The local window against full attention under its keep mask: the largest
/// difference.
pub fn window_gap(n: usize, window: &LocalWindow) -> f32 {
    let (q, k, v) = small_inputs(n, 8);
    let fast = local_window_attention_with(&q, &k, &v, window);
    max_abs_diff(&fast, &masked_full(&q, &k, &v, &window.keep_mask(n)))
}

/// The sparse pattern against full attention under its keep mask: the largest
/// difference.
pub fn sparse_gap(n: usize, pattern: &SparsePattern) -> f32 {
    let (q, k, v) = small_inputs(n, 8);
    let fast = sparse_attention(&q, &k, &v, pattern);
    max_abs_diff(&fast, &masked_full(&q, &k, &v, &pattern.keep_mask(n)))
}

/// Low-rank attention with `k = n` and `E = F = I` against full attention: the
/// largest difference.
pub fn low_rank_identity_gap(n: usize) -> f32 {
    let (q, k, v) = small_inputs(n, 8);
    let eye = Tensor::ones([n, n]).tril(0).triu(0);
    let (full, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    max_abs_diff(&low_rank_attention(&q, &k, &v, &eye, &eye), &full)
}

// ANCHOR: lsh_as_masked
/// What LSH attention computes, written as full attention: queries `x`, keys `x`
/// normalised to unit length, a query's score with itself set to `-1e5` (it is used
/// only when no other key is visible), and `mask: [n, n]` keeping the keys it sees.
pub fn shared_qk_attention(x: &Tensor, v: &Tensor, keep: &Tensor) -> Tensor {
    let (n, d) = (x.size(1), x.size(2));
    let keys = x / &(x.square().sum_dim_keepdim(-1) + 1e-6).sqrt();
    let scores = x.matmul_t(&keys) * (1.0 / (d as f32).sqrt());
    let diagonal = Tensor::ones([n, n]).tril(0).triu(0).unsqueeze(0);
    let scores = scores.masked_fill(&diagonal, -1e5);
    let mask = Mask::keep(&keep.unsqueeze(0));
    attention::masked_softmax(&scores, &mask, attention::Fill::Safe).matmul(v)
}
// ANCHOR_END: lsh_as_masked

/// LSH attention against [`shared_qk_attention`] under [`lsh_keep_mask`]: the largest
/// difference.
pub fn lsh_gap(n: usize, options: &LshOptions) -> f32 {
    let (x, _, v) = small_inputs(n, 8);
    let fast = lsh_attention(&x, &v, options);
    let keep = lsh_keep_mask(&x, options);
    max_abs_diff(&fast, &shared_qk_attention(&x, &v, &keep))
}

/// LSH with one bucket and one chunk of all `n` positions against
/// [`shared_qk_attention`] with every key kept: the largest difference.
pub fn lsh_one_bucket_gap(n: usize) -> f32 {
    let (x, _, v) = small_inputs(n, 8);
    let options = LshOptions {
        n_buckets: 1,
        chunk: n,
        ..Default::default()
    };
    let all = Tensor::ones([n, n]);
    max_abs_diff(
        &lsh_attention(&x, &v, &options),
        &shared_qk_attention(&x, &v, &all),
    )
}
