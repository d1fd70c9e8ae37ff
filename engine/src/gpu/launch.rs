//! One kernel launch: a pipeline compiled once and cached by name, its bindings, its
//! parameters, and the number of workgroups.
//!
//! Every kernel binds, in order: `params` (binding 0, a read-only `array<u32>`), its
//! inputs (bindings 1, 2, …, read-only `array<f32>` or `array<u32>`), and its output
//! (the last binding, `read_write`). The WGSL sources follow that convention.
//!
//! A launch is only queued, except a kernel's first, which waits until it has run.
//! lavapipe, Mesa's Vulkan driver that runs on the CPU (the one the tests use), compiles
//! a compute kernel to machine code with LLVM when the kernel first runs, on the thread
//! that executes the queue, not in `create_compute_pipeline`. A program whose last ops
//! queue a kernel that has not run before and then end (a doctest that moves a layer to
//! the GPU, runs it once and checks only the result's device) would exit while that
//! thread is still inside LLVM: `exit` runs the static destructors of LLVM's library
//! under it, and the process dies of SIGSEGV, SIGABRT or SIGBUS after `main` succeeded.
//! Waiting at exit instead cannot be done from Rust: an `atexit` handler runs after the
//! exiting thread's thread-locals are destroyed, and wgpu's `poll` uses them in a debug
//! build (its lock-order checks), so the wait panics there and never happens. The wait
//! costs one round trip per kernel and process, where compiling the kernel costs far more.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::context::{Context, Gpu};

/// The threads of one workgroup in the one-dimensional kernels
/// (`@workgroup_size(256)`).
pub(crate) const GROUP: u32 = 256;

/// The WGSL every kernel starts with: `flat_index` and the functions WGSL lacks.
const COMMON: &str = include_str!("shaders/common.wgsl");

/// Where a kernel's WGSL comes from.
pub(crate) enum Source<'a> {
    /// A shader file as it is.
    Fixed(&'static str),
    /// Written when first needed (a file with a formula or a size spliced in).
    Made(&'a dyn Fn() -> String),
}

/// A WGSL kernel: a name to cache it under, and its source, which is compiled (after
/// `shaders/common.wgsl`) the first time the kernel runs.
pub(crate) struct Kernel<'a> {
    pub(crate) name: &'a str,
    pub(crate) source: Source<'a>,
}

impl<'a> Kernel<'a> {
    /// A kernel whose source is a shader file as it is.
    pub(crate) fn fixed(name: &'a str, source: &'static str) -> Kernel<'a> {
        Kernel {
            name,
            source: Source::Fixed(source),
        }
    }

    /// A kernel whose source `make` writes when it is first compiled.
    pub(crate) fn made(name: &'a str, make: &'a dyn Fn() -> String) -> Kernel<'a> {
        Kernel {
            name,
            source: Source::Made(make),
        }
    }
}

impl Context {
    /// The compiled pipeline of `kernel`, compiling it on first use, and whether it was
    /// compiled by this call. A source that does not compile is a bug in the engine,
    /// reported with wgpu's explanation.
    fn pipeline(&self, kernel: &Kernel) -> (Arc<wgpu::ComputePipeline>, bool) {
        let mut cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(kernel.name) {
            return (Arc::clone(found), false);
        }
        let body = match &kernel.source {
            Source::Fixed(text) => (*text).to_string(),
            Source::Made(make) => make(),
        };
        let source = format!("{COMMON}\n{body}");
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(kernel.name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline =
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(kernel.name),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                });
        if let Some(error) = pollster::block_on(scope.pop()) {
            panic!(
                "gpu: the kernel {} did not compile on {} ({:?}): {error}",
                kernel.name, self.info.name, self.info.backend
            );
        }
        let pipeline = Arc::new(pipeline);
        cache.insert(kernel.name.to_string(), Arc::clone(&pipeline));
        (pipeline, true)
    }
}

// ANCHOR: launch
/// Queues one launch of `kernel` on `gpu` with `params`, `inputs` and `output`, over
/// `groups` workgroups (x, y, z). `op` names the public op, for messages.
#[track_caller]
pub(crate) fn launch(
    gpu: &Gpu,
    op: &str,
    kernel: &Kernel,
    params: &[u32],
    inputs: &[&wgpu::Buffer],
    output: &wgpu::Buffer,
    groups: (u32, u32, u32),
) {
    if groups.0 == 0 || groups.1 == 0 || groups.2 == 0 {
        return;
    }
    let ctx = &gpu.0;
    let (pipeline, first_launch) = ctx.pipeline(kernel);
    // An empty array cannot be bound: a kernel without parameters still gets one
    // word.
    let words: &[u32] = if params.is_empty() { &[0] } else { params };
    let params = ctx
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::STORAGE,
        });
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: params.as_entire_binding(),
    }];
    for (i, buffer) in inputs.iter().chain([&output]).enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: i as u32 + 1,
            resource: buffer.as_entire_binding(),
        });
    }
    let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(kernel.name),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
    ctx.queue.submit([encoder.finish()]);
    if first_launch {
        // Waited for, once per kernel: a driver may compile a kernel only when it
        // first runs, on a thread of its own (see the module's documentation).
        ctx.wait();
    }
    ctx.check_errors(op);
}
// ANCHOR_END: launch

/// The most workgroups one launch may have along each of x, y and z: WebGPU's default
/// limit, which every adapter offers.
pub(crate) const MAX_GROUPS_PER_DIM: usize = 65_535;

/// Workgroups of [`GROUP`] threads for `n` threads in all, spread over as few rows
/// (y) as keep each row within the limit of [`MAX_GROUPS_PER_DIM`] workgroups, the
/// rows as even as can be (so at most y − 1 workgroups are spare). Kernels recover the
/// thread's index with the `flat_index` function of `shaders/common.wgsl`.
pub(crate) fn grid(n: usize) -> (u32, u32, u32) {
    let groups = n.div_ceil(GROUP as usize);
    let y = groups.div_ceil(MAX_GROUPS_PER_DIM).max(1);
    let x = groups.div_ceil(y);
    (x as u32, y as u32, 1)
}

/// `0..total` cut into consecutive spans of at most `max`, as `(first, count)`: the
/// launches a kernel needs along a dimension that may hold more than one launch's
/// workgroups (the matrices of a batched product, the tiles along a long side). None
/// when `total` is 0.
pub(crate) fn spans(
    total: usize,
    max: usize,
) -> impl Iterator<Item = (usize, usize)> {
    assert!(
        max > 0,
        "a launch holds at least one workgroup along a dimension"
    );
    (0..total)
        .step_by(max)
        .map(move |first| (first, max.min(total - first)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_covers_every_thread_with_few_spare_workgroups() {
        for n in [0, 1, 255, 256, 257, 65_535 * 256, 65_536 * 256, 1 << 31] {
            let (x, y, z) = grid(n);
            let groups = (x * y * z) as usize;
            assert!(x <= 65_535 && y <= 65_535, "n = {n}: {x} × {y}");
            assert!(groups * GROUP as usize >= n, "n = {n}: too few");
            assert!(
                groups < n.div_ceil(GROUP as usize) + y as usize,
                "n = {n}: {x} × {y}"
            );
        }
        assert_eq!(grid(65_536 * 256), (32_768, 2, 1));
    }

    #[test]
    fn spans_cover_every_index_once_in_order_within_the_limit() {
        assert_eq!(spans(0, 3).count(), 0);
        assert_eq!(spans(3, 3).collect::<Vec<_>>(), [(0, 3)]);
        assert_eq!(spans(7, 3).collect::<Vec<_>>(), [(0, 3), (3, 3), (6, 1)]);
        for (total, max) in [(1, 1), (70_000, MAX_GROUPS_PER_DIM), (131_071, 65_535)]
        {
            let mut next = 0;
            for (first, count) in spans(total, max) {
                assert_eq!(first, next, "{total} by {max}: a gap or an overlap");
                assert!(0 < count && count <= max, "{total} by {max}: {count}");
                next = first + count;
            }
            assert_eq!(next, total, "{total} by {max}: not covered");
        }
    }
}
