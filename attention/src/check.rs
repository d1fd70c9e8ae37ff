//! Argument checks shared by the attention modules; messages name the module, the
//! argument and the shapes.

use engine::Tensor;

/// Panics with `module: message`, the form of every message of this crate.
#[track_caller]
pub(crate) fn fail(module: &str, message: impl std::fmt::Display) -> ! {
    panic!("{module}: {message}")
}

/// Checks a condition, and panics with `module: message` when it does not hold.
#[track_caller]
pub(crate) fn ensure(cond: bool, module: &str, message: impl FnOnce() -> String) {
    if !cond {
        fail(module, message());
    }
}

/// Checks that `t` has `rank` dimensions.
#[track_caller]
pub(crate) fn rank(module: &str, arg: &str, t: &Tensor, rank: usize, layout: &str) {
    assert!(
        t.rank() == rank,
        "{module}: {arg} must have shape {layout}, found {:?}",
        t.shape()
    );
}

/// Checks that dimension `dim` of `t` has size `size`.
#[track_caller]
pub(crate) fn size(
    module: &str,
    arg: &str,
    t: &Tensor,
    dim: usize,
    size: usize,
    what: &str,
) {
    assert!(
        t.shape()[dim] == size,
        "{module}: {arg} {:?} has {} at dimension {dim} but {what} is {size}",
        t.shape(),
        t.shape()[dim]
    );
}

/// Checks that `keys` and `values` hold the same number of entries (dimension -2).
#[track_caller]
pub(crate) fn keys_match_values(module: &str, keys: &Tensor, values: &Tensor) {
    let (k, v) = (keys.size(-2), values.size(-2));
    assert!(
        k == v,
        "{module}: keys {:?} and values {:?} must hold the same number of entries (dimension -2), found {k} keys and {v} values",
        keys.shape(),
        values.shape()
    );
}

/// Checks that the model size divides evenly among the heads.
#[track_caller]
pub(crate) fn heads_divide(module: &str, size_name: &str, size: usize, heads: usize) {
    positive(module, size_name, size);
    positive(module, "num_heads", heads);
    assert!(
        size.is_multiple_of(heads),
        "{module}: {size_name} ({size}) is not divisible by num_heads ({heads}); each head gets {size_name} / num_heads features"
    );
}

/// What a module expects of its queries, keys and values.
pub(crate) struct Expected {
    /// 3 for `[B, Q, query_size]`, 2 for one query per example, `[B, query_size]`.
    pub(crate) query_rank: usize,
    pub(crate) query_size: usize,
    pub(crate) key_size: usize,
    /// `None` when any value size is accepted.
    pub(crate) value_size: Option<usize>,
}

/// The checks every attention module makes of its inputs: ranks, feature sizes, equal
/// batch sizes, and as many values as keys.
#[track_caller]
pub(crate) fn inputs(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    expected: Expected,
) {
    let (name, layout) = match expected.query_rank {
        2 => ("query", "[B, query_size]"),
        _ => ("queries", "[B, Q, query_size]"),
    };
    rank(module, name, queries, expected.query_rank, layout);
    rank(module, "keys", keys, 3, "[B, K, key_size]");
    rank(module, "values", values, 3, "[B, K, value_size]");
    let last = expected.query_rank - 1;
    size(
        module,
        name,
        queries,
        last,
        expected.query_size,
        "query_size",
    );
    size(module, "keys", keys, 2, expected.key_size, "key_size");
    if let Some(value_size) = expected.value_size {
        size(module, "values", values, 2, value_size, "value_size");
    }
    let batch = format!("the batch size of the {name}");
    size(module, "keys", keys, 0, queries.shape()[0], &batch);
    size(module, "values", values, 0, queries.shape()[0], &batch);
    keys_match_values(module, keys, values);
}

/// Checks that a size setting of a module's config is at least 1.
#[track_caller]
pub(crate) fn positive(module: &str, name: &str, value: usize) {
    assert!(
        value > 0,
        "{module}: {name} must be at least 1, found {value}{}",
        if value == 0 {
            " (sizes have no default: set it in the config)"
        } else {
            ""
        }
    );
}

/// Checks a dropout probability of a module's config.
#[track_caller]
pub(crate) fn probability(module: &str, name: &str, p: f32) {
    assert!(
        (0.0..=1.0).contains(&p),
        "{module}: {name} must be a probability in [0, 1], found {p}"
    );
}

/// Checks a score scale: finite and above zero (a NaN, infinite, zero or negative scale
/// would turn every weight into NaN or reverse the ranking of keys).
#[track_caller]
pub(crate) fn scale(module: &str, scale: Option<f32>) {
    if let Some(s) = scale {
        assert!(
            s.is_finite() && s > 0.0,
            "{module}: scale must be finite and greater than 0, found {s}; hint: None uses 1/√d"
        );
    }
}

/// Checks a fill policy: a constant fill must be finite.
#[track_caller]
pub(crate) fn fill(module: &str, fill: crate::Fill) {
    if let crate::Fill::Constant(value) = fill {
        assert!(
            value.is_finite(),
            "{module}: Fill::Constant needs a finite value, found {value}; hint: -inf makes a fully masked row 0/0 = NaN, and Fill::Safe excludes masked keys exactly"
        );
    }
}
