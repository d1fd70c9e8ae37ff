//! A tensor's values: host memory, or (with the `wgpu` feature) a GPU buffer.

use crate::device::Device;
use crate::memory::Buffer;

/// Where the values of one tensor (or of several that share them) are kept.
pub(crate) enum Storage {
    /// Host memory, read by the CPU kernels.
    Host(Buffer),
    /// GPU memory, read by the WGSL kernels.
    #[cfg(feature = "wgpu")]
    Gpu(crate::gpu::GpuBuffer),
}

impl Storage {
    /// The values in host memory, for a CPU kernel. Every op checks its inputs' device and
    /// sends a GPU tensor to its GPU kernel before a CPU kernel could ask, so reaching the
    /// panic here means an op lacks that check: a bug in the engine, named as such.
    #[track_caller]
    pub(crate) fn as_slice(&self) -> &[f32] {
        match self {
            Storage::Host(buffer) => buffer.as_slice(),
            #[cfg(feature = "wgpu")]
            Storage::Gpu(_) => panic!(
                "engine bug: a CPU kernel was handed a tensor that lives on the GPU; please report it with the op that was running"
            ),
        }
    }

    /// The device that holds the values.
    pub(crate) fn device(&self) -> Device {
        match self {
            Storage::Host(_) => Device::Cpu,
            #[cfg(feature = "wgpu")]
            Storage::Gpu(buffer) => Device::Gpu(buffer.gpu().clone()),
        }
    }

    /// A copy of the values in host memory, read back from the GPU if they live there.
    pub(crate) fn to_vec(&self) -> Vec<f32> {
        match self {
            Storage::Host(buffer) => buffer.as_slice().to_vec(),
            #[cfg(feature = "wgpu")]
            Storage::Gpu(buffer) => buffer.read(),
        }
    }

    /// The GPU buffer, when the values live on a GPU.
    #[cfg(feature = "wgpu")]
    pub(crate) fn gpu(&self) -> Option<&crate::gpu::GpuBuffer> {
        match self {
            Storage::Host(_) => None,
            Storage::Gpu(buffer) => Some(buffer),
        }
    }
}
