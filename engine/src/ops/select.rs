//! Selecting by position: `argmax` and `argmin`, the values and indices of a maximum or
//! minimum (`max_dim_with_indices`, as `torch.max(x, dim)` returns them), `topk`, and
//! `gather`, which the others use to read their values so that gradients reach exactly the
//! selected elements.
//!
//! Indices come back as `f32` tensors of whole numbers, the engine's one element type (as
//! `index_select` and `embedding` take them).

use crate::check;
use crate::cpu::reduce::Extreme;
use crate::cpu::select;
use crate::memory;
use crate::op::Op;
use crate::shape::{Dim, split_at_dim};
use crate::tensor::Tensor;

/// Whole-number positions as an `f32` tensor.
#[track_caller]
fn index_tensor(op: &str, positions: &[usize], shape: Vec<usize>) -> Tensor {
    Tensor::from_parts(op, positions.iter().map(|&i| i as f32).collect(), shape)
}

impl Tensor {
    /// The index of the largest element along `dim`, which disappears from the shape, like
    /// `torch.argmax(x, dim)`. The first index wins a tie; a NaN counts as the largest, as
    /// in PyTorch. The result holds whole numbers (`f32`, like every index in the engine) and
    /// takes no gradient.
    ///
    /// For the index over all elements (PyTorch's `x.argmax()`), flatten first:
    /// `x.flatten(0, -1).argmax(0)`.
    ///
    /// ```
    /// use engine::Tensor;
    /// let scores = Tensor::from_vec(vec![0.1, 2.0, 0.3, 5.0, 4.0, 5.0], [2, 3]);
    /// assert_eq!(scores.argmax(-1).to_vec(), vec![1.0, 0.0]); // a tie: the first wins
    /// assert_eq!(scores.argmax(0).to_vec(), vec![1.0, 1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn argmax(&self, dim: impl Dim) -> Tensor {
        self.arg_extreme("argmax", dim, Extreme::Max, false)
    }

    /// Like [`argmax`](Tensor::argmax), keeping `dim` with size 1 (PyTorch's
    /// `keepdim=True`).
    #[track_caller]
    pub fn argmax_keepdim(&self, dim: impl Dim) -> Tensor {
        self.arg_extreme("argmax_keepdim", dim, Extreme::Max, true)
    }

    /// The index of the smallest element along `dim`, which disappears from the shape, like
    /// `torch.argmin(x, dim)`. The first index wins a tie; a NaN counts as the smallest, as
    /// in PyTorch.
    #[track_caller]
    pub fn argmin(&self, dim: impl Dim) -> Tensor {
        self.arg_extreme("argmin", dim, Extreme::Min, false)
    }

    /// Like [`argmin`](Tensor::argmin), keeping `dim` with size 1.
    #[track_caller]
    pub fn argmin_keepdim(&self, dim: impl Dim) -> Tensor {
        self.arg_extreme("argmin_keepdim", dim, Extreme::Min, true)
    }

    /// The checked dimension `dim` and its positions of the extreme along it.
    #[track_caller]
    fn extreme_positions(
        &self,
        op: &str,
        dim: impl Dim,
        which: Extreme,
    ) -> (usize, Vec<usize>) {
        let d = dim.resolve(op, self.rank());
        check::ensure(self.shape()[d] > 0, op, || {
            format!(
                "dimension {d} of shape {:?} is empty, so it has no {}",
                self.shape(),
                match which {
                    Extreme::Max => "maximum",
                    Extreme::Min => "minimum",
                }
            )
        });
        check::no_gpu_kernel(op, self);
        let parts = split_at_dim(self.shape(), d);
        (
            d,
            select::arg_extreme(self.buffer().as_slice(), parts, which),
        )
    }

    #[track_caller]
    fn arg_extreme(
        &self,
        op: &str,
        dim: impl Dim,
        which: Extreme,
        keepdim: bool,
    ) -> Tensor {
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let d = dim.resolve(op, self.rank());
            check::ensure(self.shape()[d] > 0, op, || {
                format!("dimension {d} of shape {:?} is empty", self.shape())
            });
            let parts = split_at_dim(self.shape(), d);
            let max = matches!(which, Extreme::Max);
            let data = crate::gpu::kernels::arg_extreme(op, &x, parts, max);
            return Tensor::from_gpu(
                op,
                data,
                reduced(self.shape(), d, keepdim),
                None,
            );
        }
        let (d, positions) = self.extreme_positions(op, dim, which);
        index_tensor(op, &positions, reduced(self.shape(), d, keepdim))
    }

    /// The largest values along `dim` and their indices, as `torch.max(x, dim)` returns
    /// them: `(values, indices)`, `dim` removed from both shapes. The first index wins a
    /// tie, and the gradient of `values` goes to that element only, as in PyTorch (where
    /// [`max_dim`](Tensor::max_dim), like `torch.amax`, shares it between ties).
    ///
    /// ```
    /// use engine::Tensor;
    /// let logits = Tensor::from_vec(vec![0.1, 2.0, 0.3, 5.0, 4.0, 1.0], [2, 3]);
    /// let (best, ids) = logits.max_dim_with_indices(-1); // greedy decoding's step
    /// assert_eq!(best.to_vec(), vec![2.0, 5.0]);
    /// assert_eq!(ids.to_vec(), vec![1.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn max_dim_with_indices(&self, dim: impl Dim) -> (Tensor, Tensor) {
        self.extreme_with_indices("max_dim_with_indices", dim, Extreme::Max, false)
    }

    /// Like [`max_dim_with_indices`](Tensor::max_dim_with_indices), keeping `dim` with
    /// size 1 in both results (`torch.max(x, dim, keepdim=True)`).
    #[track_caller]
    pub fn max_dim_keepdim_with_indices(&self, dim: impl Dim) -> (Tensor, Tensor) {
        self.extreme_with_indices(
            "max_dim_keepdim_with_indices",
            dim,
            Extreme::Max,
            true,
        )
    }

    /// The smallest values along `dim` and their indices, as `torch.min(x, dim)` returns
    /// them; see [`max_dim_with_indices`](Tensor::max_dim_with_indices).
    #[track_caller]
    pub fn min_dim_with_indices(&self, dim: impl Dim) -> (Tensor, Tensor) {
        self.extreme_with_indices("min_dim_with_indices", dim, Extreme::Min, false)
    }

    /// Like [`min_dim_with_indices`](Tensor::min_dim_with_indices), keeping `dim` with
    /// size 1 in both results.
    #[track_caller]
    pub fn min_dim_keepdim_with_indices(&self, dim: impl Dim) -> (Tensor, Tensor) {
        self.extreme_with_indices(
            "min_dim_keepdim_with_indices",
            dim,
            Extreme::Min,
            true,
        )
    }

    #[track_caller]
    fn extreme_with_indices(
        &self,
        op: &str,
        dim: impl Dim,
        which: Extreme,
        keepdim: bool,
    ) -> (Tensor, Tensor) {
        let (d, positions) = self.extreme_positions(op, dim, which);
        let shape = reduced(self.shape(), d, keepdim);
        memory::ensure_can_allocate(op, &shape);
        let mut kept = self.shape().to_vec();
        kept[d] = 1;
        let values = self.gather_resolved(op, d, &kept, &positions);
        (
            values.reshape(shape.clone()),
            index_tensor(op, &positions, shape),
        )
    }

    /// The `k` largest values along `dim`, largest first, and their indices, like
    /// `torch.topk(x, k, dim)`: `(values, indices)`, both with `dim` of size `k`. Equal
    /// values keep their original order; a NaN counts as the largest. The gradient of
    /// `values` goes to the selected elements.
    ///
    /// ```
    /// use engine::Tensor;
    /// let weights = Tensor::from_vec(vec![0.1, 0.5, 0.15, 0.25], [1, 4]);
    /// let (top, at) = weights.topk(2, -1); // the two keys a query attends to most
    /// assert_eq!(top.to_vec(), vec![0.5, 0.25]);
    /// assert_eq!(at.to_vec(), vec![1.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn topk(&self, k: usize, dim: impl Dim) -> (Tensor, Tensor) {
        self.select_k("topk", k, dim, Extreme::Max)
    }

    /// The `k` smallest values along `dim`, smallest first, and their indices, like
    /// `torch.topk(x, k, dim, largest=False)`.
    #[track_caller]
    pub fn topk_smallest(&self, k: usize, dim: impl Dim) -> (Tensor, Tensor) {
        self.select_k("topk_smallest", k, dim, Extreme::Min)
    }

    #[track_caller]
    fn select_k(
        &self,
        op: &str,
        k: usize,
        dim: impl Dim,
        which: Extreme,
    ) -> (Tensor, Tensor) {
        let d = dim.resolve(op, self.rank());
        let n = self.shape()[d];
        check::ensure(k <= n, op, || {
            format!(
                "k = {k} is larger than dimension {d} of shape {:?}, which has {n} entries",
                self.shape()
            )
        });
        check::no_gpu_kernel(op, self);
        let parts = split_at_dim(self.shape(), d);
        let positions = select::top_k(self.buffer().as_slice(), parts, k, which);
        let mut shape = self.shape().to_vec();
        shape[d] = k;
        let values = self.gather_resolved(op, d, &shape, &positions);
        (values, index_tensor(op, &positions, shape))
    }

    /// The values at the positions `index` gives along `dim`, like `torch.gather(x, dim,
    /// index)`: `out[i][j][k] = x[index[i][j][k]][j][k]` for `dim = 0`, and so on. `index`
    /// has the rank of `self` and is no larger in any dimension but `dim`; the result has
    /// `index`'s shape. The gradient goes back to the positions read (added up where one
    /// is read twice).
    ///
    /// ```
    /// use engine::Tensor;
    /// // The log-probability of each row's target class, as a loss picks it.
    /// let log_probs = Tensor::from_vec(vec![-0.1, -2.5, -3.0, -1.2, -0.4, -2.2], [2, 3]);
    /// let targets = Tensor::from_vec(vec![0.0, 1.0], [2, 1]);
    /// assert_eq!(log_probs.gather(1, &targets).to_vec(), vec![-0.1, -0.4]);
    /// ```
    #[track_caller]
    pub fn gather(&self, dim: impl Dim, index: &Tensor) -> Tensor {
        let d = dim.resolve("gather", self.rank());
        check::ensure(index.rank() == self.rank(), "gather", || {
            format!(
                "the index has shape {:?} (rank {}) but the tensor has shape {:?} (rank {}); they must have the same rank. hint: unsqueeze the index",
                index.shape(),
                index.rank(),
                self.shape(),
                self.rank()
            )
        });
        for (i, (&have, &want)) in self.shape().iter().zip(index.shape()).enumerate()
        {
            check::ensure(i == d || want <= have, "gather", || {
                format!(
                    "the index has shape {:?} and the tensor {:?}: dimension {i} of the index ({want}) is larger than the tensor's ({have}); only dimension {d}, the one gathered along, may differ freely",
                    index.shape(),
                    self.shape()
                )
            });
        }
        let positions = check::indices(
            "gather",
            &index.to_vec(),
            self.shape()[d],
            "dimension size",
        );
        self.gather_resolved("gather", d, index.shape(), &positions)
    }

    /// [`gather`](Tensor::gather) with checked positions, recording the op; `op` is the
    /// public op that asked, for a memory budget refusal's message.
    #[track_caller]
    fn gather_resolved(
        &self,
        op: &str,
        dim: usize,
        index_shape: &[usize],
        positions: &[usize],
    ) -> Tensor {
        memory::ensure_can_allocate(op, index_shape);
        let offsets =
            select::gather_offsets(self.shape(), index_shape, dim, positions);
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let data = crate::gpu::kernels::gather(op, &x, &offsets);
            let recorded = Op::Gather {
                x: self.clone(),
                offsets,
            };
            return Tensor::from_gpu(op, data, index_shape.to_vec(), Some(recorded));
        }
        let data = select::gather(self.buffer().as_slice(), &offsets);
        Tensor::from_op(
            data,
            index_shape.to_vec(),
            Op::Gather {
                x: self.clone(),
                offsets,
            },
        )
    }
}

/// `shape` without dimension `d`, or with it as 1 when `keepdim`.
fn reduced(shape: &[usize], d: usize, keepdim: bool) -> Vec<usize> {
    let mut out = shape.to_vec();
    if keepdim {
        out[d] = 1;
    } else {
        out.remove(d);
    }
    out
}
