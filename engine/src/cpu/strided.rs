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

    /// Offsets into a tensor of shape `input` read as if broadcast to `out`.
    pub(crate) fn broadcast(input: &[usize], out: &'a [usize]) -> Self {
        StridedOffsets::new(out, broadcast_strides(input, out))
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
        let offs: Vec<usize> = StridedOffsets::broadcast(&[3], &[2, 3]).collect();
        assert_eq!(offs, vec![0, 1, 2, 0, 1, 2]);
        let offs: Vec<usize> = StridedOffsets::broadcast(&[2, 1], &[2, 3]).collect();
        assert_eq!(offs, vec![0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn transposed_strides_read_columns() {
        let offs: Vec<usize> = StridedOffsets::new(&[3, 2], vec![1, 3]).collect();
        assert_eq!(offs, vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn scalar_shape_yields_one_offset() {
        let offs: Vec<usize> = StridedOffsets::new(&[], vec![]).collect();
        assert_eq!(offs, vec![0]);
    }
}
