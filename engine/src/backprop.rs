//! Reverse-mode differentiation: `backward()` and the derivative of every op.
//!
//! `backward` visits the graph in reverse creation order (a tensor's inputs are
//! always older than the tensor, so this is a topological order and no recursion is
//! needed), hands each op the gradient of its output, and collects the gradients of
//! its inputs. Leaves that asked for a gradient accumulate it in `grad()`.
//!
//! Derivatives are written with tensor ops, under [`no_grad`](crate::no_grad), so any
//! backend that implements the forward ops gets autograd too. Three use a kernel of
//! their own, for speed and memory, each tested against the composed formula:
//! softmax's gradient over the last dimension (`softmax_backward`), the right operand
//! of a product (`t_matmul`, `Aᵀ·g` read in place), and the fused additive scores
//! (`additive_scores_grads`).
//!
//! Calling `backward` twice on the same graph is allowed and well defined: the graph
//! is kept, intermediate gradients start from zero on every call, and each call
//! *adds* its gradient to the leaves (PyTorch's behaviour with `retain_graph=True`).
//! Call `zero_grad` between steps, as an optimizer loop does.

use std::collections::HashMap;

use crate::anomaly;
use crate::check;
use crate::grad_mode;
use crate::op::{GeluApprox, Op};
use crate::ops::elementwise_fn::{BinaryFn, UnaryFn};
use crate::tensor::Tensor;

impl Tensor {
    /// Computes the gradient of this scalar with respect to every leaf that requires
    /// one, adding it to the leaf's [`grad`](Tensor::grad). Starts from an upstream
    /// gradient of 1.
    ///
    /// Gradients *accumulate*: a leaf used twice receives both contributions, and so
    /// does a leaf across two calls. Calling `backward` again on the same graph is
    /// allowed (the graph is kept for as long as the tensor lives): intermediate
    /// gradients start from zero on every call, and each call adds its full gradient
    /// to the leaves once more, as PyTorch does with `retain_graph=True`. Call
    /// [`zero_grad`](Tensor::zero_grad) (or an optimizer's) between training steps.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![3.0], &[1]).requires_grad_();
    /// let y = x.square().sum(); // dy/dx = 2x = 6
    /// y.backward();
    /// y.backward();
    /// assert_eq!(x.grad().unwrap().item(), 12.0); // 6 + 6
    /// ```
    #[track_caller]
    pub fn backward(&self) {
        check::ensure(self.numel() == 1, "backward", || {
            format!(
                "called on a tensor of shape {:?}; backward() needs a single value (a loss). hint: reduce with .sum() or .mean(), or pass an upstream gradient with backward_with",
                self.shape()
            )
        });
        self.backward_with(&self.ones_like());
    }

    /// Like [`backward`](Tensor::backward), starting from the given upstream gradient
    /// (the gradient of some scalar with respect to `self`), which must have `self`'s
    /// shape.
    #[track_caller]
    pub fn backward_with(&self, upstream: &Tensor) {
        check::ensure(upstream.shape() == self.shape(), "backward_with", || {
            format!(
                "the upstream gradient has shape {:?} but the tensor has {:?}",
                upstream.shape(),
                self.shape()
            )
        });
        check::ensure(self.requires_grad(), "backward", || {
            "this tensor does not require a gradient: no input was marked with requires_grad_(), or it was computed under no_grad".into()
        });
        // Not `no_grad(|| …)`: a closure would hide the caller's line from anomaly
        // mode.
        let _recording_off = grad_mode::no_grad_guard();
        // The graph already rounds gradients where the forward pass was autocast.
        let _autocast_off = crate::autocast::suspend();
        run_backward(self, upstream.detach());
    }
}

// ANCHOR: reverse_topological
/// Every tensor that requires a gradient and is reachable from `root`, newest first.
fn reverse_topological(root: &Tensor) -> Vec<Tensor> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.clone()];
    let mut found = Vec::new();
    while let Some(t) = stack.pop() {
        if !seen.insert(t.0.id) {
            continue;
        }
        if let Some(op) = &t.0.op {
            stack.extend(
                op.inputs()
                    .into_iter()
                    .filter(|i| i.requires_grad())
                    .cloned(),
            );
        }
        found.push(t);
    }
    found.sort_unstable_by_key(|t| std::cmp::Reverse(t.0.id));
    found
}
// ANCHOR_END: reverse_topological

// ANCHOR: run_backward
#[track_caller]
fn run_backward(root: &Tensor, upstream: Tensor) {
    let called_at = std::panic::Location::caller();
    let mut grads: HashMap<u64, Tensor> = HashMap::new();
    grads.insert(root.0.id, upstream);
    for node in reverse_topological(root) {
        let Some(grad) = grads.remove(&node.0.id) else {
            continue;
        };
        if node.keeps_grad() {
            // Each kept gradient gets a handle of its own: both inputs of an `add`
            // receive the very same gradient tensor, which must not stay shared
            // between two parameters.
            let mut slot = node.0.grad.lock().expect("grad lock poisoned");
            *slot = Some(match slot.take() {
                Some(old) => &old + &grad,
                None => grad.detach(),
            });
        }
        let Some(op) = &node.0.op else {
            continue;
        };
        let inputs = op.inputs();
        let computed = anomaly::in_derivative(&node, called_at, || {
            input_grads(op, &node, &grad)
        });
        for (i, input_grad) in computed.into_iter().enumerate() {
            let Some(g) = input_grad else {
                continue;
            };
            anomaly::check_backward(op, i, &g);
            let input = inputs[i];
            debug_assert_eq!(
                g.shape(),
                input.shape(),
                "gradient shape of {}",
                op.name()
            );
            // A CPU scalar used with a GPU tensor gets its gradient back on the CPU.
            let g = g.to(&input.device());
            let total = match grads.remove(&input.0.id) {
                Some(old) => &old + &g,
                None => g,
            };
            grads.insert(input.0.id, total);
        }
    }
}
// ANCHOR_END: run_backward

// ANCHOR: sum_to
/// Sums `g` over the dimensions that broadcasting added or repeated, giving `shape`.
fn sum_to(g: &Tensor, shape: &[usize]) -> Tensor {
    if g.shape() == shape {
        return g.clone();
    }
    let pad = g.rank() - shape.len();
    let dims: Vec<usize> = (0..g.rank())
        .filter(|&d| d < pad || (shape[d - pad] == 1 && g.shape()[d] != 1))
        .collect();
    g.sum_dims_keepdim(&dims).reshape(shape)
}
// ANCHOR_END: sum_to

/// `g` with the reduced dimensions put back as size 1, then broadcast to `shape`.
fn unreduce(g: &Tensor, shape: &[usize], dims: &[usize], keepdim: bool) -> Tensor {
    let mut kept = shape.to_vec();
    for &d in dims {
        kept[d] = 1;
    }
    let g = if keepdim { g.clone() } else { g.reshape(&kept) };
    g.broadcast_to(shape)
}

// ANCHOR: input_grads
/// The gradient for each input of `op` (`None` where the input needs none), given the
/// op's output `out` and the gradient `g` of the loss with respect to `out`.
///
/// One arm per op and no catch-all: a new `Op` variant does not compile until its
/// derivative is written here.
fn input_grads(op: &Op, out: &Tensor, g: &Tensor) -> Vec<Option<Tensor>> {
    let wants = |t: &Tensor| t.requires_grad();
    let one = |x: &Tensor, f: &dyn Fn() -> Tensor| vec![wants(x).then(f)];
    match op {
        // d(a+b) = da + db; broadcasting in the forward means summing in the
        // backward.
        Op::Add(a, b) => vec![
            wants(a).then(|| sum_to(g, a.shape())),
            wants(b).then(|| sum_to(g, b.shape())),
        ],
        Op::Sub(a, b) => vec![
            wants(a).then(|| sum_to(g, a.shape())),
            wants(b).then(|| sum_to(&-g, b.shape())),
        ],
        // d(ab) = b da + a db
        Op::Mul(a, b) => vec![
            wants(a).then(|| sum_to(&(g * b), a.shape())),
            wants(b).then(|| sum_to(&(g * a), b.shape())),
        ],
        // d(a/b) = da / b − (a / b²) db = da / b − (out / b) db
        Op::Div(a, b) => vec![
            wants(a).then(|| sum_to(&(g / b), a.shape())),
            wants(b).then(|| sum_to(&-(g * out / b), b.shape())),
        ],
        Op::Neg(x) => one(x, &|| -g),
        // d eˣ = eˣ dx
        Op::Exp(x) => one(x, &|| g * out),
        // d ln x = dx / x
        Op::Log(x) => one(x, &|| g / x),
        // d tanh x = (1 − tanh² x) dx
        Op::Tanh(x) => one(x, &|| g * (1.0 - out.square())),
        // d σ(x) = σ(x)(1 − σ(x)) dx
        Op::Sigmoid(x) => one(x, &|| g * out * (1.0 - out)),
        // ANCHOR_END: input_grads
        // d relu(x) = [x > 0] dx
        Op::Relu(x) => one(x, &|| g * x.unary(UnaryFn::Step, None)),
        Op::Gelu(x, approx) => one(x, &|| {
            let f = match approx {
                GeluApprox::Erf => UnaryFn::GeluErfGrad,
                GeluApprox::Tanh => UnaryFn::GeluTanhGrad,
            };
            g * x.unary(f, None)
        }),
        // d √x = dx / (2 √x)
        Op::Sqrt(x) => one(x, &|| g * 0.5 / out),
        // d|x| = sign(x) dx, taking 0 at x = 0 as PyTorch does.
        Op::Abs(x) => one(x, &|| g * x.unary(UnaryFn::Sign, None)),
        // The gradient passes where min ≤ x ≤ max (bounds included, as in PyTorch).
        Op::Clamp { x, min, max } => {
            one(x, &|| g * x.unary(UnaryFn::ClampGrad(*min, *max), None))
        }
        // The gradient goes to the larger (smaller) operand; a tie gives each half,
        // as in PyTorch.
        Op::Maximum(a, b) => extremum_grads(a, b, g, BinaryFn::Gt),
        Op::Minimum(a, b) => extremum_grads(a, b, g, BinaryFn::Lt),
        // d xᵖ = p xᵖ⁻¹ dx (p = 0 is a constant: its derivative is 0 even at x = 0,
        // where p·x⁻¹ is 0·∞.)
        Op::Powf(x, p) => one(x, &|| {
            if *p == 0.0 {
                g.zeros_like()
            } else {
                g * *p * x.powf(p - 1.0)
            }
        }),
        // Every summed element receives the gradient of its sum.
        Op::Sum { x, dims, keepdim } => {
            one(x, &|| unreduce(g, x.shape(), dims, *keepdim))
        }
        // The gradient goes to the maximal (minimal) elements, shared equally between
        // ties.
        Op::Max { x, dim, keepdim } | Op::Min { x, dim, keepdim } => {
            one(x, &|| to_extremes(x, out, g, *dim, *keepdim))
        }
        // The gradient of a running sum: each input reaches every later output, so
        // its gradient is the running sum of g taken from the end.
        Op::Cumsum { x, dim } => one(x, &|| g.cumsum_reversed(*dim)),
        // ANCHOR: input_grads_matmul
        // With s = softmax(x): dx = s ⊙ (g − Σ g ⊙ s), fused over the last dimension.
        Op::Softmax(x, d) => one(x, &|| out.softmax_backward(g, *d)),
        // With l = log_softmax(x): dx = g − softmax(x) Σ g = g − eˡ Σ g
        Op::LogSoftmax(x, d) => one(x, &|| g - out.exp() * g.sum_dim_keepdim(*d)),
        // C = AB: dA = dC Bᵀ, dB = Aᵀ dC (summed over broadcast batch dimensions)
        // (Bᵀ and Aᵀ are read in place: matmul_t computes g·Bᵀ, t_matmul Aᵀ·g.)
        Op::Matmul(a, b) => vec![
            wants(a).then(|| sum_to(&g.matmul_t(b), a.shape())),
            wants(b).then(|| sum_to(&a.t_matmul(g), b.shape())),
        ],
        // ANCHOR_END: input_grads_matmul
        // The derivatives of `safe_softmax_composed`'s ops, fused: the same bits.
        Op::SafeSoftmax { x, saved } => {
            one(x, &|| x.safe_softmax_grad(out, g, saved))
        }
        // C = A Bᵀ: dA = dC B, dB = dCᵀ A (summed over broadcast batch dimensions)
        Op::MatmulT(a, b) => vec![
            wants(a).then(|| sum_to(&g.matmul(b), a.shape())),
            wants(b).then(|| sum_to(&g.t_matmul(a), b.shape())),
        ],
        // s = Σₕ w f(q + k): with t = f(q + k), dq = dk = Σ g w f'(q + k), dw = Σ g t
        // (f' = 1 − t² for tanh), computed by one kernel that recomputes t rather than
        // storing it.
        Op::AdditiveScores {
            queries,
            keys,
            w,
            activation,
        } => {
            let [dq, dk, dw] = queries.additive_scores_grads(keys, w, g, *activation);
            vec![
                wants(queries).then_some(dq),
                wants(keys).then_some(dk),
                wants(w).then_some(dw),
            ]
        }
        // out = softmax(S) V with S = Q Kᵀ · scale: the weights are recomputed block by
        // block from each row's saved log Σ exp, never stored (see the kernel's notes).
        Op::BlockedAttention {
            queries,
            keys,
            values,
            saved,
        } => {
            let [dq, dk, dv] =
                queries.blocked_attention_grads(keys, values, saved, g);
            vec![
                wants(queries).then_some(dq),
                wants(keys).then_some(dk),
                wants(values).then_some(dv),
            ]
        }
        Op::Reshape(x) => one(x, &|| g.reshape(x.shape())),
        // Undo the permutation: output dim d came from input dim perm[d].
        Op::Permute(x, perm) => one(x, &|| {
            let mut inverse = vec![0; perm.len()];
            for (d, &p) in perm.iter().enumerate() {
                inverse[p] = d;
            }
            g.permute(inverse)
        }),
        Op::Expand(x) => one(x, &|| sum_to(g, x.shape())),
        // Each input gets its own stretch of the output's gradient.
        Op::Concat(xs, d) => {
            let mut start = 0;
            xs.iter()
                .map(|x| {
                    let len = x.shape()[*d];
                    let piece = wants(x).then(|| g.narrow(*d, start, len));
                    start += len;
                    piece
                })
                .collect()
        }
        // The gradient of the kept stretch, padded with zeros where nothing was
        // taken.
        Op::Narrow { x, dim, start } => one(x, &|| {
            let mut before = x.shape().to_vec();
            before[*dim] = *start;
            let mut after = x.shape().to_vec();
            after[*dim] = x.shape()[*dim] - start - g.shape()[*dim];
            Tensor::concat(
                &[
                    Tensor::zeros(&before).to(&g.device()),
                    g.clone(),
                    Tensor::zeros(&after).to(&g.device()),
                ],
                *dim,
            )
        }),
        // Scatter-add: each read offset receives the gradient of every output read
        // there.
        Op::Gather { x, offsets } => {
            one(x, &|| g.scatter_add_offsets(offsets, x.shape()))
        }
        // Scatter-add: a row selected k times receives k gradients.
        Op::IndexSelect { x, dim, index } => {
            one(x, &|| g.index_add_rows(*dim, index, x.shape()[*dim]))
        }
        Op::To(x) => one(x, &|| g.to(&x.device())),
        // The gradient of a tensor stored in half precision is itself rounded to it.
        Op::ToPrecision(x, precision) => one(x, &|| g.to_precision(*precision)),
        Op::Where { cond, a, b } => {
            let zero = Tensor::scalar(0.0);
            vec![
                None,
                wants(a).then(|| sum_to(&cond.where_cond(g, &zero), a.shape())),
                wants(b).then(|| sum_to(&cond.where_cond(&zero, g), b.shape())),
            ]
        }
    }
}

/// The gradient of `max` or `min` (over `dim`, or everything): `g` goes to the
/// elements equal to the result `out`, shared equally between ties.
fn to_extremes(
    x: &Tensor,
    out: &Tensor,
    g: &Tensor,
    dim: Option<usize>,
    keepdim: bool,
) -> Tensor {
    let dims: Vec<usize> = match dim {
        Some(d) => vec![d],
        None => (0..x.rank()).collect(),
    };
    let hits = x.eq_mask(&unreduce(out, x.shape(), &dims, keepdim));
    let count = hits.sum_dims_keepdim(&dims);
    unreduce(g, x.shape(), &dims, keepdim) * hits / count
}

/// The gradients of `maximum` (`wins` = `Gt`) or `minimum` (`wins` = `Lt`) of `a` and
/// `b`: each element of `g` goes to the operand that won, or half to each on a tie.
fn extremum_grads(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    wins: BinaryFn,
) -> Vec<Option<Tensor>> {
    let half_on_ties = a.eq_mask(b) * 0.5;
    let share = |winner: &Tensor, loser: &Tensor| {
        winner.binary(loser, wins, None) + &half_on_ties
    };
    vec![
        a.requires_grad()
            .then(|| sum_to(&(g * share(a, b)), a.shape())),
        b.requires_grad()
            .then(|| sum_to(&(g * share(b, a)), b.shape())),
    ]
}

impl Tensor {
    /// The adjoint of `index_select` (used only by its derivative): a tensor whose
    /// dimension `dim` has size `size`, where entry `index[j]` accumulates entry `j`
    /// of `self`.
    fn index_add_rows(&self, dim: usize, index: &[usize], size: usize) -> Tensor {
        let mut shape = self.shape().to_vec();
        shape[dim] = size;
        let parts = crate::shape::split_at_dim(&shape, dim);
        #[cfg(feature = "wgpu")]
        if let Some(g) = self.on_gpu() {
            // Entry (o, j, i) of `self` goes to (o, index[j], i) of the result.
            let (outer, _, inner) = parts;
            let mut targets = Vec::with_capacity(self.numel());
            for o in 0..outer {
                for &row in index {
                    targets.extend((0..inner).map(|i| (o * size + row) * inner + i));
                }
            }
            let n = crate::shape::numel(&shape);
            let out =
                crate::gpu::kernels::scatter_add("index_select", &g, &targets, n);
            return Tensor::from_gpu("index_select", out, shape, None);
        }
        let data =
            crate::cpu::layout::index_add(self.buffer().as_slice(), parts, index);
        Tensor::from_parts("index_select", data, shape)
    }

    /// The adjoint of a gather (used only by its derivative): zeros of `shape`, with
    /// entry `i` of `self` added at offset `offsets[i]`.
    fn scatter_add_offsets(&self, offsets: &[usize], shape: &[usize]) -> Tensor {
        let n = crate::shape::numel(shape);
        #[cfg(feature = "wgpu")]
        if let Some(g) = self.on_gpu() {
            let out = crate::gpu::kernels::scatter_add("gather", &g, offsets, n);
            return Tensor::from_gpu("gather", out, shape.to_vec(), None);
        }
        let data =
            crate::cpu::select::scatter_add(self.buffer().as_slice(), offsets, n);
        Tensor::from_parts("gather", data, shape.to_vec())
    }
}
