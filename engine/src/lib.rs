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
//! Where to look:
//! - [`Tensor`] (`tensor.rs`): the handle, creation, read-back, gradients.
//! - `ops/`: the public ops, one file per family (`arithmetic.rs`, `reduce.rs`, …).
//! - `op.rs`: the list of differentiable ops; `backprop.rs`: `backward` and every derivative.
//! - `cpu/`: the kernels, plain loops over slices.
//! - `check.rs`: shape checks and their messages.
//! - [`nn`], [`optim`], [`gradcheck`]: layers, optimizers, the finite-difference checker.

pub mod anomaly;
mod backprop;
mod check;
mod cpu;
mod display;
pub mod grad_mode;
pub mod gradcheck;
pub mod memory;
pub mod nn;
mod op;
mod ops;
pub mod optim;
pub mod random;
mod scoped_flag;
pub mod shape;
mod tensor;

pub use grad_mode::no_grad;
pub use op::GeluApprox;
pub use ops::{Reduction, ShapeArg};
pub use random::manual_seed;
pub use shape::Dim;
pub use tensor::Tensor;
