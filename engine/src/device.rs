//! Where a tensor's values live and its ops run: the CPU, or a GPU through wgpu.
//!
//! Every tensor has a [`Device`]. Creation functions make CPU tensors, as in PyTorch;
//! [`Tensor::to`](crate::Tensor::to) copies one to another device, and every op runs on the device of its
//! inputs, its result staying there. Derivatives are ops too, so `backward()` runs on the
//! device of the tensors it differentiates, and gradients live beside their tensors.
//!
//! ```
//! use engine::{Device, Tensor};
//!
//! let device = Device::best(); // the GPU if this build and this machine have one, else the CPU
//! let x = Tensor::randn([2, 3]).to(&device).requires_grad_();
//! let y = x.tanh().sum();
//! y.backward();
//! assert_eq!(x.grad().unwrap().device(), device);
//! assert_eq!(x.grad().unwrap().to_vec().len(), 6); // to_vec reads back from any device
//! ```
//!
//! The GPU needs the engine's `wgpu` feature (`cargo run --features engine/wgpu …`), and a
//! driver: Vulkan on Linux and Windows, Metal on macOS, DirectX 12 on Windows. Without the
//! feature nothing of wgpu is compiled in, and [`Device::gpu`] says how to turn it on.
//!
//! Two rules, both PyTorch's:
//! - An op whose tensor inputs live on two devices stops with a message naming both,
//!   except that a 0-dimensional CPU tensor (a scalar such as the `2.0` of `&x * 2.0`) goes
//!   with a tensor on any device.
//! - Values are read back from a GPU only when the caller asks for them
//!   ([`Tensor::to_vec`](crate::Tensor::to_vec), [`Tensor::item`](crate::Tensor::item), printing, or `.to(&Device::Cpu)`).
//!   The exceptions are values an op needs on the host to check them or to plan its
//!   kernel: indices (`index_select`, `embedding`, `gather`, `cross_entropy`'s targets)
//!   and the attention library's masks are read back when they live on a GPU, so keep
//!   them on the CPU, where they are read in place; `clip_grad_norm` reads one total per
//!   gradient; anomaly mode reads every result.
//!
//! A GPU's results equal the CPU's to f32 rounding, not bit for bit: it adds long sums in
//! other orders and has its own `exp`, `log` and `tanh` (WGSL's). Random values (`randn`,
//! dropout's masks) are drawn on the host from the engine's generator and uploaded, so a
//! seed gives the same draws on every device.

use std::fmt;
use std::str::FromStr;

/// A GPU opened through wgpu: a cheap handle (cloning shares it).
///
/// Without the engine's `wgpu` feature this type has no values, so a `Device::Gpu` cannot
/// be made and code that matches on a [`Device`] compiles either way.
#[cfg(not(feature = "wgpu"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gpu {}

#[cfg(not(feature = "wgpu"))]
impl fmt::Display for Gpu {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

#[cfg(feature = "wgpu")]
pub use crate::gpu::Gpu;

/// Where a tensor's values live and where its ops run.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Device {
    /// Host memory, and the engine's CPU kernels.
    #[default]
    Cpu,
    /// A GPU's memory, and the engine's WGSL kernels run through wgpu.
    Gpu(Gpu),
}

/// The methods of the `wgpu` build's `Gpu`, so that code naming them compiles in every
/// build (without the feature no `Gpu` exists to call them on).
#[cfg(not(feature = "wgpu"))]
impl Gpu {
    /// The adapter's name.
    pub fn name(&self) -> &str {
        match *self {}
    }

    /// The graphics API wgpu drives it through.
    pub fn backend(&self) -> String {
        match *self {}
    }

    /// What kind of adapter it is.
    pub fn kind(&self) -> String {
        match *self {}
    }

    /// The largest tensor, in bytes, one kernel can read or write.
    pub fn max_binding_bytes(&self) -> u64 {
        match *self {}
    }

    /// Bytes of GPU memory held by live tensors.
    pub fn live_bytes(&self) -> u64 {
        match *self {}
    }

    /// Bytes of freed buffers kept for reuse.
    pub fn pooled_bytes(&self) -> u64 {
        match *self {}
    }

    /// Waits until every kernel queued so far has finished.
    pub fn synchronize(&self) {
        match *self {}
    }
}

/// The name of the environment variable that chooses a device for programs that read it
/// with [`Device::from_env`]: `cpu`, `gpu` or `best`.
pub const ENV_VAR: &str = "ENGINE_DEVICE";

impl Device {
    /// The GPU, opened once per process and shared: the first GPU wgpu finds (a
    /// high-performance one where there is a choice), or why there is none.
    pub fn gpu() -> Result<Device, DeviceError> {
        #[cfg(feature = "wgpu")]
        {
            crate::gpu::open().map(Device::Gpu)
        }
        #[cfg(not(feature = "wgpu"))]
        {
            Err(DeviceError::NotCompiled)
        }
    }

    /// The GPU when there is one, else the CPU, with a one-line notice on standard error
    /// that says why (only when the build has the `wgpu` feature: a CPU-only build is
    /// asking for nothing else).
    pub fn best() -> Device {
        match Device::gpu() {
            Ok(gpu) => gpu,
            Err(DeviceError::NotCompiled) => Device::Cpu,
            Err(why) => {
                eprintln!("note: running on the CPU: {}", why.summary());
                Device::Cpu
            }
        }
    }

    /// The device named by a command-line flag or a setting: `cpu`, `gpu`, or `best` (see
    /// [`Device::best`]). An unknown name, or `gpu` where there is none, is an error that
    /// says why.
    ///
    /// ```
    /// use engine::Device;
    /// assert_eq!(Device::named("cpu").unwrap(), Device::Cpu);
    /// assert!(Device::named("tpu").unwrap_err().to_string().contains("expected cpu, gpu or best"));
    /// ```
    pub fn named(name: &str) -> Result<Device, DeviceError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Device::gpu(),
            "best" => Ok(Device::best()),
            other => Err(DeviceError::UnknownName(other.to_string())),
        }
    }

    /// The device named by the environment variable `ENGINE_DEVICE` (see
    /// [`Device::named`]), or the CPU when it is unset.
    pub fn from_env() -> Result<Device, DeviceError> {
        match std::env::var(ENV_VAR) {
            Ok(name) => {
                Device::named(&name).map_err(|e| DeviceError::FromEnv(Box::new(e)))
            }
            Err(_) => Ok(Device::Cpu),
        }
    }

    /// Waits until every op queued on this device has finished: nothing on the CPU (its
    /// ops finish before they return), [`Gpu::synchronize`] on a GPU. Timings need it;
    /// reading values back waits by itself.
    pub fn synchronize(&self) {
        match self {
            Device::Cpu => {}
            #[cfg(feature = "wgpu")]
            Device::Gpu(gpu) => gpu.synchronize(),
            #[cfg(not(feature = "wgpu"))]
            Device::Gpu(gpu) => match *gpu {},
        }
    }

    /// True for [`Device::Cpu`].
    pub fn is_cpu(&self) -> bool {
        matches!(self, Device::Cpu)
    }

    /// True for a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, Device::Gpu(_))
    }
}

impl fmt::Display for Device {
    /// `cpu`, or `gpu (llvmpipe, Vulkan)`: the adapter's name and backend.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Gpu(gpu) => write!(f, "gpu ({gpu})"),
        }
    }
}

impl FromStr for Device {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<Device, DeviceError> {
        Device::named(s)
    }
}

/// Why a device could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// The engine was built without its `wgpu` feature.
    NotCompiled,
    /// wgpu found no GPU adapter: no driver, or no GPU it can use.
    NoAdapter {
        /// The graphics APIs that were tried, e.g. "Vulkan, Metal, DirectX 12".
        looked_for: String,
        /// What wgpu said.
        detail: String,
    },
    /// An adapter was found but refused to open a device.
    DeviceRefused {
        /// The adapter's name and backend.
        adapter: String,
        /// What wgpu said.
        detail: String,
    },
    /// A device name other than `cpu`, `gpu` or `best`.
    UnknownName(String),
    /// The device named by `ENGINE_DEVICE` could not be had.
    FromEnv(Box<DeviceError>),
}

impl DeviceError {
    /// The reason in one line, for [`Device::best`]'s notice.
    fn summary(&self) -> String {
        match self {
            DeviceError::NoAdapter { .. } => {
                "no GPU adapter was found (install a Vulkan driver such as Debian's mesa-vulkan-drivers to use one)".into()
            }
            other => other.to_string().lines().next().unwrap_or_default().to_string(),
        }
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::NotCompiled => f.write_str(
                "this build has no GPU backend: the engine was compiled without its `wgpu` feature\n  hint: add `--features engine/wgpu` to the cargo command (for example `cargo run --release --features engine/wgpu -p chapter14`), or use Device::Cpu",
            ),
            DeviceError::NoAdapter { looked_for, detail } => write!(
                f,
                "no GPU adapter found: wgpu looked for a GPU through {looked_for} and found none ({detail})\n  hint: install a driver for one of them (on Debian or Ubuntu, `apt-get install mesa-vulkan-drivers libvulkan1` gives Vulkan, with a software GPU where there is no real one), or use the CPU: Device::Cpu, or Device::best() to fall back to it"
            ),
            DeviceError::DeviceRefused { adapter, detail } => write!(
                f,
                "the GPU adapter {adapter} was found but refused to open a device: {detail}\n  hint: update its driver, or use the CPU (Device::Cpu)"
            ),
            DeviceError::UnknownName(name) => write!(
                f,
                "unknown device {name:?}: expected cpu, gpu or best"
            ),
            DeviceError::FromEnv(inner) => write!(f, "{ENV_VAR}: {inner}"),
        }
    }
}

impl std::error::Error for DeviceError {}
