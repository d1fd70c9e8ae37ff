//! A small reverse-mode automatic differentiation engine for `f32` tensors, written to be
//! read: every op's forward pass and derivative can be found by name in a few seconds.
//!
//! ```
//! use engine::Tensor;
//!
//! // y = softmax(x W), and the gradient of y's first entry with respect to W.
//! let x = Tensor::from_vec(vec![1.0, 2.0], &[1, 2]);
//! let w = Tensor::from_vec(vec![0.5, -0.5, 0.25, 0.0], &[2, 2]).requires_grad_();
//! let y = x.matmul(&w).softmax(-1);
//! y.narrow(1, 0, 1).sum().backward();
//! assert_eq!(w.grad().unwrap().shape(), &[2, 2]);
//! ```
//!
//! # A learning path
//! Read in this order; each step uses only what came before.
//! 1. [`Tensor`]: a shape and `f32` values; creation ([`Tensor::from_vec`],
//!    [`Tensor::zeros`], [`Tensor::randn`]), read-back ([`Tensor::to_vec`]), and the
//!    [`ShapeArg`] forms every shape argument accepts.
//! 2. The ops, PyTorch's names: arithmetic with broadcasting ([`shape::broadcast_shapes`]
//!    states the rule), [`Tensor::matmul`], reductions ([`Tensor::sum_dim`],
//!    [`Tensor::sum_dim_keepdim`]), [`Tensor::softmax`], reshaping ([`Tensor::reshape`],
//!    [`Tensor::transpose`]); then PyTorch's other staples as you need them: selection
//!    ([`Tensor::argmax`], [`Tensor::topk`], [`Tensor::gather`]), [`Tensor::clamp`],
//!    [`Tensor::cumsum`], [`Tensor::tril`], [`Tensor::logsumexp`], [`Tensor::mse_loss`].
//! 3. Autograd: [`Tensor::requires_grad_`], [`Tensor::backward`], [`Tensor::grad`] (and why
//!    it can be empty: [`NoGrad`]), [`no_grad`]; then [`gradcheck`], which checks any
//!    derivative against finite differences.
//! 4. [`nn`]: layers built from a config ([`nn::Linear`], [`nn::Embedding`], …), the
//!    [`nn::Module`] trait, and saving or loading weights by name ([`nn::StateDict`]).
//! 5. [`optim`]: [`optim::Sgd`], [`optim::Adam`], gradient clipping.
//! 6. The tools for when things go wrong: [`memory`] (bytes held, peak, a budget) and
//!    [`anomaly`] (the first op that made a NaN); [`threads`], the number of threads
//!    of large element-wise kernels; and [`kernels`], which SIMD kernels compute (the same
//!    bits on every CPU).
//!
//! `use engine::prelude::*` brings the names most programs need.
//!
//! Where to look in the source:
//! - [`Tensor`] (`tensor.rs`): the handle, creation, read-back, gradients.
//! - `ops/`: the public ops, one file per family (`arithmetic.rs`, `reduce.rs`, …).
//! - `op.rs`: the list of differentiable ops; `backprop.rs`: `backward` and every derivative.
//! - `cpu/`: the kernels, plain loops over slices (matrix products go through a blocked
//!   SIMD kernel, `cpu/gemm/`; `cpu/matmul.rs` says which and keeps the plain loop beside it).
//! - `cpu/math.rs`: the engine's own `exp`, `log`, `tanh`, `sigmoid` and `gelu`, the same
//!   bits on every CPU (the standard library's come from the platform's C library).
//! - `check.rs`: shape checks and their messages.
//! - [`nn`], [`optim`], [`gradcheck`]: layers, optimizers, the finite-difference checker.
//!
//! Each op in three places, all under `src/`:
//!
//! | op | forward (checks, then kernel) | kernel | derivative: arm of `input_grads` in `backprop.rs` |
//! |---|---|---|---|
//! | `add` `sub` `mul` `div` `maximum` `minimum` | `ops/arithmetic.rs` | `cpu/elementwise.rs` | `Op::Add` … `Op::Div`, `Op::Maximum`, `Op::Minimum` |
//! | `neg` `exp` `log` `tanh` `sigmoid` `relu` `gelu` `sqrt` `powf` `abs` `clamp` | `ops/unary.rs` | `ops/elementwise_fn.rs` (the formulas; `exp` `log` `tanh` `sigmoid` `gelu` from `cpu/math.rs`), looped by `cpu/elementwise.rs` | `Op::Neg` … `Op::Powf`, `Op::Abs`, `Op::Clamp` |
//! | `sum` `sum_dim` `sum_dims` `max` `max_dim` `min` `min_dim` (`mean` = sum × 1/n; `logsumexp` composed) | `ops/reduce.rs` | `cpu/reduce.rs` | `Op::Sum`, `Op::Max`, `Op::Min` |
//! | `cumsum` | `ops/reduce.rs` | `cpu/select.rs` | `Op::Cumsum` |
//! | `argmax` `argmin` `max_dim_with_indices` `topk` `gather` | `ops/select.rs` | `cpu/select.rs` | `Op::Gather` (indices take no gradient) |
//! | `softmax` `log_softmax` | `ops/softmax.rs` | `cpu/reduce.rs` | `Op::Softmax`, `Op::LogSoftmax` |
//! | `matmul` `bmm` `matmul_t` | `ops/matmul.rs` | `cpu/matmul.rs` | `Op::Matmul`, `Op::MatmulT` |
//! | `additive_scores` (fused `Σₕ w tanh(q + k)`) | `ops/additive.rs` | `cpu/additive.rs` | `Op::AdditiveScores` |
//! | `reshape` `flatten` `unsqueeze` `squeeze` `permute` `transpose` `broadcast_to` `expand` | `ops/reshape.rs` | `cpu/layout.rs` | `Op::Reshape`, `Op::Permute`, `Op::Expand` |
//! | `concat` `stack` `narrow` `slice` | `ops/join.rs` | `cpu/layout.rs` | `Op::Concat`, `Op::Narrow` |
//! | `index_select` `embedding` `repeat_interleave` `where_cond` `masked_fill` `tril` `triu` | `ops/indexing.rs` | `cpu/layout.rs`, `cpu/elementwise.rs` | `Op::IndexSelect`, `Op::Where` |
//! | `dropout`, `rand`, `randn` | `ops/random.rs` | — (a `mul` by a mask) | through `Op::Mul` |
//! | `cross_entropy` `mse_loss` | `ops/loss.rs` | — (composed) | through the ops it uses |
//!
//! Design choices a reader should know:
//! - Every tensor is stored contiguously in row-major order. `transpose` and `permute` copy;
//!   `reshape` and `detach` share the buffer. Kernels are plain loops over slices; the two
//!   places that go further (broadcasting a row at a time, and blocked matrix products)
//!   are described in `cpu/mod.rs`, as is the one fused op,
//!   `additive_scores`.
//! - There is one element type, `f32`. Indices (token ids, class targets) are `f32` tensors
//!   of whole numbers, checked before use; masks are `f32` tensors of 0s and 1s.
//! - Ops panic on a shape mistake, with a message naming the op and the shapes, at the
//!   caller's line; they do not return `Result`.

pub mod anomaly;
mod backprop;
mod check;
mod cpu;
mod display;
pub mod grad_mode;
pub mod gradcheck;
pub mod kernels;
pub mod memory;
pub mod nn;
mod op;
mod ops;
pub mod optim;
pub mod prelude;
pub mod random;
mod scoped_flag;
pub mod shape;
mod spare;
mod tensor;
pub mod threads;

pub use grad_mode::no_grad;
pub use op::GeluApprox;
pub use ops::Reduction;
pub use random::manual_seed;
pub use shape::{Dim, ShapeArg};
pub use tensor::{NoGrad, Tensor};
