//! Ops that change a tensor's shape: `reshape`, `unsqueeze`, `squeeze`, `permute`,
//! `transpose`, `broadcast_to`/`expand`.

use crate::check;
use crate::cpu::{elementwise, layout};
use crate::memory;
use crate::op::Op;
use crate::shape::{Dim, ShapeArg, broadcast_shapes};
use crate::tensor::Tensor;

impl Tensor {
    /// The same values viewed with another shape of the same size. One entry may be `-1`,
    /// meaning "whatever size makes the count right".
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::arange(12).reshape([3, -1]);
    /// assert_eq!(x.shape(), &[3, 4]);
    /// ```
    #[track_caller]
    pub fn reshape(&self, shape: impl ShapeArg) -> Tensor {
        let spec = shape.entries();
        let holes = spec.iter().filter(|&&s| s == -1).count();
        check::ensure(
            holes <= 1 && spec.iter().all(|&s| s >= -1),
            "reshape",
            || {
                format!(
                    "invalid target {spec:?}: sizes must be ≥ 0, with at most one -1"
                )
            },
        );
        let n = self.numel();
        // Every entry is now -1 or a size that came from a usize, so it fits in one.
        let sizes: Vec<usize> = spec.iter().map(|&s| s.max(0) as usize).collect();
        let resolved = if holes == 1 {
            let known: Vec<usize> = spec
                .iter()
                .zip(&sizes)
                .filter(|(s, _)| **s != -1)
                .map(|(_, &k)| k)
                .collect();
            let known = check::numel("reshape", &known);
            check::ensure(known > 0 && n.is_multiple_of(known), "reshape", || {
                format!(
                    "cannot reshape {:?} ({n} elements) into {spec:?}: {n} is not a multiple of {known}",
                    self.shape()
                )
            });
            spec.iter()
                .zip(&sizes)
                .map(|(&s, &k)| if s == -1 { n / known } else { k })
                .collect()
        } else {
            sizes
        };
        let count = check::numel("reshape", &resolved);
        check::ensure(count == n, "reshape", || {
            format!(
                "cannot reshape {:?} ({n} elements) into {resolved:?} ({count} elements)",
                self.shape()
            )
        });
        self.share_with_shape(resolved, Op::Reshape(self.clone()))
    }

    /// Inserts a dimension of size 1 at `dim` (which may be `rank`, or `-1` for the end).
    #[track_caller]
    pub fn unsqueeze(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve_insert("unsqueeze", self.rank());
        let mut shape = self.shape().to_vec();
        shape.insert(d, 1);
        self.reshape(shape)
    }

    /// Removes dimension `dim`, which must have size 1.
    #[track_caller]
    pub fn squeeze(&self, dim: impl Dim) -> Tensor {
        let d = dim.resolve("squeeze", self.rank());
        check::ensure(self.shape()[d] == 1, "squeeze", || {
            format!(
                "dimension {d} of {:?} has size {}, not 1; only a size-1 dimension can be removed",
                self.shape(),
                self.shape()[d]
            )
        });
        let mut shape = self.shape().to_vec();
        shape.remove(d);
        self.reshape(shape)
    }

    /// Merges dimensions `start_dim..=end_dim` into one, like `torch.flatten(x, start_dim,
    /// end_dim)`; the values are shared, not copied. `flatten(0, -1)` makes a 1-D tensor
    /// (PyTorch's `x.flatten()`), `flatten(1, -1)` keeps the batch dimension (`x.flatten(1)`).
    /// A scalar becomes a 1-D tensor of one value, as in PyTorch.
    ///
    /// ```
    /// use engine::Tensor;
    /// let heads = Tensor::zeros([2, 5, 4, 8]); // [batch, tokens, heads, head size]
    /// assert_eq!(heads.flatten(2, 3).shape(), &[2, 5, 32]); // heads merged back
    /// assert_eq!(heads.flatten(0, -1).shape(), &[320]);
    /// ```
    #[track_caller]
    pub fn flatten(&self, start_dim: impl Dim, end_dim: impl Dim) -> Tensor {
        if self.rank() == 0 {
            // PyTorch accepts 0 or -1 for both on a scalar.
            start_dim.resolve("flatten", 1);
            end_dim.resolve("flatten", 1);
            return self.reshape([1]);
        }
        let start = start_dim.resolve("flatten", self.rank());
        let end = end_dim.resolve("flatten", self.rank());
        check::ensure(start <= end, "flatten", || {
            format!(
                "start_dim ({start}) comes after end_dim ({end}) in a tensor of rank {}; hint: flatten(0, -1) flattens everything",
                self.rank()
            )
        });
        let shape = self.shape();
        let mut merged = shape[..start].to_vec();
        merged.push(shape[start..=end].iter().product());
        merged.extend_from_slice(&shape[end + 1..]);
        self.reshape(merged)
    }

    /// Reorders the dimensions: dimension `d` of the result is dimension `dims[d]` of `self`.
    ///
    /// ```
    /// use engine::Tensor;
    /// assert_eq!(Tensor::zeros(&[2, 3, 4]).permute([2, 0, 1]).shape(), &[4, 2, 3]);
    /// ```
    #[track_caller]
    pub fn permute(&self, dims: impl ShapeArg) -> Tensor {
        let rank = self.rank();
        let spec = dims.entries();
        check::ensure(spec.len() == rank, "permute", || {
            format!(
                "{} dimensions given for a tensor of rank {rank} ({:?})",
                spec.len(),
                self.shape()
            )
        });
        let mut perm = Vec::with_capacity(rank);
        for &d in &spec {
            perm.push(d.resolve("permute", rank));
        }
        let mut seen = vec![false; rank];
        for &p in &perm {
            check::ensure(!seen[p], "permute", || {
                format!("dimension {p} appears twice in {spec:?}")
            });
            seen[p] = true;
        }
        let shape: Vec<usize> = perm.iter().map(|&p| self.shape()[p]).collect();
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            // Output dimension d walks input dimension perm[d].
            let from = crate::gpu::kernels::row_major_strides(self.shape());
            let strides: Vec<usize> = perm.iter().map(|&p| from[p]).collect();
            let data =
                crate::gpu::kernels::strided_copy("permute", &x, 0, &shape, &strides);
            return Tensor::from_gpu(
                "permute",
                data,
                shape,
                Some(Op::Permute(self.clone(), perm)),
            );
        }
        let data = layout::permute(self.buffer().as_slice(), self.shape(), &perm);
        Tensor::from_op(data, shape, Op::Permute(self.clone(), perm))
    }

    /// Swaps two dimensions.
    #[track_caller]
    pub fn transpose(&self, dim0: impl Dim, dim1: impl Dim) -> Tensor {
        let (a, b) = (
            dim0.resolve("transpose", self.rank()),
            dim1.resolve("transpose", self.rank()),
        );
        let mut perm: Vec<usize> = (0..self.rank()).collect();
        perm.swap(a, b);
        // Asked here so that a refusal names the op the caller wrote.
        memory::ensure_can_allocate("transpose", self.shape());
        self.permute(perm)
    }

    /// Repeats size-1 (or missing leading) dimensions to reach `shape`, as broadcasting would.
    #[track_caller]
    pub fn broadcast_to(&self, shape: impl ShapeArg) -> Tensor {
        let shape = check::sizes("broadcast_to", shape);
        self.broadcast_to_in("broadcast_to", &shape)
    }

    #[track_caller]
    fn broadcast_to_in(&self, op: &str, shape: &[usize]) -> Tensor {
        check::ensure(
            broadcast_shapes(self.shape(), shape).as_deref() == Some(shape),
            op,
            || {
                format!(
                    "cannot broadcast {:?} to {shape:?}: each dimension must equal the target's or be 1",
                    self.shape()
                )
            },
        );
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let strides: Vec<usize> =
                crate::gpu::kernels::broadcast_strides(self.shape(), shape)
                    .into_iter()
                    .map(|s| s as usize)
                    .collect();
            let data = crate::gpu::kernels::strided_copy(op, &x, 0, shape, &strides);
            return Tensor::from_gpu(
                op,
                data,
                shape.to_vec(),
                Some(Op::Expand(self.clone())),
            );
        }
        memory::ensure_can_allocate(op, shape);
        let data =
            elementwise::broadcast_to(self.buffer().as_slice(), self.shape(), shape);
        Tensor::from_op(data, shape.to_vec(), Op::Expand(self.clone()))
    }

    /// Like [`Tensor::broadcast_to`], with `-1` meaning "keep this dimension", as PyTorch's
    /// `expand`.
    #[track_caller]
    pub fn expand(&self, shape: impl ShapeArg) -> Tensor {
        let spec = shape.entries();
        check::ensure(spec.len() >= self.rank(), "expand", || {
            format!(
                "the target {spec:?} has fewer dimensions than the tensor's shape {:?}",
                self.shape()
            )
        });
        let pad = spec.len() - self.rank();
        let mut target = Vec::with_capacity(spec.len());
        for (i, &s) in spec.iter().enumerate() {
            target.push(match s {
                -1 if i >= pad => self.shape()[i - pad],
                // A non-negative entry came from a usize or a smaller type, so it fits.
                s if s >= 0 => s as usize,
                _ => check::fail(
                    "expand",
                    format!(
                        "size {s} at position {i} of {spec:?} is invalid for shape {:?}: sizes must be ≥ 0, and -1 (keep the size) only refers to an existing dimension",
                        self.shape()
                    ),
                ),
            });
        }
        self.broadcast_to_in("expand", &target)
    }
}
