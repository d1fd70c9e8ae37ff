//! Exact attention in blocks, `softmax(Q Kᵀ · scale) V`, without the `[Q, K]` weights:
//! the forward pass with an online softmax and the backward pass that recomputes the
//! weights block by block (the method of FlashAttention, written for a CPU).
//!
//! **Forward.** For each run of [`QUERY_BLOCK`] queries, the keys and values go by in
//! blocks of `block` keys. Each row keeps a running maximum `m`, a running sum `l` of
//! `exp(s − m)` and a running output `acc = Σ exp(s − m) v`. A block's scores `S` are one
//! matrix product; a row whose maximum rises from `m` to `m'` rescales what it holds by
//! `exp(m − m')` before it adds the block's terms; at the end `out = acc / l`. Each row
//! also keeps `lse = m + ln l`, the log of the softmax's denominator: `O(Q)` floats
//! instead of the `O(Q·K)` weights.
//!
//! **Backward.** With `lse`, the weights of any block come back as `P = exp(S − lse)`
//! from one product. With `D = rowsum(dO ⊙ O)`, the gradients are, block by block,
//! `dV += Pᵀ dO`, `dP = dO Vᵀ`, `dS = P ⊙ (dP − D)`, `dQ += dS K · scale` and
//! `dK += dSᵀ Q · scale`: four products per block, and nothing of size `Q·K` is kept.
//!
//! **Masks.** A row sees keys `0..hi` with `hi` the smallest of `K`, its length limit
//! and (causal order) `q + offset + 1`; a keep mask can hide any other key. A hidden key
//! has weight exactly 0; a row that sees no key has output 0, and its gradients are 0
//! (the safe fill of the attention library). A block that no row of a run can see is
//! skipped, which changes no bit: a row adds nothing for a block it cannot see.
//!
//! **Same bits everywhere.** Products go through `gemm` (one definition, every path); the
//! exponentials are the engine's own (`math.rs`); sums go in the fixed lanes of
//! `lanes.rs`. The result depends on `block` (the order in which the online softmax meets
//! the keys) and on nothing else: not the kernel path, not the number of threads. Work
//! is split between threads by runs of queries (forward) and by batch rows (backward),
//! each computed whole by one thread.
//!
//! Scratch memory is `O(QUERY_BLOCK · block)` per thread, outside the tensors.

use super::gemm::{self, View};
use super::lanes::{dot, lane_max, lane_sum};
use super::math::{exp, log};
use super::pool::{self, Task};
use crate::kernels::{self, KernelPath};
use crate::spare;

/// Queries per run: part of the result's definition only in the backward pass, where
/// `dK` and `dV` sum over runs of this many queries in order.
pub(crate) const QUERY_BLOCK: usize = 256;

/// Sizes of one call: `N` batch rows (batch and heads together), `Q` queries, `K` keys,
/// `d` features of queries and keys, `dv` of values, and keys per block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub(crate) batch: usize,
    pub(crate) queries: usize,
    pub(crate) keys: usize,
    pub(crate) features: usize,
    pub(crate) value_features: usize,
    pub(crate) block: usize,
}

/// Which keys each row sees (already checked and broadcast by the op).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Visibility<'a> {
    /// Query `q` sees keys `k ≤ q + offset`.
    pub(crate) causal_offset: Option<usize>,
    /// Keys `0..len` are visible: `[N]` (one length per batch row) or `[N, Q]`, as
    /// whole numbers ≥ 0; with `per_query` telling which.
    pub(crate) lengths: Option<(&'a [f32], bool)>,
    /// A 0/1 keep mask `[N, 1, K]` (one row per batch row) or `[N, Q, K]`, with
    /// `per_query` telling which.
    pub(crate) keep: Option<(&'a [f32], bool)>,
}

impl Visibility<'_> {
    /// The keys `0..hi` that row `q` of batch row `n` may see before the keep mask.
    #[inline(always)]
    fn limit(&self, dims: Dims, n: usize, q: usize) -> usize {
        let mut hi = dims.keys;
        if let Some(offset) = self.causal_offset {
            // Saturating: an offset of `usize::MAX` (no key is in the future) must not wrap.
            hi = hi.min(q.saturating_add(offset).saturating_add(1));
        }
        if let Some((lengths, per_query)) = self.lengths {
            let len = lengths[if per_query { n * dims.queries + q } else { n }];
            // Checked whole and ≥ 0 by the op; `as` saturates anything larger than K.
            hi = hi.min(len as usize);
        }
        hi
    }

    /// The keep mask's row for query `q` of batch row `n`, if there is a mask.
    #[inline(always)]
    fn keep_row(&self, dims: Dims, n: usize, q: usize) -> Option<&[f32]> {
        self.keep.map(|(keep, per_query)| {
            let row = if per_query { n * dims.queries + q } else { n };
            &keep[row * dims.keys..(row + 1) * dims.keys]
        })
    }
}

/// The forward pass: `(out [N, Q, dv], lse [N, Q])`. A row that sees no key has output 0
/// and `lse = +∞` (so that `exp(s − lse)` is 0 in the backward pass).
pub(crate) fn forward(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    dims: Dims,
    scale: f32,
    visibility: Visibility,
) -> (Vec<f32>, Vec<f32>) {
    let on = (kernels::active(), pool::product_threads());
    forward_on(on, (q, k, v), dims, scale, visibility)
}

/// [`forward`] on the kernel path `path` with up to `threads` threads.
fn forward_on(
    (path, threads): (KernelPath, usize),
    (q, k, v): (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
) -> (Vec<f32>, Vec<f32>) {
    let (nq, dv) = (dims.batch * dims.queries, dims.value_features);
    let mut out = spare::for_overwrite(nq * dv);
    let mut lse = vec![0.0; nq];
    if nq == 0 {
        return (out, lse);
    }
    // Runs of queries: (batch row, first query, its output rows, its lse entries).
    let mut runs = Vec::new();
    for (n, (out_n, lse_n)) in out
        .chunks_mut(dims.queries * dv.max(1))
        .zip(lse.chunks_mut(dims.queries))
        .enumerate()
    {
        let (out_runs, lse_runs) = (
            out_n.chunks_mut(QUERY_BLOCK * dv.max(1)),
            lse_n.chunks_mut(QUERY_BLOCK),
        );
        for (r, (o, l)) in out_runs.zip(lse_runs).enumerate() {
            runs.push((n, r * QUERY_BLOCK, o, l));
        }
    }
    let work = |group: &mut [(usize, usize, &mut [f32], &mut [f32])]| {
        let mut scratch = Scratch::new(dims);
        for (n, q0, out, lse) in group.iter_mut() {
            forward_run_on(
                path,
                (q, k, v),
                dims,
                scale,
                visibility,
                (*n, *q0),
                out,
                lse,
                &mut scratch,
            );
        }
    };
    split_between_threads(&mut runs, threads, work);
    (out, lse)
}

/// The gradients `(dQ, dK, dV)` of the forward pass, given its inputs, its output and
/// `lse`, and `grad_out`, the gradient of the loss with respect to the output.
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward(
    qkv: (&[f32], &[f32], &[f32]),
    out: &[f32],
    lse: &[f32],
    grad_out: &[f32],
    dims: Dims,
    scale: f32,
    visibility: Visibility,
) -> [Vec<f32>; 3] {
    let on = (kernels::active(), pool::product_threads());
    let saved = (out, lse, grad_out);
    backward_on(on, qkv, saved, dims, scale, visibility)
}

/// [`backward`] on the kernel path `path` with up to `threads` threads.
fn backward_on(
    (path, threads): (KernelPath, usize),
    (q, k, v): (&[f32], &[f32], &[f32]),
    (out, lse, grad_out): (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
) -> [Vec<f32>; 3] {
    let (d, dv) = (dims.features, dims.value_features);
    let mut dq = spare::zeros(dims.batch * dims.queries * d);
    let mut dk = spare::zeros(dims.batch * dims.keys * d);
    let mut dvv = spare::zeros(dims.batch * dims.keys * dv);
    if dims.batch == 0 || dims.queries == 0 || dims.keys == 0 {
        return [dq, dk, dvv];
    }
    let mut rows: Vec<_> = dq
        .chunks_mut(dims.queries * d.max(1))
        .zip(dk.chunks_mut(dims.keys * d.max(1)))
        .zip(dvv.chunks_mut(dims.keys * dv.max(1)))
        .enumerate()
        .map(|(n, ((dq, dk), dv))| (n, dq, dk, dv))
        .collect();
    let work = |group: &mut [RowGrads]| {
        let mut scratch = Scratch::new(dims);
        for (n, dq, dk, dv) in group.iter_mut() {
            let grads = (&mut **dq, &mut **dk, &mut **dv);
            backward_row_on(
                path,
                (q, k, v),
                (out, lse, grad_out),
                dims,
                scale,
                visibility,
                *n,
                grads,
                &mut scratch,
            );
        }
    };
    split_between_threads(&mut rows, threads, work);
    [dq, dk, dvv]
}

/// One batch row's gradients, as the backward pass hands them to a thread: its index and
/// its stretches of `dQ`, `dK` and `dV`.
type RowGrads<'a> = (usize, &'a mut [f32], &'a mut [f32], &'a mut [f32]);

/// Hands contiguous groups of `units` to up to `threads` of the product threads (one
/// group each), or runs them all here when there is one thread or one unit.
fn split_between_threads<T: Send>(
    units: &mut [T],
    threads: usize,
    work: impl Fn(&mut [T]) + Sync,
) {
    let threads = threads.min(units.len()).max(1);
    if threads == 1 {
        return work(units);
    }
    let per_thread = units.len().div_ceil(threads);
    let work = &work;
    pool::run_all(
        units
            .chunks_mut(per_thread)
            .map(|group| Box::new(move || work(group)) as Task)
            .collect(),
    );
}

/// Defines `$name`, which runs the `#[inline(always)]` function `$body` compiled for the
/// instructions of the kernel path it is given (the loops of `exp`, the scaling and the
/// sums vectorise to that width; every path gives the same bits), with the same
/// arguments.
macro_rules! on_path {
    ($name:ident => $body:ident ($($arg:ident: $ty:ty),* $(,)?)) => {
        #[allow(clippy::too_many_arguments)]
        fn $name(path: KernelPath, $($arg: $ty),*) {
            /// `$body` compiled for AVX-512.
            ///
            /// # Safety
            /// The CPU must support AVX-512F.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx512(path: KernelPath, $($arg: $ty),*) {
                $body(path, $($arg),*)
            }
            /// `$body` compiled for AVX2 with FMA.
            ///
            /// # Safety
            /// The CPU must support AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx2(path: KernelPath, $($arg: $ty),*) {
                $body(path, $($arg),*)
            }
            match path {
                // SAFETY: `kernels::active` names only paths this CPU supports.
                #[cfg(target_arch = "x86_64")]
                KernelPath::Avx512 => unsafe { avx512(path, $($arg),*) },
                // SAFETY: as above.
                #[cfg(target_arch = "x86_64")]
                KernelPath::Avx2 => unsafe { avx2(path, $($arg),*) },
                _ => $body(path, $($arg),*),
            }
        }
    };
}

on_path!(forward_run_on => forward_run(
    qkv: (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
    at: (usize, usize),
    out: &mut [f32],
    lse: &mut [f32],
    s: &mut Scratch,
));

on_path!(backward_row_on => backward_row(
    qkv: (&[f32], &[f32], &[f32]),
    saved: (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
    n: usize,
    grads: (&mut [f32], &mut [f32], &mut [f32]),
    s: &mut Scratch,
));

/// One thread's working space: a block of scores (then weights), a block of their
/// gradients, and the products' outputs before they are added in.
struct Scratch {
    scores: Vec<f32>,
    grad_scores: Vec<f32>,
    rows_out: Vec<f32>,
    keys_out: Vec<f32>,
    keys_out_v: Vec<f32>,
    /// Per row of a run: the factor `exp(m − m')` of the current block, and whether the
    /// row saw a key in it.
    rescale: Vec<f32>,
    seen: Vec<bool>,
    running_max: Vec<f32>,
    running_sum: Vec<f32>,
    limits: Vec<usize>,
}

impl Scratch {
    fn new(dims: Dims) -> Scratch {
        let block = dims.block.min(dims.keys).max(1);
        let wide = dims.features.max(dims.value_features);
        Scratch {
            scores: vec![0.0; QUERY_BLOCK * block],
            grad_scores: vec![0.0; QUERY_BLOCK * block],
            rows_out: vec![0.0; QUERY_BLOCK * wide],
            keys_out: vec![0.0; block * dims.features],
            keys_out_v: vec![0.0; block * dims.value_features],
            rescale: vec![0.0; QUERY_BLOCK],
            seen: vec![false; QUERY_BLOCK],
            running_max: vec![0.0; QUERY_BLOCK],
            running_sum: vec![0.0; QUERY_BLOCK],
            limits: vec![0; QUERY_BLOCK],
        }
    }
}

/// A row-major matrix read in place.
fn matrix(data: &[f32], rows: usize, cols: usize) -> View<'_> {
    View {
        data,
        rows,
        cols,
        transposed: false,
    }
}

/// The transpose of row-major `data: [cols, rows]`, read in place as `[rows, cols]`.
fn transposed(data: &[f32], rows: usize, cols: usize) -> View<'_> {
    View {
        data,
        rows,
        cols,
        transposed: true,
    }
}

/// The scores of `rows` queries against keys `k0..k0 + width` of batch row `n`, scaled,
/// hidden keys set to `-∞`, into `scores[..rows · width]`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn block_scores(
    path: KernelPath,
    (q, k): (&[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
    (n, q0, rows): (usize, usize, usize),
    (k0, width): (usize, usize),
    limits: &[usize],
    scores: &mut [f32],
) {
    let d = dims.features;
    let q_rows = &q[(n * dims.queries + q0) * d..(n * dims.queries + q0 + rows) * d];
    let keys = &k[(n * dims.keys + k0) * d..(n * dims.keys + k0 + width) * d];
    let scores = &mut scores[..rows * width];
    gemm::sgemm_on(
        path,
        matrix(q_rows, rows, d),
        transposed(keys, d, width),
        scores,
        1,
    );
    for (r, row) in scores.chunks_exact_mut(width).enumerate() {
        for s in row.iter_mut() {
            *s *= scale;
        }
        let visible = limits[r].saturating_sub(k0).min(width);
        row[visible..].fill(f32::NEG_INFINITY);
        if let Some(keep) = visibility.keep_row(dims, n, q0 + r) {
            for (s, &kept) in row[..visible].iter_mut().zip(&keep[k0..k0 + width]) {
                if kept == 0.0 {
                    *s = f32::NEG_INFINITY;
                }
            }
        }
    }
}

/// The forward pass of one run of queries `q0..q0 + rows` of batch row `n`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn forward_run(
    path: KernelPath,
    (q, k, v): (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
    (n, q0): (usize, usize),
    out: &mut [f32],
    lse: &mut [f32],
    s: &mut Scratch,
) {
    let (dv, rows) = (dims.value_features, lse.len());
    let block = dims.block;
    out.fill(0.0);
    s.running_max[..rows].fill(f32::NEG_INFINITY);
    s.running_sum[..rows].fill(0.0);
    for r in 0..rows {
        s.limits[r] = visibility.limit(dims, n, q0 + r);
    }
    let reach = s.limits[..rows].iter().copied().max().unwrap_or(0);
    for k0 in (0..reach).step_by(block) {
        let width = block.min(dims.keys - k0);
        block_scores(
            path,
            (q, k),
            dims,
            scale,
            visibility,
            (n, q0, rows),
            (k0, width),
            &s.limits,
            &mut s.scores,
        );
        // ANCHOR: online_softmax
        // The online softmax: each row's new maximum, its rescaling, its weights.
        for r in 0..rows {
            let row = &mut s.scores[r * width..(r + 1) * width];
            let block_max = lane_max(row);
            if block_max == f32::NEG_INFINITY && !row.iter().any(|x| x.is_nan()) {
                // No visible key in this block: weights 0, nothing to add (a NaN
                // score goes on, and makes the row's output NaN, as in full softmax).
                row.fill(0.0);
                s.seen[r] = false;
                continue;
            }
            let new_max = s.running_max[r].max(block_max);
            let rescale = exp(s.running_max[r] - new_max);
            for x in row.iter_mut() {
                *x = exp(*x - new_max);
            }
            s.running_sum[r] = s.running_sum[r] * rescale + lane_sum(row);
            s.running_max[r] = new_max;
            s.rescale[r] = rescale;
            s.seen[r] = true;
        }
        // ANCHOR_END: online_softmax
        // ANCHOR: rescale_output
        // Their weighted values, one product, added to each row that saw a key.
        let values = &v[(n * dims.keys + k0) * dv..(n * dims.keys + k0 + width) * dv];
        let weighted = &mut s.rows_out[..rows * dv];
        gemm::sgemm_on(
            path,
            matrix(&s.scores[..rows * width], rows, width),
            matrix(values, width, dv),
            weighted,
            1,
        );
        for r in 0..rows {
            if !s.seen[r] {
                continue;
            }
            let acc = &mut out[r * dv..(r + 1) * dv];
            for (a, &w) in acc.iter_mut().zip(&weighted[r * dv..(r + 1) * dv]) {
                *a = *a * s.rescale[r] + w;
            }
        }
        // ANCHOR_END: rescale_output
    }
    // ANCHOR: finish_rows
    for r in 0..rows {
        let total = s.running_sum[r];
        let acc = &mut out[r * dv..(r + 1) * dv];
        if total == 0.0 {
            acc.fill(0.0);
            lse[r] = f32::INFINITY;
        } else {
            for a in acc.iter_mut() {
                *a /= total;
            }
            lse[r] = s.running_max[r] + log(total);
        }
    }
    // ANCHOR_END: finish_rows
}

/// The gradients of batch row `n`: `dq [Q, d]`, `dk [K, d]`, `dv [K, dv]`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn backward_row(
    path: KernelPath,
    (q, k, v): (&[f32], &[f32], &[f32]),
    (out, lse, grad_out): (&[f32], &[f32], &[f32]),
    dims: Dims,
    scale: f32,
    visibility: Visibility,
    n: usize,
    (dq, dk, dv): (&mut [f32], &mut [f32], &mut [f32]),
    s: &mut Scratch,
) {
    let (d, dvf, block) = (dims.features, dims.value_features, dims.block);
    let row0 = n * dims.queries;
    // D = rowsum(dO ⊙ O), one per query.
    let grad_dot_out: Vec<f32> = (0..dims.queries)
        .map(|i| {
            let at = (row0 + i) * dvf..(row0 + i + 1) * dvf;
            dot(&grad_out[at.clone()], &out[at])
        })
        .collect();
    for k0 in (0..dims.keys).step_by(block) {
        let width = block.min(dims.keys - k0);
        let keys = &k[(n * dims.keys + k0) * d..(n * dims.keys + k0 + width) * d];
        let values =
            &v[(n * dims.keys + k0) * dvf..(n * dims.keys + k0 + width) * dvf];
        for q0 in (0..dims.queries).step_by(QUERY_BLOCK) {
            let rows = QUERY_BLOCK.min(dims.queries - q0);
            for r in 0..rows {
                s.limits[r] = visibility.limit(dims, n, q0 + r);
            }
            if s.limits[..rows].iter().all(|&hi| hi <= k0) {
                continue; // no row of this run sees a key of this block
            }
            block_scores(
                path,
                (q, k),
                dims,
                scale,
                visibility,
                (n, q0, rows),
                (k0, width),
                &s.limits,
                &mut s.scores,
            );
            // ANCHOR: recompute_weights
            // P = exp(S − lse): the weights, recomputed.
            for r in 0..rows {
                let row_lse = lse[row0 + q0 + r];
                for x in s.scores[r * width..(r + 1) * width].iter_mut() {
                    *x = exp(*x - row_lse);
                }
            }
            let weights = &s.scores[..rows * width];
            let g_rows = &grad_out[(row0 + q0) * dvf..(row0 + q0 + rows) * dvf];
            // dV += Pᵀ dO
            let dv_block = &mut s.keys_out_v[..width * dvf];
            gemm::sgemm_on(
                path,
                transposed(weights, width, rows),
                matrix(g_rows, rows, dvf),
                dv_block,
                1,
            );
            for (a, &b) in dv[k0 * dvf..(k0 + width) * dvf].iter_mut().zip(&*dv_block)
            {
                *a += b;
            }
            // dP = dO Vᵀ, then dS = P ⊙ (dP − D) · scale
            let grad_scores = &mut s.grad_scores[..rows * width];
            gemm::sgemm_on(
                path,
                matrix(g_rows, rows, dvf),
                transposed(values, dvf, width),
                grad_scores,
                1,
            );
            for r in 0..rows {
                let delta = grad_dot_out[q0 + r];
                let span = r * width..(r + 1) * width;
                for (g, &p) in
                    grad_scores[span.clone()].iter_mut().zip(&weights[span])
                {
                    *g = p * (*g - delta) * scale;
                }
            }
            // ANCHOR_END: recompute_weights
            // dQ += dS K
            let dq_rows = &mut s.rows_out[..rows * d];
            gemm::sgemm_on(
                path,
                matrix(grad_scores, rows, width),
                matrix(keys, width, d),
                dq_rows,
                1,
            );
            for (a, &b) in dq[q0 * d..(q0 + rows) * d].iter_mut().zip(&*dq_rows) {
                *a += b;
            }
            // dK += dSᵀ Q
            let q_rows = &q[(row0 + q0) * d..(row0 + q0 + rows) * d];
            let dk_block = &mut s.keys_out[..width * d];
            gemm::sgemm_on(
                path,
                transposed(grad_scores, width, rows),
                matrix(q_rows, rows, d),
                dk_block,
                1,
            );
            for (a, &b) in dk[k0 * d..(k0 + width) * d].iter_mut().zip(&*dk_block) {
                *a += b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::seeded_values as values;
    use super::*;

    /// Forward and backward results as bits, on `path` with `threads` threads.
    fn run(
        on: (KernelPath, usize),
        dims: Dims,
        visibility: Visibility,
    ) -> Vec<Vec<u32>> {
        let (n, q, k) = (dims.batch, dims.queries, dims.keys);
        let (d, dv) = (dims.features, dims.value_features);
        let (qs, ks, vs) = (
            values(n * q * d, 1),
            values(n * k * d, 2),
            values(n * k * dv, 3),
        );
        let g = values(n * q * dv, 4);
        let (out, lse) = forward_on(on, (&qs, &ks, &vs), dims, 0.3, visibility);
        let saved = (&out[..], &lse[..], &g[..]);
        let grads = backward_on(on, (&qs, &ks, &vs), saved, dims, 0.3, visibility);
        [out, lse]
            .iter()
            .chain(&grads)
            .map(|x| x.iter().map(|v| v.to_bits()).collect())
            .collect()
    }

    #[test]
    fn every_path_and_thread_count_gives_the_same_bits() {
        // Several runs of queries per batch row (300 > 256), blocks that do not divide the
        // keys, a causal offset and per-query lengths.
        let dims = Dims {
            batch: 3,
            queries: 300,
            keys: 290,
            features: 20,
            value_features: 9,
            block: 100,
        };
        let lengths: Vec<f32> = (0..3 * 300).map(|i| (i * 7 % 311) as f32).collect();
        let visibility = Visibility {
            causal_offset: Some(5),
            lengths: Some((&lengths, true)),
            keep: None,
        };
        let reference = run((KernelPath::Portable, 1), dims, visibility);
        for path in KernelPath::supported() {
            for threads in [1, 2, 3] {
                let got = run((path, threads), dims, visibility);
                assert!(got == reference, "{path} on {threads} threads differs");
            }
        }
    }
}
