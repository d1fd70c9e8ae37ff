//! Pitfall 6: the article's own tests, what they miss, and stronger ones.
//!
//! The article closes with two unit tests of its single-query additive attention, in
//! pytest:
//!
//! 1. **Shapes and sums**: on a batch whose first example has two padded keys, the
//!    context is `[B, dv]` and the weights `[B, K]`, every row of weights sums to 1
//!    (`torch.allclose(weights.sum(-1), torch.ones(B))`), and the weights of the
//!    masked positions are below `1e-6`.
//! 2. **Gradients flow**: after `context.sum().backward()`, `query.grad`, `keys.grad`
//!    and `attn.v.weight.grad` are `not None`.
//!
//! Both are here as functions that take the attention as a closure,
//! [`shapes_and_sums_hold`] and [`gradients_reach_everything`], so that they can be
//! run against the [`reference()`] implementation and against buggy ones. Those tests
//! are good at what they test: a mask read the wrong way round
//! ([`mask_wrong_sense`]), or a softmax over the wrong axis ([`softmax_wrong_axis`]),
//! breaks the sums of test 1. But their batch is square (`B = K`), has padding at the
//! end of one example only, no empty example, and test 2 asks only whether a gradient
//! *exists*. So they pass:
//!
//! - the forgotten `unsqueeze` of pitfall 1 ([`forgotten_unsqueeze`]), which is only
//!   refused when `B ≠ K`;
//! - a key projection cut out of the graph ([`detached_key_projection`]): the keys
//!   still get a gradient, `W_k` gets none, and test 2 never asks about `W_k`;
//! - the `-inf` fill of pitfall 4 ([`neg_inf_fill`]) and the article's own `-1e9`
//!   ([`article_fill`]), which differ from the safe fill only on an empty example;
//! - lengths computed from the mask ([`lengths_from_mask`]), right only while the
//!   padding is at the end.
//!
//! The stronger checks each aim at one of these: [`gradcheck_holds`] compares every
//! gradient with finite differences (`torch.autograd.gradcheck`);
//! [`batch_not_square`] runs a batch with `B ≠ K` and compares each example with
//! itself run alone; [`fully_masked_row`] gives one example no key at all;
//! [`mask_and_complement`] runs the mask and its complement (the padding at the
//! front), which is also the mask read in the other sense. [`table`] runs every
//! implementation through every check.

use std::cell::Cell;
use std::fmt;
use std::sync::Once;

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;
use engine::gradcheck::gradcheck;

use crate::mismatch::{energies, energies_forgotten_unsqueeze};

/// The size of a query (a decoder state).
pub const QUERY_SIZE: usize = 3;
/// The size of a key (an encoder output).
pub const KEY_SIZE: usize = 3;
/// The size of a value, and of the context.
pub const VALUE_SIZE: usize = 2;
/// The hidden size `h` of the scores.
pub const HIDDEN: usize = 4;
/// The batch size of the article's tests, which happens to equal [`ARTICLE_KEYS`].
pub const ARTICLE_BATCH: usize = 4;
/// The number of keys of the article's tests.
pub const ARTICLE_KEYS: usize = 4;

/// The parameters of the article's module: `query_proj`, `key_proj` and `v`.
#[derive(Clone, Debug)]
pub struct Params {
    /// The query projection `W_q`, `[h, QUERY_SIZE]`.
    pub w_q: Tensor,
    /// The key projection `W_k`, `[h, KEY_SIZE]`.
    pub w_k: Tensor,
    /// The score vector `v`, `[h]`.
    pub v: Tensor,
}

/// One call's inputs.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The decoder states, `[B, QUERY_SIZE]`.
    pub query: Tensor,
    /// The encoder outputs, `[B, K, KEY_SIZE]`.
    pub keys: Tensor,
    /// The values, `[B, K, VALUE_SIZE]`.
    pub values: Tensor,
    /// The article's mask, `[B, K]`: 1 for a real key, 0 for padding.
    pub keep: Tensor,
}

/// An attention implementation: `(context [B, VALUE_SIZE], weights [B, K])`.
pub type Attend = fn(&Params, &Batch) -> (Tensor, Tensor);

/// Parameters drawn from seed 6, as leaves that require gradients.
pub fn params() -> Params {
    engine::manual_seed(6);
    Params {
        w_q: Tensor::randn([HIDDEN, QUERY_SIZE]).requires_grad_(),
        w_k: Tensor::randn([HIDDEN, KEY_SIZE]).requires_grad_(),
        v: Tensor::randn([HIDDEN]).requires_grad_(),
    }
}

/// Inputs for the mask `keep` (`[B, K]`), drawn from seed 7, as leaves that require
/// gradients.
pub fn batch(keep: &Tensor) -> Batch {
    let (b, k) = (keep.size(0), keep.size(1));
    engine::manual_seed(7);
    Batch {
        query: Tensor::randn([b, QUERY_SIZE]).requires_grad_(),
        keys: Tensor::randn([b, k, KEY_SIZE]).requires_grad_(),
        values: Tensor::randn([b, k, VALUE_SIZE]).requires_grad_(),
        keep: keep.clone(),
    }
}

/// A keep mask `[B, K]` from the valid length of each example: `1` for `k < len`.
pub fn keep_from_lengths(lengths: &[usize], keys: usize) -> Tensor {
    let values = lengths
        .iter()
        .flat_map(|&len| (0..keys).map(move |k| f32::from(u8::from(k < len))))
        .collect();
    Tensor::from_vec(values, [lengths.len(), keys])
}

/// The article's test case: `B = K = 4`, example 0 with its last two keys padded
/// (`mask[0, 2:] = 0`), the others full.
pub fn article_case() -> (Params, Batch) {
    let keep = keep_from_lengths(&[2, 4, 4, 4], ARTICLE_KEYS);
    (params(), batch(&keep))
}

/// Runs `f`, turning a panic into `Err(message)`, without printing the panic: the
/// checks below report an implementation that panics as failing, with its message.
/// (The report is silenced for this thread only, so tests running beside it still
/// print theirs.)
pub fn caught<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                report(info);
            }
        }));
    });
    let previous = QUIET.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(previous));
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

// ANCHOR: helpers
/// The projected query `[B, h]` and keys `[B, K, h]`.
fn project(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    (b.query.matmul_t(&p.w_q), b.keys.matmul_t(&p.w_k))
}

/// The scores `energies · v`, `[B, K]`.
fn score(energies: &Tensor, v: &Tensor) -> Tensor {
    energies.matmul(&v.unsqueeze(1)).squeeze(-1)
}

/// The context `Σₖ weights[b, k] values[b, k]`, `[B, dv]`.
fn pool(weights: &Tensor, values: &Tensor) -> Tensor {
    weights.unsqueeze(1).bmm(values).squeeze(1)
}

/// The softmax over the keys of scores `[B, K]` under `mask`.
fn softmax_keys(scores: &Tensor, mask: &Mask, fill: Fill) -> Tensor {
    masked_softmax(&scores.unsqueeze(1), mask, fill).squeeze(1)
}
// ANCHOR_END: helpers

// ANCHOR: reference
/// The article's attention, right: `v · tanh(W_q q + W_k kⱼ)` with the query
/// unsqueezed, masked with the safe fill.
pub fn reference(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let weights = softmax_keys(&scores, &Mask::key_padding(&b.keep), Fill::Safe);
    (pool(&weights, &b.values), weights)
}
// ANCHOR_END: reference

// ANCHOR: buggy
/// As the article writes it: masked scores filled with `-1e9`.
pub fn article_fill(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let mask = Mask::key_padding(&b.keep);
    let weights = softmax_keys(&scores, &mask, Fill::Constant(-1e9));
    (pool(&weights, &b.values), weights)
}

/// Masked scores filled with `-inf` (pitfall 4).
pub fn neg_inf_fill(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let padding = b.keep.eq_mask(&Tensor::scalar(0.0));
    let weights = scores.masked_fill(&padding, f32::NEG_INFINITY).softmax(-1);
    (pool(&weights, &b.values), weights)
}

/// The forgotten `unsqueeze` of pitfall 1: `[B, h] + [B, K, h]`.
pub fn forgotten_unsqueeze(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies_forgotten_unsqueeze(&q, &k), &p.v);
    let weights = softmax_keys(&scores, &Mask::key_padding(&b.keep), Fill::Safe);
    (pool(&weights, &b.values), weights)
}

/// The mask read in PyTorch's `key_padding_mask` sense, 1 = ignore (pitfall 5).
pub fn mask_wrong_sense(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let mask = Mask::key_padding_ignore(&b.keep);
    let weights = softmax_keys(&scores, &mask, Fill::Safe);
    (pool(&weights, &b.values), weights)
}

/// `F.softmax(scores, dim=0)`: over the batch instead of the keys.
pub fn softmax_wrong_axis(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let padding = b.keep.eq_mask(&Tensor::scalar(0.0));
    let weights = scores.masked_fill(&padding, -1e9).softmax(0);
    (pool(&weights, &b.values), weights)
}

/// Valid lengths counted from the mask, `mask.sum(-1)`: right only when every
/// example's padding is at its end.
pub fn lengths_from_mask(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let (q, k) = project(p, b);
    let scores = score(&energies(&q, &k), &p.v);
    let lens = Mask::valid_lens(&b.keep.sum_dim(-1));
    let weights = softmax_keys(&scores, &lens, Fill::Safe);
    (pool(&weights, &b.values), weights)
}

/// The key projection's weight detached (as after `W_k.weight.data` or a stray
/// `.detach()`): the keys get a gradient, `W_k` none.
pub fn detached_key_projection(p: &Params, b: &Batch) -> (Tensor, Tensor) {
    let q = b.query.matmul_t(&p.w_q);
    let k = b.keys.matmul_t(&p.w_k.detach());
    let scores = score(&energies(&q, &k), &p.v);
    let weights = softmax_keys(&scores, &Mask::key_padding(&b.keep), Fill::Safe);
    (pool(&weights, &b.values), weights)
}
// ANCHOR_END: buggy

/// Every implementation, by the name the table prints.
pub const IMPLEMENTATIONS: [(&str, Attend); 8] = [
    ("reference (Fill::Safe)", reference),
    ("article's -1e9 fill", article_fill),
    ("-inf fill", neg_inf_fill),
    ("forgotten unsqueeze", forgotten_unsqueeze),
    ("mask in the wrong sense", mask_wrong_sense),
    ("softmax over the batch", softmax_wrong_axis),
    ("lengths from the mask", lengths_from_mask),
    ("detached W_k", detached_key_projection),
];

/// The properties test 1 asks of one call: shapes, rows summing to 1 (except the
/// rows listed in `empty`), masked weights below `1e-6`.
fn shapes_sums_and_mask(
    batch: &Batch,
    context: &Tensor,
    weights: &Tensor,
    empty: &[usize],
) -> Result<(), String> {
    let (b, k) = (batch.keep.size(0), batch.keep.size(1));
    if context.shape() != [b, VALUE_SIZE] || weights.shape() != [b, k] {
        return Err(format!(
            "shapes: context {:?} and weights {:?}, expected [{b}, {VALUE_SIZE}] and \
             [{b}, {k}]",
            context.shape(),
            weights.shape()
        ));
    }
    let w = weights.to_vec();
    let keep = batch.keep.to_vec();
    for (row, sum) in weights.sum_dim(-1).to_vec().into_iter().enumerate() {
        if !empty.contains(&row) && ((sum - 1.0).abs() > 1e-5 || sum.is_nan()) {
            return Err(format!("the weights of example {row} sum to {sum}"));
        }
    }
    for (i, (&w, &keep)) in w.iter().zip(&keep).enumerate() {
        if keep == 0.0 && (w >= 1e-6 || w.is_nan()) {
            let (row, key) = (i / k, i % k);
            return Err(format!(
                "key {key} of example {row} is masked, yet has weight {w}"
            ));
        }
    }
    Ok(())
}

// ANCHOR: article_tests
/// The article's test 1: on [`article_case`], the context is `[B, dv]` and the
/// weights `[B, K]`, each row of weights sums to 1 (to `1e-5`), and every masked
/// position has a weight below `1e-6`. `Err` says what failed (or what the
/// implementation panicked with).
pub fn shapes_and_sums_hold(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let (params, batch) = article_case();
    let (context, weights) = caught(|| attend(&params, &batch))?;
    shapes_sums_and_mask(&batch, &context, &weights, &[])
}

/// The article's test 2: after `context.sum().backward()` on [`article_case`], the
/// query, the keys and `v` have a gradient: the article asserts `grad is not None`,
/// and so does this (whatever the gradient's values).
pub fn gradients_reach_everything(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let (params, batch) = article_case();
    let (context, _) = caught(|| attend(&params, &batch))?;
    context.sum().backward();
    let reached = [
        ("query", &batch.query),
        ("keys", &batch.keys),
        ("v", &params.v),
    ];
    for (name, t) in reached {
        if t.grad().is_err() {
            return Err(format!("{name}.grad is None"));
        }
    }
    Ok(())
}
// ANCHOR_END: article_tests

// ANCHOR: stronger
/// Every gradient against finite differences (`engine::gradcheck`), with respect to
/// `W_q`, `W_k`, `v`, the query, the keys and the values, on [`article_case`].
pub fn gradcheck_holds(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let (p, b) = article_case();
    let inputs =
        [&p.w_q, &p.w_k, &p.v, &b.query, &b.keys, &b.values].map(Tensor::detach);
    let context = |t: &[Tensor]| {
        let params = Params {
            w_q: t[0].clone(),
            w_k: t[1].clone(),
            v: t[2].clone(),
        };
        let batch = Batch {
            query: t[3].clone(),
            keys: t[4].clone(),
            values: t[5].clone(),
            keep: b.keep.clone(),
        };
        attend(&params, &batch).0
    };
    caught(|| gradcheck(context, &inputs))?.map_err(|e| e.to_string())
}

/// A batch with `B ≠ K` (3 examples, 5 keys, with padding): it must run, and give
/// each example the context and weights it gets when run alone.
pub fn batch_not_square(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let params = params();
    let batch = batch(&keep_from_lengths(&[5, 3, 4], 5));
    let (context, weights) = caught(|| attend(&params, &batch))?;
    for i in 0..batch.keep.size(0) {
        let alone = Batch {
            query: batch.query.narrow(0, i, 1),
            keys: batch.keys.narrow(0, i, 1),
            values: batch.values.narrow(0, i, 1),
            keep: batch.keep.narrow(0, i, 1),
        };
        let (c, w) = caught(|| attend(&params, &alone))?;
        let pairs = [(&context, &c, "context"), (&weights, &w, "weights")];
        for (batched, single, what) in pairs {
            let batched = batched.narrow(0, i, 1);
            let diff = max_abs_diff(&batched.to_vec(), &single.to_vec());
            if diff > 1e-5 {
                return Err(format!(
                    "the {what} of example {i} differ by {diff} in the batch and \
                     alone"
                ));
            }
        }
    }
    Ok(())
}

/// One example with no key at all (example 1 of four): the context, the weights and
/// every gradient stay finite, the empty example gives no weight to any key (each of
/// its positions is masked, so test 1's `1e-6` applies), and the other rows still
/// sum to 1.
pub fn fully_masked_row(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let params = params();
    let batch = batch(&keep_from_lengths(&[2, 0, 4, 3], ARTICLE_KEYS));
    let (context, weights) = caught(|| attend(&params, &batch))?;
    for (name, t) in [("context", &context), ("weights", &weights)] {
        if t.to_vec().iter().any(|v| !v.is_finite()) {
            return Err(format!("{} of the {name}", first_non_finite(t)));
        }
    }
    shapes_sums_and_mask(&batch, &context, &weights, &[1])?;
    context.sum().backward();
    let leaves = [
        ("W_q", &params.w_q),
        ("W_k", &params.w_k),
        ("v", &params.v),
        ("query", &batch.query),
        ("keys", &batch.keys),
        ("values", &batch.values),
    ];
    for (name, leaf) in leaves {
        if let Ok(g) = leaf.grad()
            && g.to_vec().iter().any(|v| !v.is_finite())
        {
            let bad = first_non_finite(&g);
            return Err(format!("{bad} of the gradient of {name}"));
        }
    }
    Ok(())
}

/// The mask and its complement: padding at the end of every example, then the same
/// positions the other way round (the padding at the front). Test 1's properties must
/// hold for both: a mask read in the other sense, or read as lengths, fails one.
pub fn mask_and_complement(
    attend: impl Fn(&Params, &Batch) -> (Tensor, Tensor),
) -> Result<(), String> {
    let params = params();
    let keep = keep_from_lengths(&[3, 1, 2, 3], ARTICLE_KEYS);
    for (which, keep) in [("the mask", keep.clone()), ("its complement", 1.0 - &keep)]
    {
        let batch = batch(&keep);
        let (context, weights) = caught(|| attend(&params, &batch))?;
        shapes_sums_and_mask(&batch, &context, &weights, &[])
            .map_err(|e| format!("with {which}: {e}"))?;
    }
    Ok(())
}
// ANCHOR_END: stronger

/// The largest absolute difference between two lists (NaN counts as infinite).
fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = (x - y).abs();
            if d.is_nan() { f32::INFINITY } else { d }
        })
        .fold(0.0, f32::max)
}

/// `NaN at element 4` for the first non-finite value of `t`.
fn first_non_finite(t: &Tensor) -> String {
    let values = t.to_vec();
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => format!("{} at element {i}", values[i]),
        None => "no non-finite value".into(),
    }
}

/// A check of an implementation.
pub type Check = fn(Attend) -> Result<(), String>;

/// Every check, by the short name the table prints: the article's two, then the
/// stronger four.
pub const CHECKS: [(&str, Check); 6] = [
    ("test 1", |a| shapes_and_sums_hold(a)),
    ("test 2", |a| gradients_reach_everything(a)),
    ("gradcheck", |a| gradcheck_holds(a)),
    ("B ≠ K", |a| batch_not_square(a)),
    ("empty row", |a| fully_masked_row(a)),
    ("1 − mask", |a| mask_and_complement(a)),
];

/// Every implementation through every check.
#[derive(Clone, Debug)]
pub struct Table {
    /// One row per implementation, in the order of [`IMPLEMENTATIONS`]: its name and
    /// one result per check, in the order of [`CHECKS`].
    pub rows: Vec<(&'static str, Vec<Result<(), String>>)>,
}

impl Table {
    /// Whether `implementation` passed `check` (both by the names the table prints).
    ///
    /// # Panics
    /// When either name is not in the table.
    pub fn passed(&self, implementation: &str, check: &str) -> bool {
        let column = CHECKS
            .iter()
            .position(|(name, _)| *name == check)
            .unwrap_or_else(|| panic!("no check named {check:?}"));
        let (_, results) = self
            .rows
            .iter()
            .find(|(name, _)| *name == implementation)
            .unwrap_or_else(|| panic!("no implementation named {implementation:?}"));
        results[column].is_ok()
    }

    /// The reason `implementation` failed `check`, or `None` when it passed.
    pub fn reason(&self, implementation: &str, check: &str) -> Option<&str> {
        let column = CHECKS.iter().position(|(name, _)| *name == check)?;
        let (_, results) = self.rows.iter().find(|(n, _)| *n == implementation)?;
        results[column].as_ref().err().map(String::as_str)
    }
}

// ANCHOR: table
/// Runs every implementation of [`IMPLEMENTATIONS`] through every check of
/// [`CHECKS`].
pub fn table() -> Table {
    let rows = IMPLEMENTATIONS
        .iter()
        .map(|&(name, attend)| {
            let results = CHECKS.iter().map(|(_, check)| check(attend)).collect();
            (name, results)
        })
        .collect();
    Table { rows }
}
// ANCHOR_END: table

impl fmt::Display for Table {
    /// A grid: one line per implementation, `pass` or `FAIL` under each check.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<23}", "")?;
        for (name, _) in CHECKS {
            write!(f, "{name:>10}")?;
        }
        for (name, results) in &self.rows {
            write!(f, "\n{name:<23}")?;
            for result in results {
                let cell = if result.is_ok() { "pass" } else { "FAIL" };
                write!(f, "{cell:>10}")?;
            }
        }
        Ok(())
    }
}
