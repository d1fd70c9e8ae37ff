//! Reductions: `sum`, `mean`, `max`, over everything or over chosen dimensions.

use crate::check;
use crate::cpu::reduce;
use crate::op::Op;
use crate::shape::{Dim, split_at_dim};
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
        let mut data = self.to_vec();
        for &d in dims.iter().rev() {
            data = reduce::sum_dim(&data, split_at_dim(&shape, d));
            shape[d] = 1;
        }
        data
    }

    /// The sum of all elements, as a scalar tensor.
    pub fn sum(&self) -> Tensor {
        let all: Vec<usize> = (0..self.rank()).collect();
        self.sum_dims_resolved(all, false)
    }

    /// The sum over one dimension. With `keepdim`, that dimension stays with size 1.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// assert_eq!(x.sum_dim(-1, false).to_vec(), vec![6.0, 15.0]);
    /// assert_eq!(x.sum_dim(0, true).shape(), &[1, 3]);
    /// ```
    #[track_caller]
    pub fn sum_dim(&self, dim: impl Dim, keepdim: bool) -> Tensor {
        let d = dim.resolve("sum_dim", self.rank());
        self.sum_dims_resolved(vec![d], keepdim)
    }

    /// The sum over several dimensions at once. An empty list reduces nothing and returns
    /// the values unchanged (PyTorch's `sum(dim=[])` reduces everything: use [`Tensor::sum`]).
    #[track_caller]
    pub fn sum_dims<D: Dim>(&self, dims: &[D], keepdim: bool) -> Tensor {
        // Loops rather than closures in this layer: `#[track_caller]` stops at a closure.
        let mut resolved = Vec::with_capacity(dims.len());
        for d in dims {
            resolved.push(d.resolve("sum_dims", self.rank()));
        }
        resolved.sort_unstable();
        let before = resolved.len();
        resolved.dedup();
        check::ensure(resolved.len() == before, "sum_dims", || {
            "a dimension is listed twice".into()
        });
        self.sum_dims_resolved(resolved, keepdim)
    }

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
    pub fn mean(&self) -> Tensor {
        self.sum() * (1.0 / self.numel() as f32)
    }

    /// The mean over one dimension.
    #[track_caller]
    pub fn mean_dim(&self, dim: impl Dim, keepdim: bool) -> Tensor {
        let d = dim.resolve("mean_dim", self.rank());
        self.sum_dim(d, keepdim) * (1.0 / self.shape()[d] as f32)
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

    /// The maximum over one dimension (values only, like `amax`). Ties share the gradient
    /// equally.
    #[track_caller]
    pub fn max_dim(&self, dim: impl Dim, keepdim: bool) -> Tensor {
        let d = dim.resolve("max_dim", self.rank());
        check::ensure(self.shape()[d] > 0, "max_dim", || {
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
