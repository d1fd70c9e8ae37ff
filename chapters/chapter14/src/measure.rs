//! The measurements of the `measure` example, on any device: each op is run once to
//! warm up (compiling the GPU's kernels and filling its buffer pool), then timed
//! until about a quarter of a second has passed, from the call to the moment the
//! device has finished ([`Device::synchronize`]); the median is kept.

use std::time::{Duration, Instant};

use attention::prelude::*;
use engine::Device;

use crate::sample::Kind;

/// The median seconds of `once` (which must wait for its device), over at least 3 and
/// at most 100 calls filling about a quarter of a second, after one call to warm up.
pub fn median_seconds(mut once: impl FnMut()) -> f64 {
    once();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3
        || (times.len() < 100 && start.elapsed() < Duration::from_millis(250))
    {
        let t = Instant::now();
        once();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

// ANCHOR: time_on
/// The median seconds of one measurement of `kind` at `size` on `device`. Inputs are
/// made on the CPU and moved to the device before timing starts, except for the
/// transfers, which time the move itself.
pub fn time_on(device: &Device, kind: Kind, size: usize) -> f64 {
    engine::manual_seed(0);
    match kind {
        Kind::Matmul => {
            let a = Tensor::randn([size, size]).to(device);
            let b = Tensor::randn([size, size]).to(device);
            median_seconds(|| {
                let c = no_grad(|| a.matmul(&b));
                device.synchronize();
                drop(c);
            })
        }
        Kind::Launch => {
            let x = Tensor::ones([1]).to(device);
            median_seconds(|| {
                let y = &x + &x;
                device.synchronize();
                drop(y);
            })
        }
        Kind::Upload => {
            let host = Tensor::randn([size / size_of::<f32>()]);
            median_seconds(|| {
                let there = host.to(device);
                device.synchronize();
                drop(there);
            })
        }
        Kind::Readback => {
            let there = Tensor::randn([size / size_of::<f32>()]).to(device);
            median_seconds(|| drop(there.to_vec()))
        }
        Kind::SdpaForward => {
            let [q, k, v] = [(); 3].map(|()| Tensor::randn([8, size, 64]).to(device));
            median_seconds(|| {
                let (out, _) = no_grad(|| {
                    scaled_dot_product_attention(&q, &k, &v, &Mask::none())
                });
                device.synchronize();
                drop(out);
            })
        }
        Kind::MultiHeadTraining => {
            let module = MultiHeadAttention::new(MultiHeadAttentionConfig {
                num_hiddens: 256,
                num_heads: 8,
                ..Default::default()
            });
            module.to_device(device);
            let x = Tensor::randn([8, size, 256]).to(device).requires_grad_();
            median_seconds(|| {
                module.zero_grad();
                x.zero_grad();
                module.forward(&x, &x, &x, &Mask::none()).sum().backward();
                device.synchronize();
            })
        }
    }
}
// ANCHOR_END: time_on

/// The measurements the example takes by default, as `(kind, size)`; `large` adds the
/// products at 2048 and 4096 (minutes on a CPU, and on a software GPU).
pub fn plan(large: bool) -> Vec<(Kind, usize)> {
    let mut plan: Vec<(Kind, usize)> =
        [64, 256, 1024].map(|n| (Kind::Matmul, n)).to_vec();
    if large {
        plan.extend([2048, 4096].map(|n| (Kind::Matmul, n)));
    }
    plan.push((Kind::Launch, 1));
    for bytes in [1 << 20, 64 << 20] {
        plan.push((Kind::Upload, bytes));
        plan.push((Kind::Readback, bytes));
    }
    plan.extend([(Kind::SdpaForward, 256), (Kind::SdpaForward, 1024)]);
    plan.push((Kind::MultiHeadTraining, 256));
    plan
}

/// The CPU's name as Linux's `/proc/cpuinfo` gives it, with the number of cores the
/// engine sees; elsewhere "this CPU".
pub fn cpu_name() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "this CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    format!("{model}, {cores} cores")
}
