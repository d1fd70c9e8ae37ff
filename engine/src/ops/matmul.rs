//! `matmul` (2-D and batched, with broadcast batch dimensions) and `bmm`.

use crate::check;
use crate::cpu;
use crate::memory;
use crate::op::Op;
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
        let batch = check::broadcast("matmul (batch dimensions)", &a[..ra - 2], &b[..rb - 2]);
        let mut shape = batch.clone();
        shape.extend([a[ra - 2], b[rb - 1]]);
        memory::ensure_can_allocate("matmul", &shape);
        let data = cpu::matmul::matmul(
            self.buffer().as_slice(),
            a,
            rhs.buffer().as_slice(),
            b,
            &batch,
        );
        Tensor::from_op(data, shape, Op::Matmul(self.clone(), rhs.clone()))
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
        self.matmul(rhs)
    }
}
