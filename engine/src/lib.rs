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
//! 6. [`Device`]: where values live and ops run, the CPU or (with the `wgpu` feature) a
//!    GPU; [`Tensor::to`] moves a tensor, [`Device::best`] picks the GPU when there is one.
//! 7. The tools for when things go wrong: [`memory`] (bytes held, peak, a budget) and
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
//! - `device.rs`, `storage.rs`: the device of a tensor and where its values are kept;
//!   `gpu/` (with the `wgpu` feature): opening the GPU, its buffers, kernel launches, and the
//!   WGSL kernels in `gpu/shaders/`.
//! - `cpu/math.rs`: the engine's own `exp`, `log`, `tanh`, `sigmoid` and `gelu`, the same
//!   bits on every CPU (the standard library's come from the platform's C library).
//! - `check.rs`: shape checks and their messages.
//! - [`nn`], [`optim`], [`gradcheck`]: layers, optimizers, the finite-difference checker.
//!
//! Each op in four places, all under `src/`. The GPU kernels (`gpu/shaders/*.wgsl`, run by
//! `gpu/kernels.rs`) are compiled only with the `wgpu` feature; an op marked "none" there
//! stops with a message when its input lives on a GPU, and never runs on the CPU in secret.
//!
//! | op | forward (checks, then kernel) | CPU kernel | GPU kernel (`gpu/shaders/`) | derivative: arm of `input_grads` in `backprop.rs` |
//! |---|---|---|---|---|
//! | `add` `sub` `mul` `div` `maximum` `minimum` (and the comparisons `gt` … `eq_mask`) | `ops/arithmetic.rs` | `cpu/elementwise.rs` | `binary.wgsl` | `Op::Add` … `Op::Div`, `Op::Maximum`, `Op::Minimum` |
//! | `neg` `exp` `log` `tanh` `sigmoid` `relu` `gelu` `sqrt` `powf` `abs` `clamp` | `ops/unary.rs` | `ops/elementwise_fn.rs` (the formulas; `exp` `log` `tanh` `sigmoid` `gelu` from `cpu/math.rs`), looped by `cpu/elementwise.rs` | `unary.wgsl` (one pipeline per formula, in `gpu/kernels.rs`) | `Op::Neg` … `Op::Powf`, `Op::Abs`, `Op::Clamp` |
//! | `sum` `sum_dim` `sum_dims` `max` `max_dim` `min` `min_dim` (`mean` = sum × 1/n; `logsumexp` composed) | `ops/reduce.rs` | `cpu/reduce.rs` | `reduce.wgsl` | `Op::Sum`, `Op::Max`, `Op::Min` |
//! | `cumsum` | `ops/reduce.rs` | `cpu/select.rs` | none | `Op::Cumsum` |
//! | `gather` | `ops/select.rs` | `cpu/select.rs` | `gather.wgsl`; derivative `segment_sum.wgsl` | `Op::Gather` (indices take no gradient) |
//! | `argmax` `argmin` | `ops/select.rs` | `cpu/select.rs` | `arg_extreme.wgsl` | none (indices take no gradient) |
//! | `max_dim_with_indices` `topk` | `ops/select.rs` | `cpu/select.rs` | none | `Op::Gather` for the values |
//! | `softmax` `log_softmax` | `ops/softmax.rs` | `cpu/reduce.rs` | `softmax.wgsl` | `Op::Softmax`, `Op::LogSoftmax` |
//! | `safe_softmax` (over the entries a keep mask and causal order leave visible; the same bits as its composed definition, `safe_softmax_composed`) | `ops/safe_softmax.rs` | `cpu/safe_softmax.rs` (fused, forward and backward) | — (composed: `where.wgsl`, `reduce.wgsl`, `unary.wgsl`, `binary.wgsl`) | `Op::SafeSoftmax` on the CPU, the composed ops' on a GPU |
//! | `matmul` `bmm` `matmul_t` | `ops/matmul.rs` | `cpu/matmul.rs` | `matmul.wgsl` (tiled, workgroup memory; reads either operand transposed in place) | `Op::Matmul`, `Op::MatmulT` |
//! | `additive_scores` `additive_scores_with` (fused `Σₕ w f(q + k)`, `f` = tanh or ReLU) | `ops/additive.rs` | `cpu/additive.rs` | `additive.wgsl` (scores and the three gradients) | `Op::AdditiveScores` |
//! | `blocked_attention` (exact `softmax(Q Kᵀ · scale) V` in blocks of keys, online softmax; masks: causal, lengths, keep) | `ops/blocked_attention.rs` | `cpu/blocked_attention.rs` | none | `Op::BlockedAttention` (recomputes the weights block by block) |
//! | `reshape` `flatten` `unsqueeze` `squeeze` (share the values) `permute` `transpose` `broadcast_to` `expand` | `ops/reshape.rs` | `cpu/layout.rs` | `strided_copy.wgsl` | `Op::Reshape`, `Op::Permute`, `Op::Expand` |
//! | `concat` `stack` `narrow` `slice` | `ops/join.rs` | `cpu/layout.rs` | `scatter_copy.wgsl` (concat), `strided_copy.wgsl` (narrow) | `Op::Concat`, `Op::Narrow` |
//! | `index_select` `embedding` `repeat_interleave` | `ops/indexing.rs` | `cpu/layout.rs` | `index_select.wgsl`; derivative `segment_sum.wgsl` | `Op::IndexSelect` |
//! | `where_cond` `masked_fill` `tril` `triu` | `ops/indexing.rs` | `cpu/elementwise.rs` | `where.wgsl` | `Op::Where` |
//! | `autocast(p, …)` (a scope: products and attention scores take inputs rounded to `p` and give a rounded output) | `autocast.rs`, and a check at the top of `matmul`, `matmul_t`, `additive_scores_with`, `blocked_attention` | — (composed: `to_precision`, the op, `to_precision`) | none (emulated on the CPU) | through `Op::ToPrecision` and the op's own |
//! | `to_precision` (values rounded to f16 or bf16, still `f32`) | `ops/precision.rs` | `precision.rs` (the conversions, bit by bit) | none | `Op::ToPrecision` (the gradient rounded the same way) |
//! | `to` (a copy to another device) | `ops/device.rs` | — | an upload or a read-back (`gpu/buffer.rs`) | `Op::To` |
//! | `dropout`, `rand`, `randn` | `ops/random.rs` | — (values drawn on the host, the same on every device; dropout is a `mul` by a mask) | through `binary.wgsl` | through `Op::Mul` |
//! | `cross_entropy` `mse_loss` | `ops/loss.rs` | — (composed) | — (composed) | through the ops it uses |
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

mod activation;
pub mod anomaly;
pub mod autocast;
mod backprop;
mod check;
mod cpu;
pub mod device;
mod display;
#[cfg(feature = "wgpu")]
mod gpu;
pub mod grad_mode;
pub mod gradcheck;
pub mod kernels;
pub mod memory;
pub mod nn;
mod op;
mod ops;
pub mod optim;
pub mod precision;
pub mod prelude;
pub mod random;
mod scoped_flag;
pub mod shape;
mod spare;
mod storage;
mod tensor;
pub mod threads;

pub use activation::Activation;
pub use autocast::autocast;
pub use device::{Device, DeviceError};
pub use grad_mode::no_grad;
pub use op::GeluApprox;
pub use ops::{
    BlockedAttentionOptions, DEFAULT_ATTENTION_BLOCK, Reduction, SafeSoftmaxMask,
};
pub use random::manual_seed;
pub use shape::{Dim, ShapeArg};
pub use tensor::{NoGrad, Tensor};
