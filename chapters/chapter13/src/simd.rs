//! Rungs 4 and 5 of the ladder: packed blocks, a register-tiled micro-kernel with
//! SIMD chosen at run time, and threads.

use crate::ladder::check_sizes;

// ANCHOR: tile_shape
/// Rows of the tile of `C` that the micro-kernel keeps in registers.
pub const MR: usize = 6;
/// Columns of that tile: two AVX registers of 8 floats. With `MR = 6` the tile takes
/// 12 of the 16 AVX registers, leaving 2 for a row of `B` and 1 for a value of `A`.
pub const NR: usize = 16;
// ANCHOR_END: tile_shape

/// The `MR × NR` tile of `C` a micro-kernel updates.
type Tile = [[f32; NR]; MR];

// ANCHOR: kernel
/// Which micro-kernel runs: the same operations in the same order, written with AVX2
/// and FMA instructions or in plain Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust, for every CPU; the compiler vectorises it as far as the target
    /// allows.
    Portable,
    /// 8-wide AVX registers and fused multiply-adds (`std::arch::x86_64`); x86-64
    /// CPUs since about 2013 have them.
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
}

impl Kernel {
    /// The fastest kernel this CPU runs, asked at run time: one binary uses AVX2
    /// where it exists and the portable kernel elsewhere.
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if Kernel::Avx2Fma.is_available() {
            return Kernel::Avx2Fma;
        }
        Kernel::Portable
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => {
                std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("fma")
            }
        }
    }

    /// A short name, for tables.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => "AVX2 + FMA",
        }
    }
}
// ANCHOR_END: kernel

// ANCHOR: portable_kernel
/// The micro-kernel in plain Rust: `tile += a_panel · b_panel` over `kc` steps, where
/// `a_panel` holds `MR` values of `A` per step (one column of a strip of `MR` rows),
/// `b_panel` `NR` values of `B` per step (one row of a strip of `NR` columns), and
/// the `MR × NR` tile of `C` starts at `c[0]` with its rows `ldc` floats apart.
///
/// The tile is read once into local accumulators, and each step adds an outer product
/// to them: `MR × NR` multiply-adds from `MR + NR` loads. `mul_add` rounds once, like
/// the FMA instruction, so this kernel and [`Kernel::Avx2Fma`] give the same bits.
fn kernel_portable(a_panel: &[f32], b_panel: &[f32], c: &mut [f32], ldc: usize) {
    let mut tile: Tile = [[0.0; NR]; MR];
    for (r, row) in tile.iter_mut().enumerate() {
        row.copy_from_slice(&c[r * ldc..][..NR]);
    }
    for (a_p, b_p) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
        for (row, &a_ip) in tile.iter_mut().zip(a_p) {
            for (c_ij, &b_pj) in row.iter_mut().zip(b_p) {
                *c_ij = a_ip.mul_add(b_pj, *c_ij);
            }
        }
    }
    for (r, row) in tile.iter().enumerate() {
        c[r * ldc..][..NR].copy_from_slice(row);
    }
}
// ANCHOR_END: portable_kernel

// ANCHOR: avx2_kernel
/// The micro-kernel with AVX2 and FMA: the tile lives in 12 registers of 8 floats (6
/// rows × 2 halves); each step loads one row of the `B` panel (2 registers),
/// broadcasts each of the `MR` values of the `A` panel in turn, and does 12 fused
/// multiply-adds of 8 lanes, 192 flops. Twelve independent accumulators keep both FMA
/// units busy although each FMA waits about 4 cycles for the one before it on the
/// same register. The arguments are those of [`kernel_portable`].
///
/// # Safety
/// The CPU must support AVX2 and FMA ([`Kernel::is_available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel_avx2_fma(
    a_panel: &[f32],
    b_panel: &[f32],
    c: &mut [f32],
    ldc: usize,
) {
    use std::arch::x86_64::{
        __m256, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_setzero_ps,
        _mm256_storeu_ps,
    };
    // SAFETY: the caller guarantees AVX2 and FMA. Every pointer below is taken from a
    // slice of exactly NR = 16 floats (`row`, cut from `c` by bounds-checked
    // indexing, or `b_p`, a chunk of `b_panel`), at offset 0 or 8, and each load or
    // store moves 8 floats, so every access stays inside its slice. `loadu` and
    // `storeu` accept any alignment.
    unsafe {
        let mut acc: [[__m256; 2]; MR] = [[_mm256_setzero_ps(); 2]; MR];
        for (r, acc_row) in acc.iter_mut().enumerate() {
            let row = &c[r * ldc..][..NR];
            acc_row[0] = _mm256_loadu_ps(row.as_ptr());
            acc_row[1] = _mm256_loadu_ps(row.as_ptr().add(8));
        }
        for (a_p, b_p) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
            let b_lo = _mm256_loadu_ps(b_p.as_ptr());
            let b_hi = _mm256_loadu_ps(b_p.as_ptr().add(8));
            for (acc_row, &a_ip) in acc.iter_mut().zip(a_p) {
                let a_ip = _mm256_set1_ps(a_ip);
                acc_row[0] = _mm256_fmadd_ps(a_ip, b_lo, acc_row[0]);
                acc_row[1] = _mm256_fmadd_ps(a_ip, b_hi, acc_row[1]);
            }
        }
        for (r, acc_row) in acc.iter().enumerate() {
            let row = &mut c[r * ldc..][..NR];
            _mm256_storeu_ps(row.as_mut_ptr(), acc_row[0]);
            _mm256_storeu_ps(row.as_mut_ptr().add(8), acc_row[1]);
        }
    }
}
// ANCHOR_END: avx2_kernel

// ANCHOR: run_kernel
/// Runs `kernel` on one tile. Only [`gemm`] calls it, after checking that the kernel
/// is available on this CPU.
fn run_kernel(
    kernel: Kernel,
    a_panel: &[f32],
    b_panel: &[f32],
    c: &mut [f32],
    ldc: usize,
) {
    match kernel {
        Kernel::Portable => kernel_portable(a_panel, b_panel, c, ldc),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `gemm`, the only caller of this function, asserts
        // `kernel.is_available()` before any work, so the CPU has AVX2 and FMA.
        Kernel::Avx2Fma => unsafe { kernel_avx2_fma(a_panel, b_panel, c, ldc) },
    }
}
// ANCHOR_END: run_kernel

// ANCHOR: pack
/// Copies `B[p0..p0 + kc, j0..j0 + nc]` into strips of `NR` columns, one after the
/// other; within a strip, row after row. The last strip is padded with zeros to `NR`
/// columns, so the micro-kernel never needs to know where `B` ends.
fn pack_b(
    b: &[f32],
    n: usize,
    (p0, kc): (usize, usize),
    (j0, nc): (usize, usize),
    out: &mut Vec<f32>,
) {
    out.clear();
    for s in (0..nc).step_by(NR) {
        let width = NR.min(nc - s);
        for p in p0..p0 + kc {
            out.extend_from_slice(&b[p * n + j0 + s..][..width]);
            out.extend(std::iter::repeat_n(0.0, NR - width));
        }
    }
}

/// Copies `A[i0..i0 + mc, p0..p0 + kc]` into strips of `MR` rows; within a strip,
/// column after column (the `MR` values the micro-kernel needs at each step, side by
/// side). The last strip is padded with zero rows.
fn pack_a(
    a: &[f32],
    k: usize,
    (i0, mc): (usize, usize),
    (p0, kc): (usize, usize),
    out: &mut Vec<f32>,
) {
    out.clear();
    for s in (0..mc).step_by(MR) {
        let height = MR.min(mc - s);
        for p in p0..p0 + kc {
            for r in 0..MR {
                out.push(if r < height {
                    a[(i0 + s + r) * k + p]
                } else {
                    0.0
                });
            }
        }
    }
}
// ANCHOR_END: pack

// ANCHOR: blocks
/// The block sizes of rungs 4 and 5, chosen for the caches: the micro-kernel streams
/// a `kc × NR` strip of `B` (16 KiB with the defaults) from L1, a packed `mc × kc`
/// block of `A` (96 KiB) from L2, and the packed `kc × nc` block of `B` (1 MiB) from
/// L2 or L3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// Rows of the packed block of `A`.
    pub mc: usize,
    /// The stretch of the sum over `p` done at a time.
    pub kc: usize,
    /// Columns of the packed block of `B`.
    pub nc: usize,
}

impl Blocks {
    /// `mc = 96` (16 strips of `MR` rows), `kc = 256`, `nc = 1024`.
    pub const DEFAULT: Blocks = Blocks {
        mc: 96,
        kc: 256,
        nc: 1024,
    };
}

/// How [`gemm`] runs: which micro-kernel, which blocks, how many threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The micro-kernel.
    pub kernel: Kernel,
    /// The block sizes.
    pub blocks: Blocks,
    /// The number of threads the rows of `C` are split across (at least 1).
    pub threads: usize,
}

impl Plan {
    /// The detected kernel, the default blocks, `threads` threads.
    pub fn detect(threads: usize) -> Plan {
        Plan {
            kernel: Kernel::detect(),
            blocks: Blocks::DEFAULT,
            threads,
        }
    }
}
// ANCHOR_END: blocks

/// Rung 4: [`gemm`] with the fastest kernel this CPU has, on one thread.
pub fn simd(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    gemm(&Plan::detect(1), a, b, c, m, k, n);
}

/// Rung 5: rung 4 on `threads` threads; the result does not depend on `threads`.
pub fn threaded(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    threads: usize,
) {
    gemm(&Plan::detect(threads), a, b, c, m, k, n);
}

// ANCHOR: gemm
/// Rungs 4 and 5: `C = A · B` with packed blocks, a register-tiled micro-kernel, and
/// the rows of `C` split across `plan.threads` threads.
///
/// Each thread gets a contiguous stretch of rows (a multiple of `MR`) and computes it
/// alone, reading all of `B`; no two threads write the same element, and each element
/// is summed by the same operations in the same order whichever thread does it, so
/// the result does not depend on the number of threads.
///
/// # Panics
/// When the kernel is not available on this CPU, `threads` or a block size is 0, or
/// the slices do not hold `m·k`, `k·n` and `m·n` values.
pub fn gemm(
    plan: &Plan,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    check_sizes("gemm", (a, b, c), m, k, n);
    assert!(
        plan.kernel.is_available(),
        "gemm: this CPU cannot run the {} kernel",
        plan.kernel.name()
    );
    let Blocks { mc, kc, nc } = plan.blocks;
    assert!(
        plan.threads > 0 && mc > 0 && kc > 0 && nc > 0,
        "gemm: threads and block sizes must be positive, got {plan:?}"
    );
    c.fill(0.0);
    if m == 0 || n == 0 || k == 0 {
        return; // nothing to add: C is all zeros (or empty)
    }
    // Rows per thread, rounded up to whole strips of MR rows.
    let rows = m.div_ceil(plan.threads).div_ceil(MR) * MR;
    if rows >= m {
        return one_thread(plan, a, b, c, m, k, n);
    }
    std::thread::scope(|scope| {
        for (a_rows, c_rows) in a.chunks(rows * k).zip(c.chunks_mut(rows * n)) {
            let m_rows = c_rows.len() / n;
            scope.spawn(move || one_thread(plan, a_rows, b, c_rows, m_rows, k, n));
        }
    });
}
// ANCHOR_END: gemm

// ANCHOR: one_thread
/// The loop nest of one thread: blocks of `B`, then blocks of `A`, then tiles of `C`.
/// `c` starts as zeros, and the micro-kernel adds one block of the sum at a time to
/// each tile, in the order of the blocks. A whole tile is updated where it lies in
/// `C` (rows `n` apart); a tile cut off by the edge of `C` goes through a zero-padded
/// copy (rows `NR` apart), so the kernel always works on a full `MR × NR` tile.
fn one_thread(
    plan: &Plan,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    let Blocks { mc, kc, nc } = plan.blocks;
    let (mut a_packed, mut b_packed) = (Vec::new(), Vec::new());
    for j0 in (0..n).step_by(nc) {
        let nc = nc.min(n - j0);
        for p0 in (0..k).step_by(kc) {
            let kc = kc.min(k - p0);
            pack_b(b, n, (p0, kc), (j0, nc), &mut b_packed);
            for i0 in (0..m).step_by(mc) {
                let mc = mc.min(m - i0);
                pack_a(a, k, (i0, mc), (p0, kc), &mut a_packed);
                let b_strips = b_packed.chunks_exact(kc * NR);
                for (jr, b_panel) in (0..nc).step_by(NR).zip(b_strips) {
                    let a_strips = a_packed.chunks_exact(kc * MR);
                    for (ir, a_panel) in (0..mc).step_by(MR).zip(a_strips) {
                        let (i, j) = (i0 + ir, j0 + jr);
                        let (rows, cols) = (MR.min(m - i), NR.min(n - j));
                        if rows == MR && cols == NR {
                            run_kernel(
                                plan.kernel,
                                a_panel,
                                b_panel,
                                &mut c[i * n + j..],
                                n,
                            );
                        } else {
                            let mut tile = [0.0; MR * NR];
                            for r in 0..rows {
                                tile[r * NR..][..cols]
                                    .copy_from_slice(&c[(i + r) * n + j..][..cols]);
                            }
                            run_kernel(plan.kernel, a_panel, b_panel, &mut tile, NR);
                            for r in 0..rows {
                                c[(i + r) * n + j..][..cols]
                                    .copy_from_slice(&tile[r * NR..][..cols]);
                            }
                        }
                    }
                }
            }
        }
    }
}
// ANCHOR_END: one_thread
