//! `matmul` (2-D and batched, with broadcast batch dimensions) and `bmm`.

use crate::autocast;
use crate::check;
use crate::cpu;
use crate::cpu::matmul::{Lhs, Rhs};
use crate::memory;
use crate::op::Op;
use crate::precision::Precision;
use crate::tensor::Tensor;

impl Tensor {
    /// Matrix product over the last two dimensions: `[..., m, k] × [..., k, n] → [..., m, n]`.
    /// Leading (batch) dimensions broadcast as in NumPy, so `[B, m, k] × [k, n]` works.
    ///
    /// ```
    /// use engine::Tensor;
    /// let a = Tensor::ones(&[4, 2, 3]);
    /// let b = Tensor::ones(&[3, 5]);
    /// assert_eq!(a.matmul(&b).shape(), &[4, 2, 5]);
    /// ```
    #[track_caller]
    pub fn matmul(&self, rhs: &Tensor) -> Tensor {
        let (a, b) = (self.shape(), rhs.shape());
        check::ensure(a.len() >= 2 && b.len() >= 2, "matmul", || {
            format!(
                "both operands need at least 2 dimensions, found {a:?} and {b:?}; hint: unsqueeze(0) a vector to make it a row"
            )
        });
        let (ra, rb) = (a.len(), b.len());
        check::ensure(a[ra - 1] == b[rb - 2], "matmul", || {
            format!(
                "cannot multiply {a:?} by {b:?}: the left operand has {} columns (its last dimension) but the right has {} rows (its second-to-last)\n  expected: [..., m, k] × [..., k, n]{}",
                a[ra - 1],
                b[rb - 2],
                if a[ra - 1] == b[rb - 1] {
                    "\n  hint: the last dimensions agree; did you mean rhs.transpose(-2, -1)?"
                } else {
                    ""
                }
            )
        });
        if let Some(p) = autocast::active() {
            return self.autocast_product("matmul", rhs, p, Tensor::matmul);
        }
        self.matmul_kernel(
            "matmul",
            rhs,
            (Lhs::AsIs, Rhs::AsIs),
            Some(Op::Matmul(self.clone(), rhs.clone())),
        )
    }

    /// `self · rhsᵀ` over the last two dimensions, `[..., m, k] × [..., n, k] → [..., m, n]`,
    /// reading `rhs` in place instead of copying its transpose: PyTorch's
    /// `F.linear(x, w)` (without the bias), which is how a layer with a `[out, in]` weight
    /// applies it. Leading dimensions broadcast as in [`Tensor::matmul`].
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0], [1, 2]);
    /// let w = Tensor::from_vec(vec![1.0, 0.0, 3.0, 4.0, 0.0, 1.0], [3, 2]); // [out, in]
    /// assert_eq!(x.matmul_t(&w).to_vec(), vec![1.0, 11.0, 2.0]);
    /// assert_eq!(x.matmul_t(&w).to_vec(), x.matmul(&w.transpose(0, 1)).to_vec());
    /// ```
    #[track_caller]
    pub fn matmul_t(&self, rhs: &Tensor) -> Tensor {
        let (a, b) = (self.shape(), rhs.shape());
        check::ensure(a.len() >= 2 && b.len() >= 2, "matmul_t", || {
            format!(
                "both operands need at least 2 dimensions, found {a:?} and {b:?}; hint: unsqueeze(0) a vector to make it a row"
            )
        });
        let (ra, rb) = (a.len(), b.len());
        check::ensure(a[ra - 1] == b[rb - 1], "matmul_t", || {
            format!(
                "cannot multiply {a:?} by the transpose of {b:?}: the left operand has {} columns but the right has {} (its last dimension, since it is read transposed)\n  expected: [..., m, k] × [..., n, k]{}",
                a[ra - 1],
                b[rb - 1],
                if a[ra - 1] == b[rb - 2] {
                    "\n  hint: the right operand is already [k, n]; did you mean matmul?"
                } else {
                    ""
                }
            )
        });
        if let Some(p) = autocast::active() {
            return self.autocast_product("matmul_t", rhs, p, Tensor::matmul_t);
        }
        self.matmul_kernel(
            "matmul_t",
            rhs,
            (Lhs::AsIs, Rhs::Transposed),
            Some(Op::MatmulT(self.clone(), rhs.clone())),
        )
    }

    /// `op(self, rhs)` as autocast to `precision` computes it: both inputs rounded to it,
    /// the product in `f32`, the output rounded (see [`crate::autocast`]).
    #[track_caller]
    pub(crate) fn autocast_product(
        &self,
        op: &str,
        rhs: &Tensor,
        precision: Precision,
        product: impl Fn(&Tensor, &Tensor) -> Tensor,
    ) -> Tensor {
        check::ensure(self.device().is_cpu() && rhs.device().is_cpu(), op, || {
            format!(
                "autocast to {precision} has no GPU kernels yet, and the operands {:?} and {:?} live on {}\n  hint: run the product outside the autocast scope, or on the CPU",
                self.shape(),
                rhs.shape(),
                if self.device().is_cpu() {
                    rhs.device()
                } else {
                    self.device()
                }
            )
        });
        let _off = autocast::suspend();
        product(&self.to_precision(precision), &rhs.to_precision(precision))
            .to_precision(precision)
    }

    /// `selfᵀ · rhs` over the last two dimensions, `[..., k, m] × [..., k, n] → [..., m, n]`,
    /// reading `self` in place: the gradient of a product's right operand, `Aᵀ · dC`. Used by
    /// derivatives (under `no_grad`), so it records nothing; the sizes were checked by the
    /// forward op.
    pub(crate) fn t_matmul(&self, rhs: &Tensor) -> Tensor {
        self.matmul_kernel("t_matmul", rhs, (Lhs::Transposed, Rhs::AsIs), None)
    }

    /// Broadcasts the batch dimensions, checks the allocation, and runs the kernel; the
    /// inner sizes were checked by the caller.
    #[track_caller]
    fn matmul_kernel(
        &self,
        name: &str,
        rhs: &Tensor,
        layout: (Lhs, Rhs),
        op: Option<Op>,
    ) -> Tensor {
        let (a, b) = (self.shape(), rhs.shape());
        let (ra, rb) = (a.len(), b.len());
        let batch = check::broadcast(
            &format!("{name} (batch dimensions)"),
            &a[..ra - 2],
            &b[..rb - 2],
        );
        let m = match layout.0 {
            Lhs::AsIs => a[ra - 2],
            Lhs::Transposed => a[ra - 1],
        };
        let n = match layout.1 {
            Rhs::AsIs => b[rb - 1],
            Rhs::Transposed => b[rb - 2],
        };
        let mut shape = batch.clone();
        shape.extend([m, n]);
        let _device = check::device(name, &[self, rhs]);
        #[cfg(feature = "wgpu")]
        if _device.is_gpu() {
            let data = gpu_matmul(
                name,
                (self, layout.0 == Lhs::Transposed),
                (rhs, layout.1 == Rhs::Transposed),
                &batch,
                (m, n),
            );
            return Tensor::from_gpu(name, data, shape, op);
        }
        memory::ensure_can_allocate(name, &shape);
        let data = cpu::matmul::matmul(
            (self.buffer().as_slice(), a),
            (rhs.buffer().as_slice(), b),
            layout,
            &batch,
        );
        match op {
            Some(op) => Tensor::from_op(data, shape, op),
            None => Tensor::from_parts(name, data, shape),
        }
    }

    /// Batched matrix product of two 3-D tensors with the same batch size:
    /// `[B, m, k] × [B, k, n] → [B, m, n]`, as `torch.bmm`. No broadcasting.
    #[track_caller]
    pub fn bmm(&self, rhs: &Tensor) -> Tensor {
        check::rank("bmm", "the left operand", self.shape(), 3);
        check::rank("bmm", "the right operand", rhs.shape(), 3);
        check::ensure(self.shape()[0] == rhs.shape()[0], "bmm", || {
            format!(
                "batch sizes differ: {:?} has {}, {:?} has {}",
                self.shape(),
                self.shape()[0],
                rhs.shape(),
                rhs.shape()[0]
            )
        });
        let (b, m, n) = (self.shape()[0], self.shape()[1], rhs.shape()[2]);
        // Asked here, so that a refusal names the op the caller wrote.
        crate::memory::ensure_can_allocate("bmm", &[b, m, n]);
        self.matmul(rhs)
    }
}

/// The product on the GPU: one launch over every matrix of the broadcast `batch`, each
/// operand read with a batch stride (0 when one matrix serves every batch; an operand
/// broadcast along only some batch dimensions is first copied out in full).
#[cfg(feature = "wgpu")]
#[track_caller]
fn gpu_matmul(
    name: &str,
    (a, a_t): (&Tensor, bool),
    (b, b_t): (&Tensor, bool),
    batch: &[usize],
    (m, n): (usize, usize),
) -> crate::gpu::GpuBuffer {
    use crate::gpu::kernels::{self, MatmulDims, broadcast_strides};
    let count: usize = batch.iter().product();
    let k = if a_t {
        a.shape()[a.rank() - 2]
    } else {
        a.shape()[a.rank() - 1]
    };
    // The buffer and batch stride of an operand whose last two dimensions are a matrix.
    let operand = |t: &Tensor| {
        let values = t.on_gpu().expect("on the GPU");
        let matrix: usize = t.shape()[t.rank() - 2..].iter().product();
        let own: usize = t.shape()[..t.rank() - 2].iter().product();
        if own == count {
            (values, matrix)
        } else if own == 1 {
            (values, 0)
        } else {
            let mut full = batch.to_vec();
            full.extend(&t.shape()[t.rank() - 2..]);
            let strides: Vec<usize> = broadcast_strides(t.shape(), &full)
                .into_iter()
                .map(|s| s as usize)
                .collect();
            let copy = kernels::strided_copy(name, &values, 0, &full, &strides);
            let copied = Tensor::from_gpu(name, copy, full, None);
            (copied.on_gpu().expect("on the GPU"), matrix)
        }
    };
    let (a_values, a_batch_stride) = operand(a);
    let (b_values, b_batch_stride) = operand(b);
    let dims = MatmulDims {
        batch: count,
        m,
        n,
        k,
        a_batch_stride,
        b_batch_stride,
        a_transposed: a_t,
        b_transposed: b_t,
    };
    kernels::matmul(name, &a_values, &b_values, dims)
}
