//! Reductions: `sum`, `mean`, `max`, `min`, `logsumexp`, over everything or over chosen
//! dimensions; and the running sum `cumsum`.

use crate::check;
use crate::cpu::reduce::{self, Extreme};
use crate::cpu::select;
use crate::memory;
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
        let mut data =
            reduce::sum_dim(self.buffer().as_slice(), split_at_dim(&shape, last));
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
        let shape = reduced_shape(self.shape(), &dims, keepdim);
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            // One launch per summed dimension, the innermost first, as on the CPU.
            let mut now = self.shape().to_vec();
            let mut data: Option<crate::gpu::GpuBuffer> = None;
            for &d in dims.iter().rev() {
                let from = data.as_ref().unwrap_or(&x);
                let parts = split_at_dim(&now, d);
                let kind = crate::gpu::kernels::Reduction::Sum;
                data = Some(crate::gpu::kernels::reduce("sum", from, parts, kind));
                now[d] = 1;
            }
            let data = match data {
                Some(data) => data,
                None => {
                    crate::gpu::kernels::strided_copy("sum", &x, 0, &[x.len()], &[1])
                }
            };
            let op = Op::Sum {
                x: self.clone(),
                dims,
                keepdim,
            };
            return Tensor::from_gpu("sum", data, shape, Some(op));
        }
        let data = self.sum_values(&dims);
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
        self.extreme_all("max", Extreme::Max)
    }

    /// The smallest element, as a scalar tensor; ties share the gradient equally, as for
    /// [`max`](Tensor::max).
    #[track_caller]
    pub fn min(&self) -> Tensor {
        self.extreme_all("min", Extreme::Min)
    }

    /// The maximum over one dimension (values only, like `amax`), which disappears from the
    /// shape. Ties share the gradient equally. For the indices too, as `torch.max(x, dim)`
    /// gives them, see [`max_dim_with_indices`](Tensor::max_dim_with_indices).
    #[track_caller]
    pub fn max_dim(&self, dim: impl Dim) -> Tensor {
        self.extreme_dim("max_dim", dim, Extreme::Max, false)
    }

    /// The maximum over one dimension, which stays with size 1 (as softmax's shift needs).
    #[track_caller]
    pub fn max_dim_keepdim(&self, dim: impl Dim) -> Tensor {
        self.extreme_dim("max_dim_keepdim", dim, Extreme::Max, true)
    }

    /// The minimum over one dimension (values only, like `amin`), which disappears from the
    /// shape. Ties share the gradient equally. For the indices too, see
    /// [`min_dim_with_indices`](Tensor::min_dim_with_indices).
    #[track_caller]
    pub fn min_dim(&self, dim: impl Dim) -> Tensor {
        self.extreme_dim("min_dim", dim, Extreme::Min, false)
    }

    /// The minimum over one dimension, which stays with size 1.
    #[track_caller]
    pub fn min_dim_keepdim(&self, dim: impl Dim) -> Tensor {
        self.extreme_dim("min_dim_keepdim", dim, Extreme::Min, true)
    }

    /// The op that records `max` or `min` of `self` over `dim` (`None`: everything).
    fn extreme_op(&self, which: Extreme, dim: Option<usize>, keepdim: bool) -> Op {
        let x = self.clone();
        match which {
            Extreme::Max => Op::Max { x, dim, keepdim },
            Extreme::Min => Op::Min { x, dim, keepdim },
        }
    }

    #[track_caller]
    fn extreme_all(&self, op: &str, which: Extreme) -> Tensor {
        check::ensure(self.numel() > 0, op, || "the tensor is empty".into());
        let all = (1, self.numel(), 1);
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data = crate::gpu::kernels::reduce(op, &x, all, gpu_reduction(which));
            return Tensor::from_gpu(
                op,
                data,
                vec![],
                Some(self.extreme_op(which, None, false)),
            );
        }
        let data = reduce::extreme_dim(self.buffer().as_slice(), all, which);
        Tensor::from_op(data, vec![], self.extreme_op(which, None, false))
    }

    #[track_caller]
    fn extreme_dim(
        &self,
        op: &str,
        dim: impl Dim,
        which: Extreme,
        keepdim: bool,
    ) -> Tensor {
        let d = dim.resolve(op, self.rank());
        check::ensure(self.shape()[d] > 0, op, || {
            format!("dimension {d} of shape {:?} is empty", self.shape())
        });
        let parts = split_at_dim(self.shape(), d);
        let shape = reduced_shape(self.shape(), &[d], keepdim);
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data =
                crate::gpu::kernels::reduce(op, &x, parts, gpu_reduction(which));
            let recorded = self.extreme_op(which, Some(d), keepdim);
            return Tensor::from_gpu(op, data, shape, Some(recorded));
        }
        let data = reduce::extreme_dim(self.buffer().as_slice(), parts, which);
        Tensor::from_op(data, shape, self.extreme_op(which, Some(d), keepdim))
    }

    /// `log Σ exp(x)` over one dimension, which disappears from the shape, like
    /// `torch.logsumexp(x, dim)`: computed as `m + log Σ exp(x − m)` with `m` the maximum,
    /// so large values do not overflow, and a line of only `-inf` gives `-inf` (as in
    /// PyTorch). Its gradient is `softmax(x)` along `dim`.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1000.0, 1000.0, 0.0, f32::NEG_INFINITY], [2, 2]);
    /// let lse = x.logsumexp(-1);
    /// assert!((lse.to_vec()[0] - (1000.0 + 2f32.ln())).abs() < 1e-3); // no overflow
    /// assert_eq!(lse.to_vec()[1], 0.0); // log(e⁰ + 0)
    /// ```
    #[track_caller]
    pub fn logsumexp(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("logsumexp", self.rank());
        self.logsumexp_keepdim(d).squeeze(d)
    }

    /// Like [`logsumexp`](Tensor::logsumexp), keeping `dim` with size 1 (PyTorch's
    /// `keepdim=True`), so the result broadcasts against `self`: `x - x.logsumexp_keepdim(-1)`
    /// is `log_softmax`.
    #[track_caller]
    pub fn logsumexp_keepdim(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("logsumexp_keepdim", self.rank());
        check::ensure(self.shape()[d] > 0, "logsumexp", || {
            format!("dimension {d} of shape {:?} is empty", self.shape())
        });
        memory::ensure_can_allocate("logsumexp", self.shape());
        // The shift is a constant (it cancels in the value), and an infinite maximum (a line
        // of -inf, or a +inf) is replaced by 0 so that x − m never computes ∞ − ∞.
        let shift = crate::no_grad(|| {
            let m = self.max_dim_keepdim(d);
            let finite = m.abs().lt(&Tensor::scalar(f32::INFINITY));
            finite.where_cond(&m, &Tensor::scalar(0.0))
        });
        (self - &shift).exp().sum_dim_keepdim(d).log() + shift
    }

    /// The running sum along `dim`, like `torch.cumsum(x, dim)`: entry `j` is the sum of
    /// entries `0..=j`. The shape is unchanged. Added in order along the line, so the
    /// result is the same on every machine.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [4]);
    /// assert_eq!(x.cumsum(0).to_vec(), vec![1.0, 3.0, 6.0, 10.0]);
    /// ```
    #[track_caller]
    pub fn cumsum(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("cumsum", self.rank().max(1));
        check::no_gpu_kernel("cumsum", self);
        let parts = cumsum_parts(self.shape(), d);
        let data = select::cumsum(self.buffer().as_slice(), parts, false);
        Tensor::from_op(
            data,
            self.shape().to_vec(),
            Op::Cumsum {
                x: self.clone(),
                dim: d,
            },
        )
    }

    /// The running sum from the end along `dim` (the derivative of [`cumsum`]); records
    /// nothing.
    ///
    /// [`cumsum`]: Tensor::cumsum
    pub(crate) fn cumsum_reversed(&self, dim: usize) -> Tensor {
        let parts = cumsum_parts(self.shape(), dim);
        let data = select::cumsum(self.buffer().as_slice(), parts, true);
        Tensor::from_parts("cumsum", data, self.shape().to_vec())
    }
}

/// The GPU kernel's name for a maximum or a minimum.
#[cfg(feature = "wgpu")]
fn gpu_reduction(which: Extreme) -> crate::gpu::kernels::Reduction {
    match which {
        Extreme::Max => crate::gpu::kernels::Reduction::Max,
        Extreme::Min => crate::gpu::kernels::Reduction::Min,
    }
}

/// `[outer, n, inner]` around `dim`; a scalar is one line of one value (PyTorch accepts
/// `dim` 0 or -1 there).
fn cumsum_parts(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        (1, 1, 1)
    } else {
        split_at_dim(shape, dim)
    }
}
