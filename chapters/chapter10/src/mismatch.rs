//! Pitfall 1: the forgotten `unsqueeze`.
//!
//! The single-query form of additive attention (a decoder's step) has one query per
//! example, `[B, h]` once projected, and `K` projected keys per example, `[B, K, h]`.
//! The query must become `[B, 1, h]` before the addition, so that it broadcasts over
//! the keys of *its own* example. Forget the `unsqueeze`, and broadcasting lines up
//! the query's batch dimension with the keys' dimension `K` instead:
//!
//! - when `B ≠ K` the shapes do not broadcast and the engine refuses, naming both;
//! - when `B = K` they do, and every example's keys are scored against the query of
//!   *another* example: a `[B, K, h]` tensor of the right shape and the wrong values.

use engine::Tensor;
use lesson::Trace;

// ANCHOR: energies
/// The energies `tanh(W_q q + W_k kⱼ)` of the single-query form, done right: the
/// projected query `[B, h]` becomes `[B, 1, h]` and broadcasts over the `K` keys of
/// its example. Returns `[B, K, h]`.
pub fn energies(query: &Tensor, keys: &Tensor) -> Tensor {
    (query.unsqueeze(1) + keys).tanh()
}

/// The same line with the `unsqueeze` forgotten: `[B, h] + [B, K, h]` reads the query
/// as `[1, B, h]`, so key `j` of every example meets the query of example `j`.
pub fn energies_forgotten_unsqueeze(query: &Tensor, keys: &Tensor) -> Tensor {
    (query + keys).tanh()
}
// ANCHOR_END: energies

// ANCHOR: checked
/// [`energies`] behind the checks a module makes at its boundary: a query `[B, h]`
/// and keys `[B, K, h]` of one batch size and one hidden size. A wrong call stops
/// here, at the caller's line, with both shapes, instead of broadcasting into
/// something else.
#[track_caller]
pub fn checked_energies(query: &Tensor, keys: &Tensor) -> Tensor {
    let (q, k) = (query.shape(), keys.shape());
    assert!(
        q.len() == 2 && k.len() == 3 && q[0] == k[0] && q[1] == k[2],
        "checked_energies: expected the query [B, h] and the keys [B, K, h], \
         found {q:?} and {k:?}"
    );
    energies(query, keys)
}
// ANCHOR_END: checked

/// The attention weights of the single-query form for given energies `[B, K, h]` and
/// a score vector `v: [h]`: `softmax(energies · v)` over the keys, `[B, K]`.
pub fn weights(energies: &Tensor, v: &Tensor) -> Tensor {
    energies.matmul(&v.unsqueeze(1)).squeeze(-1).softmax(-1)
}

/// A seeded example of the single-query form: `(query [B, h], keys [B, K, h], v
/// [h])`.
pub fn example(batch: usize, keys: usize, hidden: usize) -> (Tensor, Tensor, Tensor) {
    engine::manual_seed(10);
    (
        Tensor::randn([batch, hidden]),
        Tensor::randn([batch, keys, hidden]),
        Tensor::randn([hidden]),
    )
}

/// The shapes of both versions, recorded step by step: the trace shows the query
/// going into the addition as `[B, h]` where the layout needs `[B, 1, h]`.
pub fn trace(query: &Tensor, keys: &Tensor) -> Trace {
    let mut trace = Trace::default();
    trace.record("query", "[B, h]", query);
    trace.record("keys", "[B, K, h]", keys);
    trace.record("query.unsqueeze(1)", "[B, 1, h]", &query.unsqueeze(1));
    trace.record("energies", "[B, K, h]", &energies(query, keys));
    trace.record(
        "forgotten: query + keys",
        "[B, K, h]?",
        &energies_forgotten_unsqueeze(query, keys),
    );
    trace
}
