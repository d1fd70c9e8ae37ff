//! Joining and cutting along a dimension: `concat`, `stack`, `narrow`, `slice`.

use std::borrow::Borrow;
use std::ops::Range;

use crate::check;
use crate::cpu::layout;
use crate::memory;
use crate::op::Op;
use crate::shape::{Dim, split_at_dim};
use crate::tensor::Tensor;

impl Tensor {
    /// Joins tensors along an existing dimension, like `torch.cat`. All other dimensions
    /// must agree.
    ///
    /// ```
    /// use engine::Tensor;
    /// let a = Tensor::zeros(&[2, 3]);
    /// let b = Tensor::ones(&[2, 1]);
    /// assert_eq!(Tensor::concat(&[&a, &b], -1).shape(), &[2, 4]);
    /// ```
    #[track_caller]
    pub fn concat<T: Borrow<Tensor>>(tensors: &[T], dim: impl Dim) -> Tensor {
        check::ensure(!tensors.is_empty(), "concat", || {
            "needs at least one tensor".into()
        });
        let first = tensors[0].borrow().shape().to_vec();
        let d = dim.resolve("concat", first.len());
        for (i, t) in tensors.iter().enumerate() {
            let s = t.borrow().shape();
            let agrees = s.len() == first.len()
                && s.iter()
                    .zip(&first)
                    .enumerate()
                    .all(|(k, (x, y))| k == d || x == y);
            check::ensure(agrees, "concat", || {
                format!(
                    "tensor {i} has shape {s:?} but tensor 0 has {first:?}; all dimensions except {d} must match"
                )
            });
        }
        let mut shape = first.clone();
        shape[d] = 0;
        for t in tensors {
            shape[d] = match shape[d].checked_add(t.borrow().shape()[d]) {
                Some(total) => total,
                None => check::fail("concat", "the joined size overflows a usize"),
            };
        }
        let inputs: Vec<&Tensor> = tensors.iter().map(Borrow::borrow).collect();
        let _device = check::device("concat", &inputs);
        #[cfg(feature = "wgpu")]
        if let crate::Device::Gpu(gpu) = &_device {
            let out = crate::gpu::GpuBuffer::uninit(
                gpu,
                "concat",
                crate::shape::numel(&shape),
            );
            let strides = crate::gpu::kernels::row_major_strides(&shape);
            let mut start = 0;
            for t in &inputs {
                let piece = t.to(&_device);
                let values = piece.on_gpu().expect("on the GPU");
                let offset = start * strides[d];
                crate::gpu::kernels::scatter_copy(
                    "concat",
                    &values,
                    &out,
                    offset,
                    t.shape(),
                    &strides,
                );
                start += t.shape()[d];
            }
            let inputs = inputs.into_iter().cloned().collect();
            return Tensor::from_gpu(
                "concat",
                out,
                shape,
                Some(Op::Concat(inputs, d)),
            );
        }
        memory::ensure_can_allocate("concat", &shape);
        let (outer, _, inner) = split_at_dim(&first, d);
        let buffers: Vec<_> = tensors.iter().map(|t| t.borrow().buffer()).collect();
        let parts: Vec<(&[f32], usize)> = buffers
            .iter()
            .zip(tensors)
            .map(|(b, t)| (b.as_slice(), t.borrow().shape()[d]))
            .collect();
        let data = layout::concat(&parts, outer, inner);
        let inputs = tensors.iter().map(|t| t.borrow().clone()).collect();
        Tensor::from_op(data, shape, Op::Concat(inputs, d))
    }

    /// Joins tensors of equal shape along a new dimension, like `torch.stack`.
    #[track_caller]
    pub fn stack<T: Borrow<Tensor>>(tensors: &[T], dim: impl Dim) -> Tensor {
        check::ensure(!tensors.is_empty(), "stack", || {
            "needs at least one tensor".into()
        });
        let first = tensors[0].borrow().shape().to_vec();
        for (i, t) in tensors.iter().enumerate() {
            let s = t.borrow().shape();
            check::ensure(s == first.as_slice(), "stack", || {
                format!(
                    "tensor {i} has shape {s:?} but tensor 0 has {first:?}; stacked tensors must have equal shapes"
                )
            });
        }
        let d = dim.resolve_insert("stack", first.len());
        let lifted: Vec<Tensor> =
            tensors.iter().map(|t| t.borrow().unsqueeze(d)).collect();
        Tensor::concat(&lifted, d)
    }

    /// `len` entries of dimension `dim`, starting at `start`, like `torch.narrow`.
    #[track_caller]
    pub fn narrow(&self, dim: impl Dim, start: usize, len: usize) -> Tensor {
        let d = dim.resolve("narrow", self.rank());
        let size = self.shape()[d];
        check::ensure(
            start.checked_add(len).is_some_and(|end| end <= size),
            "narrow",
            || {
                format!(
                    "the range {start}..{} is outside dimension {d} of {:?}, which has size {size}",
                    start.saturating_add(len),
                    self.shape()
                )
            },
        );
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let strides = crate::gpu::kernels::row_major_strides(self.shape());
            let mut shape = self.shape().to_vec();
            shape[d] = len;
            let data = crate::gpu::kernels::strided_copy(
                "narrow",
                &x,
                start * strides[d],
                &shape,
                &strides,
            );
            let op = Op::Narrow {
                x: self.clone(),
                dim: d,
                start,
            };
            return Tensor::from_gpu("narrow", data, shape, Some(op));
        }
        let data = layout::narrow(
            self.buffer().as_slice(),
            split_at_dim(self.shape(), d),
            start,
            len,
        );
        let mut shape = self.shape().to_vec();
        shape[d] = len;
        Tensor::from_op(
            data,
            shape,
            Op::Narrow {
                x: self.clone(),
                dim: d,
                start,
            },
        )
    }

    /// Entries `range` of dimension `dim`: `x.slice(1, 2..5)` is PyTorch's `x[:, 2:5]`.
    #[track_caller]
    pub fn slice(&self, dim: impl Dim, range: Range<usize>) -> Tensor {
        check::ensure(range.start <= range.end, "slice", || {
            format!("the range {range:?} is reversed")
        });
        self.narrow(dim, range.start, range.end - range.start)
    }
}
