//! Argument checks shared by the attention modules; messages name the module, the
//! argument and the shapes.

use engine::Tensor;

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
pub(crate) fn size(module: &str, arg: &str, t: &Tensor, dim: usize, size: usize, what: &str) {
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
    assert!(heads > 0, "{module}: num_heads must be at least 1");
    assert!(
        size % heads == 0,
        "{module}: {size_name} ({size}) is not divisible by num_heads ({heads}); each head gets {size_name} / num_heads features"
    );
}
