//! Picking and replacing entries: `index_select`, `embedding`, `masked_fill`, `where_cond`,
//! the triangles `tril` and `triu`, `repeat_interleave`.
//!
//! The engine has one element type, so indices are `f32` tensors holding whole numbers
//! (exact up to 2²⁴), and masks are `f32` tensors of 0s and 1s. Both are checked.

use crate::check;
use crate::cpu::{elementwise, layout};
use crate::memory;
use crate::op::Op;
use crate::shape::{Dim, split_at_dim};
use crate::tensor::Tensor;

impl Tensor {
    /// The entries of dimension `dim` listed in `index` (a 1-D tensor of whole numbers), in
    /// that order, like `torch.index_select`. Indices may repeat; their gradients add up.
    #[track_caller]
    pub fn index_select(&self, dim: impl Dim, index: &Tensor) -> Tensor {
        let d = dim.resolve("index_select", self.rank());
        check::rank("index_select", "the index", index.shape(), 1);
        let mut out_shape = self.shape().to_vec();
        out_shape[d] = index.numel();
        memory::ensure_can_allocate("index_select", &out_shape);
        let idx = check::indices(
            "index_select",
            &index.to_vec(),
            self.shape()[d],
            "dimension size",
        );
        let mut shape = self.shape().to_vec();
        shape[d] = idx.len();
        #[cfg(feature = "wgpu")]
        if let Some(x) = self.on_gpu() {
            let parts = split_at_dim(self.shape(), d);
            let data =
                crate::gpu::kernels::index_select("index_select", &x, parts, &idx);
            let op = Op::IndexSelect {
                x: self.clone(),
                dim: d,
                index: idx,
            };
            return Tensor::from_gpu("index_select", data, shape, Some(op));
        }
        let data = layout::index_select(
            self.buffer().as_slice(),
            split_at_dim(self.shape(), d),
            &idx,
        );
        Tensor::from_op(
            data,
            shape,
            Op::IndexSelect {
                x: self.clone(),
                dim: d,
                index: idx,
            },
        )
    }

    /// Looks up rows of an embedding table: `ids` of any shape `[...]` holding token ids,
    /// `weight: [vocab, dim]`, result `[..., dim]`, like `torch.nn.functional.embedding`.
    /// A token used twice collects the gradient of both uses.
    #[track_caller]
    pub fn embedding(ids: &Tensor, weight: &Tensor) -> Tensor {
        check::rank(
            "embedding",
            "the weight (vocabulary × dimension)",
            weight.shape(),
            2,
        );
        let vocab = weight.shape()[0];
        check::indices("embedding", &ids.to_vec(), vocab, "the vocabulary size");
        let mut shape = ids.shape().to_vec();
        shape.push(weight.shape()[1]);
        memory::ensure_can_allocate("embedding", &shape);
        let flat = ids.reshape([-1]);
        let rows = weight.index_select(0, &flat);
        rows.reshape(shape)
    }

    /// Elementwise choice: `self` is the condition (1 for true, 0 for false; any other value
    /// is refused), picking from `a` where true and `b` where false. All three broadcast
    /// together. No gradient flows to the condition.
    #[track_caller]
    pub fn where_cond(&self, a: &Tensor, b: &Tensor) -> Tensor {
        let ab = check::broadcast("where_cond (a with b)", a.shape(), b.shape());
        let out =
            check::broadcast("where_cond (condition with values)", self.shape(), &ab);
        let _device = check::device("where_cond", &[self, a, b]);
        #[cfg(feature = "wgpu")]
        if _device.is_gpu() {
            // The 0/1 check would need the condition's values on the host; the kernel
            // takes any non-zero value as true.
            let (c, x, y) = (self.to(&_device), a.to(&_device), b.to(&_device));
            let data = crate::gpu::kernels::where_cond(
                (&c.on_gpu().expect("on the GPU"), self.shape()),
                (&x.on_gpu().expect("on the GPU"), a.shape()),
                (&y.on_gpu().expect("on the GPU"), b.shape()),
                &out,
            );
            let op = Op::Where {
                cond: c.detach(),
                a: a.clone(),
                b: b.clone(),
            };
            return Tensor::from_gpu("where", data, out, Some(op));
        }
        check::zero_one("where_cond", "the condition", self.buffer().as_slice());
        memory::ensure_can_allocate("where_cond", &out);
        let (c, x, y) = (self.buffer(), a.buffer(), b.buffer());
        let data = elementwise::select(
            (c.as_slice(), self.shape()),
            (x.as_slice(), a.shape()),
            (y.as_slice(), b.shape()),
            &out,
        );
        Tensor::from_op(
            data,
            out,
            Op::Where {
                cond: self.detach(),
                a: a.clone(),
                b: b.clone(),
            },
        )
    }

    /// Replaces the entries where `mask` is 1 by `value`; `mask` holds only 0 and 1 and
    /// broadcasts to `self`'s shape. Masked entries get no gradient.
    ///
    /// ```
    /// use engine::Tensor;
    /// let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3]);
    /// let mask = Tensor::from_vec(vec![0.0, 0.0, 1.0], &[3]);
    /// assert_eq!(scores.masked_fill(&mask, -1e6).to_vec(), vec![1.0, 2.0, -1e6]);
    /// ```
    #[track_caller]
    pub fn masked_fill(&self, mask: &Tensor, value: f32) -> Tensor {
        let out = check::broadcast("masked_fill", self.shape(), mask.shape());
        check::ensure(out == self.shape(), "masked_fill", || {
            format!(
                "the mask {:?} must broadcast to the tensor's shape {:?}, but together they make {out:?}",
                mask.shape(),
                self.shape()
            )
        });
        if mask.device().is_cpu() {
            check::zero_one("masked_fill", "the mask", mask.buffer().as_slice());
        }
        memory::ensure_can_allocate("masked_fill", self.shape());
        mask.where_cond(&Tensor::scalar(value), self)
    }
}

impl Tensor {
    /// The lower triangle of the last two dimensions (a batch of matrices), like
    /// `torch.tril(x, diagonal)`: entry `(i, j)` is kept where `j ≤ i + diagonal` and
    /// becomes 0 elsewhere. `diagonal = 0` keeps the main diagonal, `-1` starts below it,
    /// `1` above. The gradient passes only through the kept entries.
    ///
    /// ```
    /// use engine::Tensor;
    /// let causal = Tensor::ones([3, 3]).tril(0); // 1 where query i may see key j ≤ i
    /// assert_eq!(causal.to_vec(), vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn tril(&self, diagonal: i64) -> Tensor {
        self.triangle("tril", diagonal, |i, j, k| j - i <= k)
    }

    /// The upper triangle of the last two dimensions, like `torch.triu(x, diagonal)`:
    /// entry `(i, j)` is kept where `j ≥ i + diagonal` and becomes 0 elsewhere.
    /// `x.triu(1)` is what a causal mask hides (the keys after each query).
    ///
    /// ```
    /// use engine::Tensor;
    /// let future = Tensor::ones([3, 3]).triu(1);
    /// assert_eq!(future.to_vec(), vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn triu(&self, diagonal: i64) -> Tensor {
        self.triangle("triu", diagonal, |i, j, k| j - i >= k)
    }

    /// Keeps the entries `(i, j)` of the last two dimensions for which `keep(i, j, diagonal)`
    /// holds and zeroes the others (`keep` compares `j − i`, which fits in an `i64`, with the
    /// diagonal, so that any `i64` diagonal is taken as it is, with no overflow), through `where_cond` so that a kept entry's gradient
    /// passes and a NaN or an infinity outside the triangle does not leak into the result.
    #[track_caller]
    fn triangle(
        &self,
        op: &str,
        diagonal: i64,
        keep: fn(i64, i64, i64) -> bool,
    ) -> Tensor {
        check::ensure(self.rank() >= 2, op, || {
            format!(
                "needs a matrix or a batch of matrices (rank ≥ 2), found shape {:?}",
                self.shape()
            )
        });
        let (rows, cols) =
            (self.shape()[self.rank() - 2], self.shape()[self.rank() - 1]);
        memory::ensure_can_allocate(op, self.shape());
        let mut pattern = Vec::with_capacity(rows * cols);
        for i in 0..rows as i64 {
            for j in 0..cols as i64 {
                pattern.push(if keep(i, j, diagonal) { 1.0 } else { 0.0 });
            }
        }
        let pattern =
            Tensor::from_parts(op, pattern, vec![rows, cols]).to(&self.device());
        pattern.where_cond(self, &Tensor::scalar(0.0))
    }

    /// Repeats each entry of dimension `dim` `repeats` times in place, like
    /// `torch.repeat_interleave(x, repeats, dim)`: `[a, b]` becomes `[a, a, b, b]`.
    /// (Compare `concat(&[x, x])`, which gives `[a, b, a, b]`: mixing the two up is a classic
    /// multi-head attention bug.)
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![1.0, 2.0], &[2]);
    /// assert_eq!(x.repeat_interleave(2, 0).to_vec(), vec![1.0, 1.0, 2.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn repeat_interleave(&self, repeats: usize, dim: impl Dim) -> Tensor {
        let d = dim.resolve("repeat_interleave", self.rank());
        let n = self.shape()[d];
        let mut shape = self.shape().to_vec();
        shape[d] = match n.checked_mul(repeats) {
            Some(total) => total,
            None => check::fail(
                "repeat_interleave",
                format!(
                    "{n} entries repeated {repeats} times do not fit in a usize (dimension {d} of {:?})",
                    self.shape()
                ),
            ),
        };
        memory::ensure_can_allocate("repeat_interleave", &shape);
        let index: Vec<f32> =
            (0..shape[d]).map(|i| (i / repeats.max(1)) as f32).collect();
        self.index_select(d, &Tensor::from_vec(index, [shape[d]]))
    }
}
