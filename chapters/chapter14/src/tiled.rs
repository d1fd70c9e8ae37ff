//! The engine's tiled matrix-product kernel (`engine/src/gpu/shaders/matmul.wgsl`),
//! replayed on the CPU step by step: the same workgroups, the same copies into
//! workgroup memory, the same two barriers, the same per-invocation registers. A GPU
//! runs the 256 invocations of a workgroup at once; here they take turns, one phase
//! at a time, which is exactly what the barriers guarantee can be done without
//! changing the result.

use crate::grid::matmul_grid;

/// Invocations per workgroup of the tiled kernel: 16 × 16.
pub const INVOCATIONS: usize = 256;

/// How much each invocation computes: `per_thread × per_thread` outputs of a
/// `16·per_thread`-square tile. The engine uses 4 (64 × 64 tiles) for small products
/// and 8 (128 × 128) for large ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Outputs per invocation along each side (TM = TN in the WGSL).
    pub per_thread: usize,
}

impl Tiling {
    /// 64 × 64 tiles, 4 × 4 outputs per invocation.
    pub const TILE64: Tiling = Tiling { per_thread: 4 };
    /// 128 × 128 tiles, 8 × 8 outputs per invocation.
    pub const TILE128: Tiling = Tiling { per_thread: 8 };

    /// The side of an output tile (BM = BN in the WGSL).
    pub fn tile(self) -> usize {
        16 * self.per_thread
    }

    /// The step along the shared dimension (BK): the blocks of A and B copied per
    /// step hold 1,024 values each, four per invocation.
    pub fn step(self) -> usize {
        1024 / self.tile()
    }
}

/// `C = A · B` for row-major `a: [m, k]` and `b: [k, n]`, by the definition: each
/// output a sum of `k` products, in order.
pub fn naive_matmul(
    a: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
) -> Vec<f32> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] =
                (0..k).fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc));
        }
    }
    c
}

// ANCHOR: tiled_matmul
/// The tiled kernel's result for `a: [m, k]` and `b: [k, n]`, computed as the GPU
/// does.
pub fn tiled_matmul(
    a: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
    tiling: Tiling,
) -> Vec<f32> {
    let (t, tile, bk) = (tiling.per_thread, tiling.tile(), tiling.step());
    let mut out = vec![0.0; m * n];
    let grid = matmul_grid(m, n, 1, tile);
    for wy in 0..grid.y {
        for wx in 0..grid.x {
            // One workgroup: its workgroup memory, and each invocation's registers.
            let (row0, col0) = (wy * tile, wx * tile);
            let mut tile_a = vec![0.0f32; bk * tile]; // [BK][BM]
            let mut tile_b = vec![0.0f32; bk * tile]; // [BK][BN]
            let mut acc = vec![vec![0.0f32; t * t]; INVOCATIONS];
            for k0 in (0..k).step_by(bk) {
                // Phase 1: every invocation copies 4 values of A and 4 of B.
                // Consecutive invocations read consecutive addresses (a row of A
                // along k, a row of B along n): the GPU merges such reads into a few
                // wide ones.
                for thread in 0..INVOCATIONS {
                    for r in 0..tile * bk / INVOCATIONS {
                        let e = thread + r * INVOCATIONS;
                        let (mm, kk) = (e / bk, e % bk);
                        let (row, col) = (row0 + mm, k0 + kk);
                        let inside = row < m && col < k;
                        tile_a[kk * tile + mm] =
                            if inside { a[row * k + col] } else { 0.0 };
                        let (kk, nn) = (e / tile, e % tile);
                        let (row, col) = (k0 + kk, col0 + nn);
                        let inside = row < k && col < n;
                        tile_b[kk * tile + nn] =
                            if inside { b[row * n + col] } else { 0.0 };
                    }
                }
                // workgroupBarrier(): no invocation reads the tiles before all are
                // written. Phase 2: invocation (x, y) owns rows y, y + 16, … and
                // columns x, x + 16, …
                for (thread, acc) in acc.iter_mut().enumerate() {
                    let (lx, ly) = (thread % 16, thread / 16);
                    for kk in 0..bk {
                        let a_reg: Vec<f32> =
                            (0..t).map(|i| tile_a[kk * tile + ly + 16 * i]).collect();
                        let b_reg: Vec<f32> =
                            (0..t).map(|j| tile_b[kk * tile + lx + 16 * j]).collect();
                        for i in 0..t {
                            for j in 0..t {
                                acc[i * t + j] =
                                    a_reg[i].mul_add(b_reg[j], acc[i * t + j]);
                            }
                        }
                    }
                }
                // workgroupBarrier(): no invocation overwrites the tiles (next step)
                // while another still reads them.
            }
            // Each invocation writes its t × t outputs, those inside C.
            for (thread, acc) in acc.iter().enumerate() {
                let (lx, ly) = (thread % 16, thread / 16);
                for i in 0..t {
                    for j in 0..t {
                        let (row, col) = (row0 + ly + 16 * i, col0 + lx + 16 * j);
                        if row < m && col < n {
                            out[row * n + col] = acc[i * t + j];
                        }
                    }
                }
            }
        }
    }
    out
}
// ANCHOR_END: tiled_matmul

// ANCHOR: traffic
/// Values read from the GPU's main memory by one product `[m, k] · [k, n]`: the naive
/// kernel (one invocation per output, reading its row of A and its column of B: `2·k`
/// per output), and the tiled kernel (each workgroup copies a `tile × BK` block of A
/// and a `BK × tile` block of B per step, whole tiles even at the edges).
pub fn main_memory_reads(
    m: usize,
    k: usize,
    n: usize,
    tiling: Tiling,
) -> (usize, usize) {
    let naive = 2 * m * n * k;
    let (tile, bk) = (tiling.tile(), tiling.step());
    let grid = matmul_grid(m, n, 1, tile);
    let tiled = grid.groups() * k.div_ceil(bk) * 2 * tile * bk;
    (naive, tiled)
}
// ANCHOR_END: traffic
