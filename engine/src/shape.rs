//! Shape arithmetic: element counts, row-major strides, broadcasting and dimension indices.
//!
//! Every tensor in the engine is stored contiguously in row-major ("C") order, so a shape
//! alone says where each element lives. These helpers are shared by the tensor layer (which
//! checks shapes) and the kernels (which walk memory).

use crate::check;

/// Number of elements in a tensor of this shape (1 for a scalar, `[]`).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major strides: how many elements to skip to move one step along each dimension.
///
/// ```
/// assert_eq!(engine::shape::strides(&[2, 3, 4]), vec![12, 4, 1]);
/// ```
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Splits a shape around dimension `dim` into `(outer, size, inner)`: the product of the
/// dimensions before it, its own size, and the product of those after it.
///
/// Most kernels that work "along a dimension" (reductions, softmax, concat) loop over
/// `outer × inner` independent lines of `size` elements spaced `inner` apart.
pub fn split_at_dim(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    (numel(&shape[..dim]), shape[dim], numel(&shape[dim + 1..]))
}

/// The NumPy broadcast of two shapes, or `None` when they are incompatible.
///
/// Shapes are aligned on their last dimension; each pair of sizes must be equal or one of
/// them 1, and a missing leading dimension counts as 1.
///
/// ```
/// use engine::shape::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[4, 1, 3], &[5, 1]), Some(vec![4, 5, 3]));
/// assert_eq!(broadcast_shapes(&[2, 3], &[4]), None);
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let da = if i < rank - a.len() {
            1
        } else {
            a[i - (rank - a.len())]
        };
        let db = if i < rank - b.len() {
            1
        } else {
            b[i - (rank - b.len())]
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// A dimension index that may count from the end, as in PyTorch: `-1` is the last dimension.
///
/// Implemented for the integer types a literal can take, so `x.softmax(-1)` and
/// `x.transpose(1, 2)` both read naturally.
pub trait Dim: Copy {
    /// The index as written (negative counts from the end).
    fn as_i64(self) -> i64;

    /// Resolves this index against a tensor of rank `rank`, panicking with a message that
    /// names `op` when it is out of range.
    #[track_caller]
    fn resolve(self, op: &str, rank: usize) -> usize {
        let d = self.as_i64();
        match resolve_index(d, rank) {
            Some(r) => r,
            None => check::fail_dim(op, d, rank),
        }
    }

    /// Resolves a position at which a new dimension is inserted into a tensor of rank
    /// `rank` (`0..=rank`, with `-1` meaning after the last), as `unsqueeze` and `stack` do.
    #[track_caller]
    fn resolve_insert(self, op: &str, rank: usize) -> usize {
        let d = self.as_i64();
        match resolve_index(d, rank + 1) {
            Some(r) => r,
            None => check::fail_insert_dim(op, d, rank),
        }
    }
}

fn resolve_index(d: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let resolved = if d < 0 { d + r } else { d };
    (0..r).contains(&resolved).then_some(resolved as usize)
}

macro_rules! impl_dim {
    ($($t:ty),*) => {$(
        impl Dim for $t {
            fn as_i64(self) -> i64 {
                self as i64
            }
        }
    )*};
}
impl_dim!(i32, i64, isize, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_of_scalar_and_vector() {
        assert_eq!(strides(&[]), Vec::<usize>::new());
        assert_eq!(strides(&[5]), vec![1]);
    }

    #[test]
    fn split_at_dim_middle() {
        assert_eq!(split_at_dim(&[2, 3, 4], 1), (2, 3, 4));
        assert_eq!(split_at_dim(&[2, 3, 4], 2), (6, 4, 1));
    }

    #[test]
    fn negative_dims_count_from_the_end() {
        assert_eq!((-1i32).resolve("t", 3), 2);
        assert_eq!((-3i32).resolve("t", 3), 0);
        assert_eq!(2usize.resolve("t", 3), 2);
    }

    #[test]
    #[should_panic(expected = "softmax: dimension -4 is out of range for a tensor of rank 3")]
    fn out_of_range_dim_names_the_op() {
        (-4i32).resolve("softmax", 3);
    }
}
