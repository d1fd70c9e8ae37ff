//! CPU kernels: plain loops over `&[f32]` in row-major order.
//!
//! Kernels trust their arguments: the tensor layer (`crate::ops`) has already checked every
//! shape and index, so a kernel never needs to report a mistake. They know nothing about
//! autograd either; they only compute values.

pub(crate) mod elementwise;
pub(crate) mod layout;
pub(crate) mod matmul;
pub(crate) mod reduce;
mod strided;

pub(crate) use strided::StridedOffsets;
