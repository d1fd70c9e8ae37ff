//! `additive_scores`: the scores of additive (Bahdanau) attention in one fused op.

use crate::activation::Activation;
use crate::check;
use crate::cpu::additive::{self, Dims};
use crate::memory;
use crate::op::Op;
use crate::tensor::Tensor;

impl Tensor {
    /// The additive attention score of every query against every key,
    /// `s[b, q, k] = Σₕ w[h] · tanh(self[b, q, h] + keys[b, k, h])`, for projected queries
    /// `self: [B, Q, h]`, projected keys `keys: [B, K, h]` and a weight `w: [h]`; the result
    /// is `[B, Q, K]`.
    ///
    /// It equals `(self.unsqueeze(2) + keys.unsqueeze(1)).tanh().matmul(&w.unsqueeze(1))
    /// .squeeze(-1)` (to about 1e-6: `tanh` is computed by a rational approximation less
    /// than 5e-7 from the exact value) but never builds that form's `[B, Q, K, h]` tensor, in
    /// the forward pass or in the backward pass, which recomputes `tanh` instead of storing
    /// it. The memory is `B·Q·K` floats instead of about `3·B·Q·K·h`.
    ///
    /// ```
    /// use engine::Tensor;
    /// let queries = Tensor::from_vec(vec![0.5, -1.0], [1, 1, 2]);
    /// let keys = Tensor::from_vec(vec![0.0, 1.0, 1.0, 2.0], [1, 2, 2]);
    /// let w = Tensor::from_vec(vec![2.0, 1.0], [2]);
    /// let scores = queries.additive_scores(&keys, &w);
    /// assert_eq!(scores.shape(), &[1, 1, 2]);
    /// // key 0: 2·tanh(0.5) + tanh(0) = 0.924234
    /// assert!((scores.to_vec()[0] - 2.0 * 0.5f32.tanh()).abs() < 1e-6);
    /// ```
    #[track_caller]
    pub fn additive_scores(&self, keys: &Tensor, w: &Tensor) -> Tensor {
        self.additive_scores_with(keys, w, Activation::Tanh)
    }

    /// [`additive_scores`](Tensor::additive_scores) with another activation `f` in place
    /// of `tanh`: `s[b, q, k] = Σₕ w[h] · f(self[b, q, h] + keys[b, k, h])`, fused the same
    /// way, forward and backward. It equals
    /// `activation.apply(&(self.unsqueeze(2) + keys.unsqueeze(1))).matmul(&w.unsqueeze(1))
    /// .squeeze(-1)` without the `[B, Q, K, h]` tensor.
    ///
    /// ```
    /// use engine::{Activation, Tensor};
    /// let queries = Tensor::from_vec(vec![0.5, -1.0], [1, 1, 2]);
    /// let keys = Tensor::from_vec(vec![0.0, 1.0, 1.0, 2.0], [1, 2, 2]);
    /// let w = Tensor::from_vec(vec![2.0, 1.0], [2]);
    /// let scores = queries.additive_scores_with(&keys, &w, Activation::Relu);
    /// // key 0: 2·relu(0.5) + relu(0) = 1; key 1: 2·relu(1.5) + relu(1) = 4
    /// assert_eq!(scores.to_vec(), vec![1.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn additive_scores_with(
        &self,
        keys: &Tensor,
        w: &Tensor,
        activation: Activation,
    ) -> Tensor {
        let dims = check_additive(self.shape(), keys.shape(), w.shape());
        if let Some(p) = crate::autocast::active() {
            // Inputs and scores rounded, the sum over h in f32 (see `crate::autocast`).
            let _off = crate::autocast::suspend();
            let (q, k, w) = (
                self.to_precision(p),
                keys.to_precision(p),
                w.to_precision(p),
            );
            return q.additive_scores_with(&k, &w, activation).to_precision(p);
        }
        let shape = vec![dims.batch, dims.queries, dims.keys];
        let _device = check::device("additive_scores", &[self, keys, w]);
        #[cfg(feature = "wgpu")]
        if _device.is_gpu() {
            let (q, k, w_) = (self.on_gpu(), keys.on_gpu(), w.on_gpu());
            let (q, k, w_) = (
                q.expect("on the GPU"),
                k.expect("on the GPU"),
                w_.expect("on the GPU"),
            );
            let which = crate::gpu::kernels::Additive::Scores;
            let data = crate::gpu::kernels::additive(
                which,
                activation,
                [&q, &k, &w_, &w_],
                gpu_dims(dims),
            );
            let op = Op::AdditiveScores {
                queries: self.clone(),
                keys: keys.clone(),
                w: w.clone(),
                activation,
            };
            return Tensor::from_gpu("additive_scores", data, shape, Some(op));
        }
        memory::ensure_can_allocate("additive_scores", &shape);
        let data = additive::scores(
            self.buffer().as_slice(),
            keys.buffer().as_slice(),
            w.buffer().as_slice(),
            dims,
            activation,
        );
        Tensor::from_op(
            data,
            vec![dims.batch, dims.queries, dims.keys],
            Op::AdditiveScores {
                queries: self.clone(),
                keys: keys.clone(),
                w: w.clone(),
                activation,
            },
        )
    }

    /// The gradients of [`additive_scores`](Tensor::additive_scores) with respect to the
    /// queries (`self`), the keys and `w`, given `upstream`, the gradient of the loss with
    /// respect to the scores. Used by its derivative; records nothing.
    pub(crate) fn additive_scores_grads(
        &self,
        keys: &Tensor,
        w: &Tensor,
        upstream: &Tensor,
        activation: Activation,
    ) -> [Tensor; 3] {
        let dims = check_additive(self.shape(), keys.shape(), w.shape());
        #[cfg(feature = "wgpu")]
        if let Some(q) = self.on_gpu() {
            use crate::gpu::kernels::{Additive, additive};
            let (k, w_, up) = (keys.on_gpu(), w.on_gpu(), upstream.on_gpu());
            let (k, w_, up) = (
                k.expect("on the GPU"),
                w_.expect("on the GPU"),
                up.expect("on the GPU"),
            );
            let inputs = [&*q, &*k, &*w_, &*up];
            let grad = |which, shape: &[usize]| {
                let data = additive(which, activation, inputs, gpu_dims(dims));
                Tensor::from_gpu("additive_scores", data, shape.to_vec(), None)
            };
            return [
                grad(Additive::GradQueries, self.shape()),
                grad(Additive::GradKeys, keys.shape()),
                grad(Additive::GradW, w.shape()),
            ];
        }
        let grads = additive::grads(
            self.buffer().as_slice(),
            keys.buffer().as_slice(),
            w.buffer().as_slice(),
            upstream.buffer().as_slice(),
            dims,
            activation,
        );
        [
            Tensor::from_parts(
                "additive_scores",
                grads.queries,
                self.shape().to_vec(),
            ),
            Tensor::from_parts("additive_scores", grads.keys, keys.shape().to_vec()),
            Tensor::from_parts("additive_scores", grads.w, w.shape().to_vec()),
        ]
    }
}

/// The sizes as the GPU kernel takes them: (B, Q, K, h).
#[cfg(feature = "wgpu")]
fn gpu_dims(dims: Dims) -> (usize, usize, usize, usize) {
    (dims.batch, dims.queries, dims.keys, dims.hidden)
}

/// Checks `[B, Q, h]`, `[B, K, h]`, `[h]` and returns the sizes.
#[track_caller]
fn check_additive(queries: &[usize], keys: &[usize], w: &[usize]) -> Dims {
    let op = "additive_scores";
    check::rank(op, "the queries", queries, 3);
    check::rank(op, "the keys", keys, 3);
    check::rank(op, "the weight w", w, 1);
    check::ensure(queries[0] == keys[0], op, || {
        format!(
            "the queries {queries:?} and the keys {keys:?} have different batch sizes ({} and {})\n  expected: queries [B, Q, h], keys [B, K, h]",
            queries[0], keys[0]
        )
    });
    check::ensure(queries[2] == keys[2] && keys[2] == w[0], op, || {
        format!(
            "the hidden sizes differ: queries {queries:?}, keys {keys:?}, w {w:?}\n  expected: queries [B, Q, h], keys [B, K, h], w [h] with one h (project queries and keys to the same size first)"
        )
    });
    Dims {
        batch: queries[0],
        queries: queries[1],
        keys: keys[1],
        hidden: w[0],
    }
}
