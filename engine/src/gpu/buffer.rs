//! A tensor's values in GPU memory: uploads, read-backs, and a pool of freed buffers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc;

use super::context::{Context, Gpu};

/// The `f32` values of one tensor (or of several that share them) in a GPU storage
/// buffer. Dropping it hands the buffer to its GPU's pool.
pub(crate) struct GpuBuffer {
    raw: Option<wgpu::Buffer>,
    len: usize,
    gpu: Gpu,
}

/// Freed buffers by size in bytes, reused by the next buffer of that size: allocating
/// GPU memory is far slower than a launch, and a training step asks for the same
/// sizes every time.
#[derive(Default)]
pub(crate) struct Pool {
    free: HashMap<u64, Vec<wgpu::Buffer>>,
    free_bytes: u64,
    live_bytes: u64,
}

/// The most bytes of freed buffers a GPU's pool keeps; the oldest beyond it are
/// released.
const POOL_LIMIT: u64 = 1 << 30;

/// Bytes for `len` values: never zero, since wgpu cannot bind an empty buffer.
fn bytes_for(len: usize) -> u64 {
    (len.max(1) * size_of::<f32>()) as u64
}

impl GpuBuffer {
    /// An uninitialised buffer for `len` values (every kernel writes all of its
    /// output).
    #[track_caller]
    pub(crate) fn uninit(gpu: &Gpu, op: &str, len: usize) -> GpuBuffer {
        let size = bytes_for(len);
        if size > gpu.max_binding_bytes() {
            crate::check::fail(
                op,
                format!(
                    "the result holds {len} values ({}), more than one kernel can address on this GPU ({}: at most {} per buffer)\n  hint: use smaller sizes, or the CPU (Device::Cpu)",
                    crate::memory::human(size as usize),
                    gpu.name(),
                    crate::memory::human(gpu.max_binding_bytes() as usize)
                ),
            );
        }
        let ctx = &gpu.0;
        let reused = {
            let mut pool = ctx.pool.lock().unwrap_or_else(|e| e.into_inner());
            pool.live_bytes += size;
            let found = pool.free.get_mut(&size).and_then(Vec::pop);
            if found.is_some() {
                pool.free_bytes -= size;
            }
            found
        };
        let raw = reused.unwrap_or_else(|| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(op),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        GpuBuffer {
            raw: Some(raw),
            len,
            gpu: gpu.clone(),
        }
    }

    /// A buffer holding `values`.
    #[track_caller]
    pub(crate) fn upload(gpu: &Gpu, op: &str, values: &[f32]) -> GpuBuffer {
        let buffer = GpuBuffer::uninit(gpu, op, values.len());
        if !values.is_empty() {
            gpu.0
                .queue
                .write_buffer(buffer.raw(), 0, bytemuck::cast_slice(values));
        }
        buffer
    }

    /// A buffer holding `words` (indices and offsets for the kernels that take them).
    #[track_caller]
    pub(crate) fn upload_words(gpu: &Gpu, op: &str, words: &[u32]) -> GpuBuffer {
        let buffer = GpuBuffer::uninit(gpu, op, words.len());
        if !words.is_empty() {
            gpu.0
                .queue
                .write_buffer(buffer.raw(), 0, bytemuck::cast_slice(words));
        }
        buffer
    }

    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The GPU that holds it.
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    pub(crate) fn raw(&self) -> &wgpu::Buffer {
        self.raw
            .as_ref()
            .expect("a live GpuBuffer holds its buffer")
    }

    // ANCHOR: read
    /// Copies the values back to host memory, waiting for every kernel queued before.
    pub(crate) fn read(&self) -> Vec<f32> {
        if self.len == 0 {
            return Vec::new();
        }
        let ctx: &Arc<Context> = &self.gpu.0;
        let size = bytes_for(self.len);
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(self.raw(), 0, &staging, 0, size);
        ctx.queue.submit([encoder.finish()]);
        let (sender, receiver) = mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            let _ = sender.send(result);
        });
        ctx.wait();
        ctx.check_errors("to_vec");
        match receiver.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                panic!("to_vec: reading values back from the GPU failed: {e}")
            }
            Err(_) => panic!("to_vec: the GPU never answered the read-back"),
        }
        let view = staging
            .get_mapped_range(..)
            .expect("a mapped read-back buffer can be viewed");
        bytemuck::pod_collect_to_vec(&view)
    }
    // ANCHOR_END: read
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        let Some(raw) = self.raw.take() else { return };
        let size = raw.size();
        let mut pool = self.gpu.0.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.live_bytes -= size;
        if size <= POOL_LIMIT {
            pool.free.entry(size).or_default().push(raw);
            pool.free_bytes += size;
            while pool.free_bytes > POOL_LIMIT {
                let largest = *pool.free.keys().max().expect("bytes are held");
                let list = pool.free.get_mut(&largest).expect("the key exists");
                list.pop();
                if list.is_empty() {
                    pool.free.remove(&largest);
                }
                pool.free_bytes -= largest;
            }
        }
    }
}

impl Gpu {
    /// Bytes of GPU memory held by live tensors on this GPU (every process-wide
    /// handle).
    pub fn live_bytes(&self) -> u64 {
        self.0
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .live_bytes
    }

    /// Bytes of freed buffers this GPU keeps for reuse (at most 1 GiB).
    pub fn pooled_bytes(&self) -> u64 {
        self.0
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free_bytes
    }
}
