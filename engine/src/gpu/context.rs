//! Opening the GPU: the adapter, the device and its queue, once per process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use super::buffer::Pool;
use crate::device::DeviceError;

/// A GPU opened through wgpu: a cheap handle (cloning shares the device, its queue, its
/// compiled kernels and its pool of buffers). Get one from [`Device::gpu`](crate::Device::gpu).
#[derive(Clone)]
pub struct Gpu(pub(crate) Arc<Context>);

/// Everything one opened GPU holds.
pub(crate) struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: wgpu::AdapterInfo,
    pub(crate) limits: wgpu::Limits,
    /// Compiled kernels by name, built on first use.
    pub(crate) pipelines: Mutex<HashMap<String, Arc<wgpu::ComputePipeline>>>,
    /// Freed buffers kept for reuse, by size.
    pub(crate) pool: Mutex<Pool>,
    /// The first error wgpu reported outside an error scope, until a launch picks it up.
    pub(crate) uncaptured: Arc<Mutex<Option<String>>>,
}

/// The graphics APIs the engine asks wgpu for. OpenGL is left out: its compute support is
/// partial, and a machine without Vulkan should say so rather than half work.
const BACKENDS: wgpu::Backends = wgpu::Backends::PRIMARY;

fn looked_for() -> String {
    let mut names = Vec::new();
    if cfg!(any(
        target_os = "linux",
        target_os = "windows",
        target_os = "android"
    )) {
        names.push("Vulkan");
    }
    if cfg!(any(target_os = "macos", target_os = "ios")) {
        names.push("Metal");
    }
    if cfg!(target_os = "windows") {
        names.push("DirectX 12");
    }
    if names.is_empty() {
        names.push("Vulkan");
    }
    names.join(", ")
}

/// The process's GPU, opened on first call; later calls return the same one, or the same
/// error.
pub(crate) fn open() -> Result<Gpu, DeviceError> {
    static GPU: OnceLock<Result<Gpu, DeviceError>> = OnceLock::new();
    GPU.get_or_init(open_new).clone()
}

fn open_new() -> Result<Gpu, DeviceError> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = BACKENDS;
    let instance = wgpu::Instance::new(desc);
    let options = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    };
    let adapter =
        pollster::block_on(instance.request_adapter(&options)).map_err(|e| {
            DeviceError::NoAdapter {
                looked_for: looked_for(),
                detail: e.to_string(),
            }
        })?;
    let info = adapter.get_info();
    // The adapter's own limits, not WebGPU's defaults: more workgroup memory and larger
    // storage bindings where the GPU has them.
    let limits = adapter.limits();
    let descriptor = wgpu::DeviceDescriptor {
        label: Some("engine"),
        required_features: wgpu::Features::empty(),
        required_limits: limits.clone(),
        ..Default::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))
        .map_err(|e| DeviceError::DeviceRefused {
            adapter: format!("{} ({:?})", info.name, info.backend),
            detail: e.to_string(),
        })?;
    let uncaptured = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&uncaptured);
    device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| error.to_string());
    }));
    Ok(Gpu(Arc::new(Context {
        device,
        queue,
        info,
        limits,
        pipelines: Mutex::new(HashMap::new()),
        pool: Mutex::new(Pool::default()),
        uncaptured,
    })))
}

impl Gpu {
    /// The adapter's name, e.g. `NVIDIA H200` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub fn name(&self) -> &str {
        &self.0.info.name
    }

    /// The graphics API wgpu drives it through: `Vulkan`, `Metal` or `Dx12`.
    pub fn backend(&self) -> String {
        format!("{:?}", self.0.info.backend)
    }

    /// What kind of adapter it is: `DiscreteGpu`, `IntegratedGpu`, or `Cpu` for a software
    /// implementation such as lavapipe.
    pub fn kind(&self) -> String {
        format!("{:?}", self.0.info.device_type)
    }

    /// The largest tensor, in bytes, one kernel can read or write on this GPU.
    pub fn max_binding_bytes(&self) -> u64 {
        self.0.limits.max_storage_buffer_binding_size
    }

    /// Waits until every kernel queued so far has finished. Timings need it; nothing else
    /// does, since reading values back waits by itself.
    pub fn synchronize(&self) {
        self.0.wait();
    }
}

impl Context {
    /// Blocks until the queue is empty.
    pub(crate) fn wait(&self) {
        if let Err(e) = self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        }) {
            panic!("gpu: waiting for the GPU failed: {e}");
        }
    }

    /// Panics with the engine's message if wgpu reported an error since the last check.
    #[track_caller]
    pub(crate) fn check_errors(&self, op: &str) {
        let taken = self
            .uncaptured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(message) = taken {
            crate::check::fail(
                op,
                format!(
                    "the GPU ({}) reported an error: {message}\n  hint: this is a bug in the engine's GPU kernel for {op} or a limit of this GPU; the same op runs on the CPU (Device::Cpu)",
                    self.info.name
                ),
            );
        }
    }
}

impl PartialEq for Gpu {
    fn eq(&self, other: &Gpu) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Gpu {}

impl fmt::Display for Gpu {
    /// The adapter's name and backend: `llvmpipe (LLVM 15.0.6, 256 bits), Vulkan`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.name(), self.backend())
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Gpu({self})")
    }
}
