//! Kernels that move values without doing arithmetic on them (apart from `index_add`, the
//! gradient of `index_select`): permute, concatenate, narrow, index.

use super::StridedOffsets;
use crate::shape::strides;
use crate::spare;

/// Reorders dimensions: output dimension `d` is input dimension `perm[d]`.
pub(crate) fn permute(a: &[f32], shape: &[usize], perm: &[usize]) -> Vec<f32> {
    let own = strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
    let rank = out_shape.len();
    if rank == 0 {
        return a.to_vec();
    }
    // The trailing output dimensions that are also contiguous in the input (a head split
    // `[B, T, H, d] → [B, H, T, d]` keeps rows of `d`): copied a row at a time.
    let (mut inner, mut cut) = (1, rank);
    while cut > 0 && (out_shape[cut - 1] == 1 || out_strides[cut - 1] == inner) {
        inner *= out_shape[cut - 1];
        cut -= 1;
    }
    let rows = StridedOffsets::new(&out_shape[..cut], out_strides[..cut].to_vec());
    if cut < rank {
        let mut out = spare::with_capacity(a.len());
        for start in rows {
            out.extend_from_slice(&a[start..start + inner]);
        }
        return out;
    }
    // The last output dimension is strided in the input (a transpose of the last two
    // dimensions): copy tile by tile, so that both the reads and the writes of a tile stay
    // within a few cache lines.
    const TILE: usize = 16;
    let (r, c) = (out_shape[rank - 2], out_shape[rank - 1]);
    let (sr, sc) = (out_strides[rank - 2], out_strides[rank - 1]);
    let mut out = spare::for_overwrite(a.len()); // every element is written below
    let blocks =
        StridedOffsets::new(&out_shape[..rank - 2], out_strides[..rank - 2].to_vec());
    for (dst, base) in out.chunks_exact_mut((r * c).max(1)).zip(blocks) {
        for i0 in (0..r).step_by(TILE) {
            for j0 in (0..c).step_by(TILE) {
                for i in i0..(i0 + TILE).min(r) {
                    for j in j0..(j0 + TILE).min(c) {
                        dst[i * c + j] = a[base + i * sr + j * sc];
                    }
                }
            }
        }
    }
    out
}

/// Concatenates `[outer, n_i, inner]` parts along their middle dimension.
pub(crate) fn concat(
    parts: &[(&[f32], usize)],
    outer: usize,
    inner: usize,
) -> Vec<f32> {
    let total: usize = parts.iter().map(|(_, n)| n).sum();
    let mut out = spare::with_capacity(outer * total * inner);
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
    let mut out = spare::with_capacity(outer * len * inner);
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
    let mut out = spare::with_capacity(outer * index.len() * inner);
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
    let mut out = spare::zeros(outer * n * inner);
    for o in 0..outer {
        for (j, &target) in index.iter().enumerate() {
            let from = (o * index.len() + j) * inner;
            let to = (o * n + target) * inner;
            for (dst, &x) in
                out[to..to + inner].iter_mut().zip(&src[from..from + inner])
            {
                *dst += x;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: output element at each index, read through the permuted strides.
    fn permute_by_definition(a: &[f32], shape: &[usize], perm: &[usize]) -> Vec<f32> {
        let own = strides(shape);
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let out_strides: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
        StridedOffsets::new(&out_shape, out_strides)
            .map(|i| a[i])
            .collect()
    }

    #[test]
    fn every_path_agrees_with_the_definition() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[], &[]),                     // a scalar
            (&[5], &[0]),                   // nothing moves
            (&[2, 3, 4, 5], &[0, 2, 1, 3]), // a head split: rows of 5
            (&[3, 37, 19], &[0, 2, 1]), // last two swapped, not multiples of a tile
            (&[4, 1, 6], &[2, 1, 0]),   // a size-1 dimension in the way
            (&[2, 0, 3], &[2, 0, 1]),   // empty
            (&[2, 3, 4], &[2, 0, 1]),   // a rotation
        ];
        for &(shape, perm) in cases {
            let n: usize = shape.iter().product();
            let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
            assert_eq!(
                permute(&a, shape, perm),
                permute_by_definition(&a, shape, perm),
                "{shape:?} permuted by {perm:?}"
            );
        }
    }
}
