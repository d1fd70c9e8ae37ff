//! Kernels that move values without doing arithmetic on them (apart from `index_add`, the
//! gradient of `index_select`): permute, concatenate, narrow, index.

use super::StridedOffsets;
use crate::shape::strides;

/// Reorders dimensions: output dimension `d` is input dimension `perm[d]`.
pub(crate) fn permute(a: &[f32], shape: &[usize], perm: &[usize]) -> Vec<f32> {
    let own = strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
    StridedOffsets::new(&out_shape, out_strides)
        .map(|i| a[i])
        .collect()
}

/// Concatenates `[outer, n_i, inner]` parts along their middle dimension.
pub(crate) fn concat(parts: &[(&[f32], usize)], outer: usize, inner: usize) -> Vec<f32> {
    let total: usize = parts.iter().map(|(_, n)| n).sum();
    let mut out = Vec::with_capacity(outer * total * inner);
    for o in 0..outer {
        for &(data, n) in parts {
            out.extend_from_slice(&data[o * n * inner..(o + 1) * n * inner]);
        }
    }
    out
}

/// Takes `len` entries starting at `start` along the middle of `[outer, n, inner]`.
pub(crate) fn narrow(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    start: usize,
    len: usize,
) -> Vec<f32> {
    let mut out = Vec::with_capacity(outer * len * inner);
    for o in 0..outer {
        let from = (o * n + start) * inner;
        out.extend_from_slice(&a[from..from + len * inner]);
    }
    out
}

/// Picks entries `index[j]` along the middle of `[outer, n, inner]`.
pub(crate) fn index_select(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    index: &[usize],
) -> Vec<f32> {
    let mut out = Vec::with_capacity(outer * index.len() * inner);
    for o in 0..outer {
        for &j in index {
            let from = (o * n + j) * inner;
            out.extend_from_slice(&a[from..from + inner]);
        }
    }
    out
}

/// The adjoint of [`index_select`]: adds row `j` of `src: [outer, index.len(), inner]` into
/// row `index[j]` of a zero `[outer, n, inner]`. Repeated indices accumulate.
pub(crate) fn index_add(
    src: &[f32],
    (outer, n, inner): (usize, usize, usize),
    index: &[usize],
) -> Vec<f32> {
    let mut out = vec![0.0; outer * n * inner];
    for o in 0..outer {
        for (j, &target) in index.iter().enumerate() {
            let from = (o * index.len() + j) * inner;
            let to = (o * n + target) * inner;
            for (dst, &x) in out[to..to + inner].iter_mut().zip(&src[from..from + inner]) {
                *dst += x;
            }
        }
    }
    out
}
