//! When the GPU pays off: a model of the time of a matrix product on each device,
//! from four measured numbers.

/// What a machine measured (the `measure` example prints these).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// The CPU's matrix-product speed, in FLOP/s.
    pub cpu_flops: f64,
    /// The GPU's matrix-product speed, in FLOP/s.
    pub gpu_flops: f64,
    /// The time of one small GPU op, from the call to its completion, in seconds:
    /// launching a kernel and waiting for it.
    pub launch_seconds: f64,
    /// Bytes per second from host memory to the GPU.
    pub upload_bytes_per_second: f64,
    /// Bytes per second from the GPU back to host memory.
    pub readback_bytes_per_second: f64,
}

// ANCHOR: cost_model
impl CostModel {
    /// Seconds for an `[n, n] · [n, n]` product on the CPU: `2n³` operations at its
    /// speed.
    pub fn cpu_seconds(&self, n: usize) -> f64 {
        2.0 * (n as f64).powi(3) / self.cpu_flops
    }

    /// Seconds on the GPU: one launch and `2n³` operations at its speed, plus, when
    /// the matrices start and end in host memory, uploading two `n × n` inputs and
    /// reading back the `n × n` result.
    pub fn gpu_seconds(&self, n: usize, with_transfers: bool) -> f64 {
        let compute = self.launch_seconds + 2.0 * (n as f64).powi(3) / self.gpu_flops;
        if !with_transfers {
            return compute;
        }
        let bytes = (n * n * size_of::<f32>()) as f64;
        compute
            + 2.0 * bytes / self.upload_bytes_per_second
            + bytes / self.readback_bytes_per_second
    }

    /// The smallest `n`, a power of two up to 2²⁰, at which the product, starting and
    /// ending in host memory, takes less time on the GPU than on the CPU; `None` if
    /// it never does.
    pub fn break_even(&self) -> Option<usize> {
        (0..=20)
            .map(|p| 1usize << p)
            .find(|&n| self.gpu_seconds(n, true) < self.cpu_seconds(n))
    }
}
// ANCHOR_END: cost_model
