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
                // Never `as`: `usize::MAX as i64` is -1, which would silently name the last
                // dimension. A value outside `i64` becomes `i64::MAX` or `i64::MIN`, out of
                // range on the same side, and is refused as such.
                i64::try_from(self).unwrap_or(if self > 0 { i64::MAX } else { i64::MIN })
            }
        }
    )*};
}
impl_dim!(i32, i64, isize, usize, u32, u64, i128);

/// A list of sizes or dimension indices, in whichever form the caller holds it: an array, a
/// slice or a `Vec` of `usize`, `i32` or `i64`, or a tuple that mixes them.
///
/// ```
/// use engine::Tensor;
/// let x = Tensor::zeros([2, 3, 8]); // an array of literals
/// let (b, t) = (x.size(0), x.size(1)); // usize variables
/// let _ = x.reshape([b, t, 2, 4]); // an array of usize
/// let _ = x.reshape((b, t, 2, -1)); // usize and -1 together: a tuple
/// let _ = x.reshape(x.shape()); // a slice
/// let _ = Tensor::ones(&[2, 3]); // a reference to an array
/// let _ = Tensor::ones(vec![2, 3]); // a Vec
/// ```
///
/// A Rust array holds one type, so `[b, t, -1]` with `b: usize` does not compile (`-1` is
/// not a `usize`); the tuple `(b, t, -1)` says the same thing and does:
///
/// ```compile_fail
/// # use engine::Tensor;
/// let x = Tensor::zeros([2, 3, 8]);
/// let b = x.size(0);
/// let _ = x.reshape([b, -1]);
/// ```
pub trait ShapeArg {
    /// The entries as written, widened to `i128` so that every `usize` and every negative
    /// number keep their value (`-1` means something to `reshape` and `expand`; a `usize`
    /// above `i64::MAX` stays a size and never turns into `-1`).
    fn entries(&self) -> Vec<i128>;
}

/// One entry of a [`ShapeArg`]: a size or a dimension index of an integer type.
pub trait ShapeEntry: Copy {
    /// The value, widened without loss.
    fn widen(self) -> i128;
}

macro_rules! impl_shape_entry {
    ($($t:ty),*) => {$(
        impl ShapeEntry for $t {
            fn widen(self) -> i128 {
                self as i128
            }
        }
    )*};
}
impl_shape_entry!(usize, u32, i32, i64, isize);

impl<T: ShapeEntry> ShapeArg for &[T] {
    fn entries(&self) -> Vec<i128> {
        self.iter().map(|&x| x.widen()).collect()
    }
}
impl<T: ShapeEntry> ShapeArg for Vec<T> {
    fn entries(&self) -> Vec<i128> {
        self.iter().map(|&x| x.widen()).collect()
    }
}
impl<T: ShapeEntry> ShapeArg for &Vec<T> {
    fn entries(&self) -> Vec<i128> {
        self.iter().map(|&x| x.widen()).collect()
    }
}
impl<T: ShapeEntry, const N: usize> ShapeArg for [T; N] {
    fn entries(&self) -> Vec<i128> {
        self.iter().map(|&x| x.widen()).collect()
    }
}
impl<T: ShapeEntry, const N: usize> ShapeArg for &[T; N] {
    fn entries(&self) -> Vec<i128> {
        self.iter().map(|&x| x.widen()).collect()
    }
}
impl ShapeArg for () {
    fn entries(&self) -> Vec<i128> {
        Vec::new()
    }
}

macro_rules! impl_shape_arg_tuple {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: ShapeEntry),+> ShapeArg for ($($name,)+) {
            #[allow(non_snake_case)]
            fn entries(&self) -> Vec<i128> {
                let ($($name,)+) = *self;
                vec![$($name.widen()),+]
            }
        }
    )*};
}
impl_shape_arg_tuple!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F)
);

/// The number of elements of `shape`, or `None` when it does not fit in a `usize`.
pub fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &s| n.checked_mul(s))
}

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
    #[should_panic(
        expected = "softmax: dimension -4 is out of range for a tensor of rank 3"
    )]
    fn out_of_range_dim_names_the_op() {
        (-4i32).resolve("softmax", 3);
    }
}
