//! Reductions: `sum`, `mean`, `max`, over everything or over chosen dimensions.

use crate::check;
use crate::cpu::reduce;
use crate::op::Op;
use crate::shape::{Dim, ShapeArg, split_at_dim};
use crate::tensor::Tensor;

/// The shape after reducing `dims` (sorted): those dims become 1, or vanish without keepdim.
fn reduced_shape(shape: &[usize], dims: &[usize], keepdim: bool) -> Vec<usize> {
    let mut out = Vec::with_capacity(shape.len());
    for (d, &size) in shape.iter().enumerate() {
        if !dims.contains(&d) {
            out.push(size);
        } else if keepdim {
            out.push(1);
        }
    }
    out
}

impl Tensor {
    /// Sums over `dims` without recording anything; shared by `sum_dims` and the backward
    /// rules (which run without a graph).
    pub(crate) fn sum_values(&self, dims: &[usize]) -> Vec<f32> {
        let mut shape = self.shape().to_vec();
        let Some((&last, rest)) = dims.split_last() else {
            return self.to_vec(); // nothing to sum over
        };
        // The first reduction reads the tensor in place; the next ones read its result.
        let mut data = reduce::sum_dim(self.buffer().as_slice(), split_at_dim(&shape, last));
        shape[last] = 1;
        for &d in rest.iter().rev() {
            data = reduce::sum_dim(&data, split_at_dim(&shape, d));
            shape[d] = 1;
        }
        data
    }

    /// The sum of all elements, as a scalar tensor.
    #[track_caller]
    pub fn sum(&self) -> Tensor {
        let all: Vec<usize> = (0..self.rank()).collect();
        self.sum_dims_resolved(all, false)
    }

    /// The sum over one dimension, which disappears from the shape (PyTorch's
    /// `sum(dim)`; see [`sum_dim_keepdim`](Tensor::sum_dim_keepdim) to keep it).
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    /// assert_eq!(x.sum_dim(-1).to_vec(), vec![6.0, 15.0]);
    /// assert_eq!(x.sum_dim(-1).shape(), &[2]);
    /// ```
    #[track_caller]
    pub fn sum_dim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("sum_dim", self.rank());
        self.sum_dims_resolved(vec![d], false)
    }

    /// The sum over one dimension, which stays with size 1 (PyTorch's
    /// `sum(dim, keepdim=True)`), so the result broadcasts against `self`.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    /// let totals = x.sum_dim_keepdim(-1); // [2, 1]
    /// assert_eq!((&x / &totals).sum_dim(-1).to_vec(), vec![1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn sum_dim_keepdim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("sum_dim_keepdim", self.rank());
        self.sum_dims_resolved(vec![d], true)
    }

    /// The sum over several dimensions at once, which disappear from the shape. An empty
    /// list reduces nothing and returns the values unchanged (PyTorch's `sum(dim=[])`
    /// reduces everything: use [`Tensor::sum`]).
    #[track_caller]
    pub fn sum_dims(&self, dims: impl ShapeArg) -> Tensor {
        let resolved = self.resolve_dims("sum_dims", dims);
        self.sum_dims_resolved(resolved, false)
    }

    /// Like [`sum_dims`](Tensor::sum_dims), keeping each summed dimension with size 1.
    #[track_caller]
    pub fn sum_dims_keepdim(&self, dims: impl ShapeArg) -> Tensor {
        let resolved = self.resolve_dims("sum_dims_keepdim", dims);
        self.sum_dims_resolved(resolved, true)
    }

    /// Resolves a list of dimensions (negative ones count from the end), sorted, each once.
    #[track_caller]
    fn resolve_dims(&self, op: &str, dims: impl ShapeArg) -> Vec<usize> {
        // Loops rather than closures in this layer: `#[track_caller]` stops at a closure.
        let entries = dims.entries();
        let mut resolved = Vec::with_capacity(entries.len());
        for d in entries {
            resolved.push(d.resolve(op, self.rank()));
        }
        resolved.sort_unstable();
        let before = resolved.len();
        resolved.dedup();
        check::ensure(resolved.len() == before, op, || {
            "a dimension is listed twice".into()
        });
        resolved
    }

    #[track_caller]
    fn sum_dims_resolved(&self, dims: Vec<usize>, keepdim: bool) -> Tensor {
        let data = self.sum_values(&dims);
        let shape = reduced_shape(self.shape(), &dims, keepdim);
        Tensor::from_op(
            data,
            shape,
            Op::Sum {
                x: self.clone(),
                dims,
                keepdim,
            },
        )
    }

    /// The mean of all elements, as a scalar tensor.
    #[track_caller]
    pub fn mean(&self) -> Tensor {
        self.sum() * (1.0 / self.numel() as f32)
    }

    /// The mean over one dimension, which disappears from the shape.
    #[track_caller]
    pub fn mean_dim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("mean_dim", self.rank());
        self.sum_dim(d) * (1.0 / self.shape()[d] as f32)
    }

    /// The mean over one dimension, which stays with size 1.
    #[track_caller]
    pub fn mean_dim_keepdim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("mean_dim_keepdim", self.rank());
        self.sum_dim_keepdim(d) * (1.0 / self.shape()[d] as f32)
    }

    /// The largest element, as a scalar tensor. Ties share the gradient equally (as
    /// PyTorch's `max()` and `amax` do). A NaN element makes the maximum NaN, and then the
    /// gradient is NaN too (PyTorch routes it to the NaN's position instead).
    #[track_caller]
    pub fn max(&self) -> Tensor {
        check::ensure(self.numel() > 0, "max", || "the tensor is empty".into());
        let data = vec![reduce::max_dim(self.buffer().as_slice(), (1, self.numel(), 1))[0]];
        Tensor::from_op(
            data,
            vec![],
            Op::Max {
                x: self.clone(),
                dim: None,
                keepdim: false,
            },
        )
    }

    /// The maximum over one dimension (values only, like `amax`), which disappears from the
    /// shape. Ties share the gradient equally.
    #[track_caller]
    pub fn max_dim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("max_dim", self.rank());
        self.max_dim_resolved("max_dim", d, false)
    }

    /// The maximum over one dimension, which stays with size 1 (as softmax's shift needs).
    #[track_caller]
    pub fn max_dim_keepdim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("max_dim_keepdim", self.rank());
        self.max_dim_resolved("max_dim_keepdim", d, true)
    }

    #[track_caller]
    fn max_dim_resolved(&self, op: &str, d: usize, keepdim: bool) -> Tensor {
        check::ensure(self.shape()[d] > 0, op, || {
            format!("dimension {d} of shape {:?} is empty", self.shape())
        });
        let data = reduce::max_dim(self.buffer().as_slice(), split_at_dim(self.shape(), d));
        let shape = reduced_shape(self.shape(), &[d], keepdim);
        Tensor::from_op(
            data,
            shape,
            Op::Max {
                x: self.clone(),
                dim: Some(d),
                keepdim,
            },
        )
    }
}
