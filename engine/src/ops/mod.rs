//! The public ops on [`Tensor`](crate::Tensor), one file per family.
//!
//! Each op checks its arguments (`crate::check`), runs a kernel on the device of its inputs
//! (`crate::cpu`, or `crate::gpu::kernels` with the `wgpu` feature), and records an
//! [`Op`](crate::op::Op) so `backward` can find its derivative in `crate::backprop`.

mod additive;
mod arithmetic;
pub(crate) mod blocked_attention;
mod device;
pub(crate) mod elementwise_fn;
mod indexing;
mod join;
mod loss;
mod matmul;
mod precision;
mod random;
mod reduce;
mod reshape;
pub(crate) mod safe_softmax;
mod select;
mod softmax;
mod unary;

pub use blocked_attention::{BlockedAttentionOptions, DEFAULT_ATTENTION_BLOCK};
pub use loss::Reduction;
pub use safe_softmax::SafeSoftmaxMask;
