//! CPU kernels: plain loops over `&[f32]` in row-major order.
//!
//! Three places go beyond the plainest loop, each documented where it is: broadcasting
//! kernels walk the output a row at a time (`strided.rs`, `BroadcastRows`), matrix
//! products use a blocked SIMD kernel (`matmul.rs`, `gemm/`, and `pool.rs` for its threads),
//! with the plain loop kept as the definition the tests hold it to, and additive attention's scores are one
//! fused kernel (`additive.rs`) that never builds the `[B, Q, K, h]` tensor of the
//! composed form, which the tests hold it to. Three helpers serve them: `lanes.rs`, sums in
//! a fixed order that vectorises, `parallel.rs`, which splits a large output between
//! threads, and `math.rs`, the engine's own `exp`, `log`, `tanh`, `sigmoid`, `erf` and
//! `gelu`: polynomials that vectorise and give the same bits on every CPU, used by the
//! element-wise ops, softmax and the fused additive scores.
//!
//! The SIMD kernels (element-wise maps and broadcasts, softmax, the fused additive scores,
//! matrix products) run on the path [`crate::kernels::active`] names, read on the calling
//! thread and handed to any threads the kernel starts; every path gives the same bits.
//!
//! Kernels trust their arguments: the tensor layer (`crate::ops`) has already checked every
//! shape and index, so a kernel never needs to report a mistake. They know nothing about
//! autograd either; they only compute values.

pub(crate) mod additive;
pub(crate) mod blocked_attention;
pub(crate) mod elementwise;
mod gemm;
mod lanes;
pub(crate) mod layout;
pub(crate) mod math;
pub(crate) mod matmul;
pub(crate) mod parallel;
mod pool;
pub(crate) mod reduce;
pub(crate) mod safe_softmax;
pub(crate) mod select;
mod strided;

pub(crate) use strided::{BroadcastRows, StridedOffsets, broadcast_strides};

/// Seeded values in [-1, 1) without the engine's generator (a small LCG), for the kernels'
/// tests.
#[cfg(test)]
pub(crate) fn seeded_values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}
