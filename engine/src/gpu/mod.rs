//! The GPU backend: wgpu for the device, WGSL for the kernels. Compiled only with the
//! engine's `wgpu` feature.
//!
//! - `context.rs`: opening the adapter and device once per process, with clear errors,
//!   and turning wgpu's validation errors into the engine's messages.
//! - `buffer.rs`: a tensor's values in GPU memory, uploads, read-backs, and the pool that
//!   reuses freed buffers.
//! - `launch.rs`: one kernel launch: a cached pipeline, its bindings, a small array of
//!   parameters, and the workgroup count.
//! - `kernels.rs`: one function per GPU kernel, called by the ops' forward passes; the WGSL
//!   sources are in `shaders/`.
//!
//! Every kernel reads its inputs from storage buffers and writes one output buffer; the
//! parameters a kernel needs (sizes, strides, a scalar) travel in a read-only `array<u32>`
//! (floats as their bits). Launches are queued on the device and run in order; nothing
//! waits for the GPU until values are read back.

mod buffer;
mod context;
pub(crate) mod kernels;
mod launch;

pub(crate) use buffer::GpuBuffer;
pub use context::Gpu;
pub(crate) use context::open;
