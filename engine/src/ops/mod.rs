//! The public ops on [`Tensor`](crate::Tensor), one file per family.
//!
//! Each op checks its arguments (`crate::check`), runs a kernel (`crate::cpu`), and records
//! an [`Op`](crate::op::Op) so `backward` can find its derivative in `crate::backprop`.

mod additive;
mod arithmetic;
pub(crate) mod elementwise_fn;
mod indexing;
mod join;
mod loss;
mod matmul;
mod random;
mod reduce;
mod reshape;
mod select;
mod softmax;
mod unary;

pub use loss::Reduction;
