//! Attention for long sequences: four ways to avoid the `[n, n]` score matrix.
//!
//! Full self-attention compares every position with every other: for a sequence of `n`
//! positions it computes and stores `n²` scores per batch row (and head), so doubling the
//! length quadruples the time and the memory. Each method here keeps only a part of that
//! matrix, or a smaller matrix that stands in for it, and never builds the `[n, n]` one.
//! All four are ordinary functions of the engine's differentiable ops, so gradients flow
//! to their inputs (and to [`LowRankAttention`]'s projections) as through any other
//! attention.
//!
//! | method | query `i` attends to | time and memory | equals full attention when |
//! |---|---|---|---|
//! | [`local_window_attention`] | keys `j` with `i − w ≤ j ≤ i + w` (causal: `i − w ≤ j ≤ i`) | `O(n·w)` | `w ≥ n − 1` |
//! | [`sparse_attention`] | its own block of `block` positions, plus the first `global` positions; those see everything | `O(n·(block + global))` | `block ≥ n` or `global ≥ n` |
//! | [`LowRankAttention`], [`low_rank_attention`] | `k` mixtures of the keys, `E K`, with values `F V` | `O(n·k)` | `k = n` and `E = F = I` |
//! | [`lsh_attention`] | keys hashed to its own bucket, within its chunk of the sorted sequence and the chunk before | `O(n·chunk)`, plus an `O(n log n)` sort | one bucket, `chunk ≥ n` |
//!
//! - **Local window** (Longformer's sliding window, Beltagy et al., 2020): most of what a
//!   token needs is nearby. The sequence is cut into chunks of `w` positions, and each
//!   chunk's queries are compared with the keys of their own and the two neighbouring
//!   chunks, `3w` keys, in one batched product `[B, n/w, w, d] × [B, n/w, 3w, d]ᵀ`; a band
//!   mask keeps the keys within distance `w`.
//! - **Sparse pattern** (BigBird, Zaheer et al., 2020; Longformer's global tokens): blocks
//!   of local attention, which cannot carry information between blocks, plus a few global
//!   positions that read and are read by every position, a two-step path between any two
//!   tokens.
//! - **Low rank** (Linformer, Wang et al., 2020): the `[n, n]` weights of a trained model
//!   are close to low rank, so the `n` keys and values are replaced by `k` learned
//!   mixtures of them, `E K` and `F V` with `E, F: [k, n]`. Every query still sees every
//!   position, through the mixtures; the length is fixed by `E` and `F`.
//! - **LSH** (Reformer, Kitaev et al., 2020): the softmax is dominated by the few keys
//!   closest to the query, so similar vectors are put in the same bucket by random
//!   rotations, the sequence is sorted by bucket, and attention is computed only within
//!   chunks of the sorted order. Queries and keys are the same vectors, so that a query
//!   and the keys it would attend to most hash alike.
//!
//! Local window and sparse attention are exact for their pattern: they equal
//! [`scaled_dot_product_attention_with`](crate::scaled_dot_product_attention_with) with
//! the pattern as a [`Mask::keep`](crate::Mask::keep) (their `keep_mask(n)` methods give
//! that `[n, n]` mask, to plot or to compare with). Low-rank and LSH attention change the
//! computation itself, and are exact only in the cases in the last column.
//!
//! Common conventions: queries and keys `[B, n, d]` and values `[B, n, dv]`, where `B` may
//! be batch × heads (fold the heads into the batch first); self-attention over one
//! sequence, so queries and keys are the same `n` positions (only the low-rank form
//! accepts another number of queries); the output is `[B, n, dv]`; scores are scaled by
//! `1/√d` unless a `scale` is given. The functions return the output only: the weights
//! they compute are not an `[n, n]` matrix, which is the point.
//!
//! One file per method: `window.rs`, `sparse.rs`, `low_rank.rs`, `lsh.rs`; this file holds
//! what they share (the argument checks, padding, and cutting a sequence into chunks with
//! their neighbours).

mod low_rank;
mod lsh;
mod sparse;
mod window;

pub use low_rank::{LowRankAttention, LowRankAttentionConfig, low_rank_attention};
pub use lsh::{LshOptions, lsh_attention, lsh_buckets};
pub use sparse::{SparsePattern, sparse_attention};
pub use window::{LocalWindow, local_window_attention, local_window_attention_with};

use engine::Tensor;

use crate::check;

/// The sizes of a self-attention call: `[B, n, d]` queries and keys, `[B, n, dv]` values.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    batch: usize,
    n: usize,
    d: usize,
    dv: usize,
}

/// Checks queries `[B, n, d]`, keys `[B, n, d]` and values `[B, n, dv]` for self-attention:
/// ranks, one batch size, one query size `d ≥ 1`, and the same `n` positions for all three.
#[track_caller]
fn self_attention_sizes(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
) -> Sizes {
    let (batch, n, d) = vectors(module, "queries", queries);
    check::rank(module, "keys", keys, 3, "[B, n, d]");
    check::rank(module, "values", values, 3, "[B, n, dv]");
    check::size(
        module,
        "keys",
        keys,
        0,
        batch,
        "the batch size of the queries",
    );
    check::size(module, "keys", keys, 2, d, "the query size d");
    check::ensure(keys.shape()[1] == n, module, || {
        format!(
            "queries {:?} and keys {:?} must be the same n positions (dimension 1), found {n} queries and {} keys; hint: this is self-attention over one sequence, so pass the same positions' queries and keys (only low_rank_attention accepts another number of queries)",
            queries.shape(),
            keys.shape(),
            keys.shape()[1]
        )
    });
    check::size(
        module,
        "values",
        values,
        0,
        batch,
        "the batch size of the queries",
    );
    check::keys_match_values(module, keys, values);
    Sizes {
        batch,
        n,
        d,
        dv: values.shape()[2],
    }
}

/// Checks one sequence of vectors `x: [B, n, d]` (named `name`), `d ≥ 1`, and its values
/// `[B, n, dv]`.
#[track_caller]
fn sequence_sizes(module: &str, name: &str, x: &Tensor, values: &Tensor) -> Sizes {
    let (batch, n, d) = vectors(module, name, x);
    check::rank(module, "values", values, 3, "[B, n, dv]");
    let of_x = format!("the batch size of the {name}");
    check::size(module, "values", values, 0, batch, &of_x);
    check::ensure(values.shape()[1] == n, module, || {
        format!(
            "{name} {:?} and values {:?} must be the same n positions (dimension 1), found {n} and {}",
            x.shape(),
            values.shape(),
            values.shape()[1]
        )
    });
    Sizes {
        batch,
        n,
        d,
        dv: values.shape()[2],
    }
}

/// Checks that `x` (named `name`) is `[B, n, d]` with `d ≥ 1`, and returns `(B, n, d)`.
#[track_caller]
fn vectors(module: &str, name: &str, x: &Tensor) -> (usize, usize, usize) {
    check::rank(module, name, x, 3, "[B, n, d]");
    let (batch, n, d) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    check::ensure(d > 0, module, || {
        format!(
            "{name} {:?} have no features (d = 0): every score would be an empty sum and the scale 1/√d infinite; hint: check the size that was split or narrowed to make them",
            x.shape()
        )
    });
    (batch, n, d)
}

/// The checked score scale: `scale`, or `1/√d` when it is `None`.
#[track_caller]
fn scale_or_default(module: &str, scale: Option<f32>, d: usize) -> f32 {
    check::scale(module, scale);
    scale.unwrap_or(1.0 / (d as f32).sqrt())
}

/// `x: [B, n, f]` with zero rows appended up to `len ≥ n` positions. The zeros are
/// constants; what matters is that the callers mask them out as keys.
#[track_caller]
fn pad_positions(x: &Tensor, len: usize) -> Tensor {
    let (batch, n, f) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    if len == n {
        return x.clone();
    }
    let zeros = Tensor::zeros([batch, len - n, f]).to(&x.device());
    Tensor::concat(&[x, &zeros], 1)
}

/// Cuts `x: [B, chunks · size, f]` into chunks of `size` positions and gives each chunk
/// its own rows together with those of the chunk before it (`before`) and the chunk after
/// it (`after`): `[B, chunks, (before + 1 + after) · size, f]`. Slot `t` of chunk `c` holds
/// position `(c − before) · size + t`; the chunks past either end are zeros, for the
/// caller to mask.
///
/// This copies `x` once per neighbour, so it costs `O(n · f)` for any length, where the
/// scores it lets a caller compute against a whole `[B, n, f]` would cost `O(n²)`.
#[track_caller]
fn chunks_with_neighbours(
    x: &Tensor,
    size: usize,
    before: bool,
    after: bool,
) -> Tensor {
    let (batch, len, f) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    let chunks = len / size;
    let own = x.reshape([batch, chunks, size, f]);
    let edge = Tensor::zeros([batch, 1, size, f]).to(&x.device());
    let padded = Tensor::concat(&[&edge, &own, &edge], 1); // [B, chunks + 2, size, f]
    let mut parts = Vec::with_capacity(3);
    if before {
        parts.push(padded.narrow(1, 0, chunks));
    }
    parts.push(own.clone());
    if after {
        parts.push(padded.narrow(1, 2, chunks));
    }
    Tensor::concat(&parts, 2)
}
