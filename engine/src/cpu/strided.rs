//! Walking a tensor through strides: the one piece of index arithmetic that broadcasting,
//! `permute` and batched `matmul` share.

use crate::shape::strides;

/// The memory offsets of the elements of a strided view, in the row-major order of `shape`.
///
/// A stride of 0 repeats the same element along that dimension, which is exactly what
/// broadcasting means; permuted strides read a tensor in another dimension order.
pub(crate) struct StridedOffsets<'a> {
    shape: &'a [usize],
    strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
    remaining: usize,
}

impl<'a> StridedOffsets<'a> {
    pub(crate) fn new(shape: &'a [usize], strides: Vec<usize>) -> Self {
        debug_assert_eq!(shape.len(), strides.len());
        StridedOffsets {
            shape,
            index: vec![0; shape.len()],
            strides,
            offset: 0,
            remaining: shape.iter().product(),
        }
    }
}

/// Strides of `input` aligned to the broadcast shape `out`: 0 where `input` is repeated.
pub(crate) fn broadcast_strides(input: &[usize], out: &[usize]) -> Vec<usize> {
    let own = strides(input);
    let pad = out.len() - input.len();
    (0..out.len())
        .map(|d| {
            if d < pad || input[d - pad] == 1 {
                0
            } else {
                own[d - pad]
            }
        })
        .collect()
}

/// Several operands broadcast to one output shape, walked a *row* at a time: the output is
/// seen as `[rows…, inner]`, where `inner` is the longest run of trailing dimensions along
/// which every operand either moves one element per step or does not move at all. Each row
/// is then one tight loop over slices (or over one repeated value), instead of an index
/// computation per element.
///
/// Dimensions are merged where every operand is contiguous across them: `[B, Q, 1, h] +
/// [B, 1, K, h]` has rows of `h`; `[2, 3, 4] + [4]` has rows of 4; two equal shapes are one
/// row of everything.
pub(crate) struct BroadcastRows {
    /// The shape of the rows (all output dimensions but the merged inner run).
    pub(crate) outer: Vec<usize>,
    /// Each operand's strides over `outer`.
    pub(crate) outer_strides: Vec<Vec<usize>>,
    /// The length of a row.
    pub(crate) inner: usize,
    /// Each operand's step along a row: 1 (contiguous) or 0 (one value repeated).
    pub(crate) inner_steps: Vec<usize>,
}

impl BroadcastRows {
    pub(crate) fn new(inputs: &[&[usize]], out: &[usize]) -> Self {
        let strides: Vec<Vec<usize>> =
            inputs.iter().map(|s| broadcast_strides(s, out)).collect();
        // Merge trailing dimensions while every operand is contiguous across the boundary,
        // starting from the last one. A size-1 dimension never breaks a run.
        let rank = out.len();
        let steps: Vec<usize> = strides
            .iter()
            .map(|st| {
                if rank == 0 {
                    0
                } else {
                    usize::from(st[rank - 1] != 0 || out[rank - 1] == 1)
                }
            })
            .collect();
        let mut inner = 1;
        let mut cut = rank;
        while cut > 0 {
            let d = cut - 1;
            let fits = strides.iter().zip(&steps).all(|(st, &step)| {
                // Along a row, operand elements sit at step · position.
                out[d] == 1 || st[d] == step * inner
            });
            if !fits {
                break;
            }
            inner *= out[d];
            cut = d;
        }
        BroadcastRows {
            outer: out[..cut].to_vec(),
            outer_strides: strides.iter().map(|st| st[..cut].to_vec()).collect(),
            inner,
            inner_steps: steps,
        }
    }

    /// The offsets of operand `i` at the start of each row.
    pub(crate) fn starts(&self, i: usize) -> StridedOffsets<'_> {
        StridedOffsets::new(&self.outer, self.outer_strides[i].clone())
    }
}

impl Iterator for StridedOffsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.offset;
        // Odometer step: bump the last index, carrying into earlier dimensions.
        for d in (0..self.shape.len()).rev() {
            self.index[d] += 1;
            self.offset += self.strides[d];
            if self.index[d] < self.shape[d] {
                break;
            }
            self.offset -= self.strides[d] * self.shape[d];
            self.index[d] = 0;
        }
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_repeats_rows() {
        let offs: Vec<usize> =
            StridedOffsets::new(&[2, 3], broadcast_strides(&[3], &[2, 3])).collect();
        assert_eq!(offs, vec![0, 1, 2, 0, 1, 2]);
        let offs: Vec<usize> =
            StridedOffsets::new(&[2, 3], broadcast_strides(&[2, 1], &[2, 3]))
                .collect();
        assert_eq!(offs, vec![0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn transposed_strides_read_columns() {
        let offs: Vec<usize> = StridedOffsets::new(&[3, 2], vec![1, 3]).collect();
        assert_eq!(offs, vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn rows_merge_every_dimension_where_the_operands_stay_contiguous() {
        // The additive-attention broadcast: rows of h.
        let rows = BroadcastRows::new(&[&[2, 3, 1, 8], &[2, 1, 5, 8]], &[2, 3, 5, 8]);
        assert_eq!((rows.outer.as_slice(), rows.inner), (&[2, 3, 5][..], 8));
        assert_eq!(rows.inner_steps, vec![1, 1]);
        assert_eq!(rows.outer_strides, vec![vec![24, 8, 0], vec![40, 0, 8]]);
        // A bias over the last dimension: rows of 4, the bias repeated.
        let rows = BroadcastRows::new(&[&[2, 3, 4], &[4]], &[2, 3, 4]);
        assert_eq!((rows.outer.as_slice(), rows.inner), (&[2, 3][..], 4));
        // Equal shapes: one row of everything.
        let rows = BroadcastRows::new(&[&[2, 3], &[2, 3]], &[2, 3]);
        assert_eq!((rows.outer.len(), rows.inner), (0, 6));
        // A column against a row: rows of 3 in which the column's value is repeated.
        let rows = BroadcastRows::new(&[&[2, 1], &[1, 3]], &[2, 3]);
        assert_eq!((rows.inner, rows.inner_steps.clone()), (3, vec![0, 1]));
        assert_eq!(rows.starts(0).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(rows.starts(1).collect::<Vec<_>>(), vec![0, 0]);
        // A scalar: one row of one.
        let rows = BroadcastRows::new(&[&[], &[]], &[]);
        assert_eq!((rows.outer.len(), rows.inner), (0, 1));
    }

    #[test]
    fn scalar_shape_yields_one_offset() {
        let offs: Vec<usize> = StridedOffsets::new(&[], vec![]).collect();
        assert_eq!(offs, vec![0]);
    }
}
