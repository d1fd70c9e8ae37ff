//! Selection by position: the index of each line's maximum or minimum, the `k` largest or
//! smallest of each line, gathering values from computed positions, and the scatter-add
//! that is gathering's derivative.
//!
//! As in `reduce.rs`, a tensor is viewed as `[outer, n, inner]` around the dimension being
//! searched; an index along that dimension is a number in `0..n`.

use std::cmp::Ordering;

use super::reduce::Extreme;

/// The index of the first maximum (or minimum) of each line: `[outer, n, inner] →
/// [outer, inner]`. A NaN counts as the extreme, as in PyTorch's `argmax` and `argmin`.
/// `n` must be at least 1.
pub(crate) fn arg_extreme(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    which: Extreme,
) -> Vec<usize> {
    let mut out = vec![0; outer * inner];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| a[(o * n + k) * inner + i];
            let mut best = 0;
            for k in 1..n {
                if at(best).is_nan() {
                    break;
                }
                if which.beats(at(k), at(best)) {
                    best = k;
                }
            }
            out[o * inner + i] = best;
        }
    }
    out
}

/// The order in which a selection ranks values, best first: by value (a NaN before every
/// number, as in PyTorch), then by position, so ties keep their original order.
fn rank(which: Extreme, (x, i): (f32, usize), (y, j): (f32, usize)) -> Ordering {
    let by_value = match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => match which {
            Extreme::Max => y.total_cmp(&x),
            Extreme::Min => x.total_cmp(&y),
        },
    };
    by_value.then(i.cmp(&j))
}

/// The indices of the `k` largest (or smallest) values of each line, best first:
/// `[outer, n, inner] → [outer, k, inner]`. `k ≤ n`.
pub(crate) fn top_k(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    k: usize,
    which: Extreme,
) -> Vec<usize> {
    let mut out = vec![0; outer * k * inner];
    let mut line: Vec<(f32, usize)> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            line.clear();
            line.extend((0..n).map(|j| (a[(o * n + j) * inner + i], j)));
            line.sort_by(|&p, &q| rank(which, p, q));
            for (slot, &(_, j)) in line[..k].iter().enumerate() {
                out[(o * k + slot) * inner + i] = j;
            }
        }
    }
    out
}

/// For an index tensor of shape `index_shape` (whose entries, `index`, are positions along
/// `dim` of a tensor of shape `shape`), the row-major offset in that tensor of each
/// entry: the offset of the entry's own coordinates with coordinate `dim` replaced by the
/// entry. This is what `torch.gather` reads.
pub(crate) fn gather_offsets(
    shape: &[usize],
    index_shape: &[usize],
    dim: usize,
    index: &[usize],
) -> Vec<usize> {
    let rank = shape.len();
    let mut strides = vec![1; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let mut coords = vec![0; rank];
    let mut offsets = Vec::with_capacity(index.len());
    for &at in index {
        let mut offset = 0;
        for d in 0..rank {
            offset += strides[d] * if d == dim { at } else { coords[d] };
        }
        offsets.push(offset);
        // Next coordinates of the index tensor, row-major.
        for d in (0..rank).rev() {
            coords[d] += 1;
            if coords[d] < index_shape[d] {
                break;
            }
            coords[d] = 0;
        }
    }
    offsets
}

/// `a[offsets[i]]` for each `i`.
pub(crate) fn gather(a: &[f32], offsets: &[usize]) -> Vec<f32> {
    offsets.iter().map(|&o| a[o]).collect()
}

/// The adjoint of [`gather`]: `n` zeros, to which `g[i]` is added at `offsets[i]`, in the
/// order of `i` (an offset read twice receives both gradients).
pub(crate) fn scatter_add(g: &[f32], offsets: &[usize], n: usize) -> Vec<f32> {
    let mut out = vec![0.0; n];
    for (&v, &o) in g.iter().zip(offsets) {
        out[o] += v;
    }
    out
}

/// The running sum along each line: `out[.., j, ..] = Σ_{i ≤ j} a[.., i, ..]`, or with
/// `reverse`, `Σ_{i ≥ j}` (the derivative of the forward sum). Added in order, one line
/// at a time, so the result does not depend on the machine.
pub(crate) fn cumsum(
    a: &[f32],
    (outer, n, inner): (usize, usize, usize),
    reverse: bool,
) -> Vec<f32> {
    let mut out = vec![0.0; a.len()];
    for o in 0..outer {
        let mut running = vec![0.0f32; inner];
        for step in 0..n {
            let k = if reverse { n - 1 - step } else { step };
            let at = (o * n + k) * inner;
            for (acc, (dst, &x)) in running
                .iter_mut()
                .zip(out[at..at + inner].iter_mut().zip(&a[at..at + inner]))
            {
                *acc += x;
                *dst = *acc;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_extreme_takes_the_first_of_ties_and_a_nan_wins() {
        // Two lines of 4 along the middle dimension, inner = 1.
        let a = [1.0, 3.0, 3.0, -2.0, 2.0, f32::NAN, 5.0, f32::NAN];
        assert_eq!(arg_extreme(&a, (2, 4, 1), Extreme::Max), [1, 1]);
        assert_eq!(arg_extreme(&a, (2, 4, 1), Extreme::Min), [3, 1]);
        // Along the first dimension of a [2, 2] tensor: inner = 2.
        let b = [1.0, 5.0, 4.0, 2.0];
        assert_eq!(arg_extreme(&b, (1, 2, 2), Extreme::Max), [1, 0]);
        assert_eq!(arg_extreme(&b, (1, 2, 2), Extreme::Min), [0, 1]);
    }

    #[test]
    fn top_k_orders_best_first_and_ties_by_position() {
        let a = [0.5, 2.0, -1.0, 2.0, 7.0];
        assert_eq!(top_k(&a, (1, 5, 1), 3, Extreme::Max), [4, 1, 3]);
        assert_eq!(top_k(&a, (1, 5, 1), 2, Extreme::Min), [2, 0]);
        let with_nan = [1.0, f32::NAN, 3.0];
        assert_eq!(top_k(&with_nan, (1, 3, 1), 2, Extreme::Max), [1, 2]);
        assert_eq!(top_k(&with_nan, (1, 3, 1), 2, Extreme::Min), [1, 0]);
        // inner = 2: each column is its own line.
        let cols = [1.0, 9.0, 3.0, 8.0, 2.0, 7.0];
        assert_eq!(top_k(&cols, (1, 3, 2), 2, Extreme::Max), [1, 0, 2, 1]);
    }

    #[test]
    fn gather_offsets_replace_the_coordinate_along_dim() {
        // shape [2, 3], index [2, 2] along dim 1: rows keep their own row.
        let offsets = gather_offsets(&[2, 3], &[2, 2], 1, &[2, 0, 1, 1]);
        assert_eq!(offsets, [2, 0, 4, 4]);
        // along dim 0 of [3, 2], index [1, 2]: columns keep their own column.
        assert_eq!(gather_offsets(&[3, 2], &[1, 2], 0, &[2, 1]), [4, 3]);
        let a = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];
        assert_eq!(gather(&a, &offsets), [12.0, 10.0, 14.0, 14.0]);
        assert_eq!(
            scatter_add(&[1.0, 2.0, 3.0, 4.0], &offsets, 6),
            [2.0, 0.0, 1.0, 0.0, 7.0, 0.0]
        );
    }

    #[test]
    fn cumsum_runs_forward_or_backward_along_the_line() {
        // [2, 3] along dim 1, then along dim 0 (inner = 3).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(
            cumsum(&a, (2, 3, 1), false),
            [1.0, 3.0, 6.0, 4.0, 9.0, 15.0]
        );
        assert_eq!(
            cumsum(&a, (2, 3, 1), true),
            [6.0, 5.0, 3.0, 15.0, 11.0, 6.0]
        );
        assert_eq!(cumsum(&a, (1, 2, 3), false), [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]);
        assert_eq!(cumsum(&a, (1, 2, 3), true), [5.0, 7.0, 9.0, 4.0, 5.0, 6.0]);
    }
}
