//! Rungs 1 to 3 of the ladder, plain Rust on slices: the definition, a better loop
//! order, and cache blocking. Every rung computes `C = A · B` for row-major `f32`
//! matrices, `A: [m, k]`, `B: [k, n]`, `C: [m, n]`, and overwrites `c`.

/// Panics unless `a`, `b` and `c` hold `m·k`, `k·n` and `m·n` values, naming the rung
/// and the slice that is wrong.
#[track_caller]
pub(crate) fn check_sizes(
    rung: &str,
    (a, b, c): (&[f32], &[f32], &[f32]),
    m: usize,
    k: usize,
    n: usize,
) {
    for (name, len, rows, cols) in [
        ("a", a.len(), m, k),
        ("b", b.len(), k, n),
        ("c", c.len(), m, n),
    ] {
        assert!(
            len == rows * cols,
            "{rung}: {name} holds {len} values, but [{rows}, {cols}] needs {}\n  expected: a [m, k], b [k, n], c [m, n] with m = {m}, k = {k}, n = {n}, row-major",
            rows * cols
        );
    }
}

/// The signature every rung shares: `(a, b, c, m, k, n)` writes `A · B` into `c`.
pub type Product = fn(&[f32], &[f32], &mut [f32], usize, usize, usize);

// ANCHOR: flops
/// The floating-point operations of one product: each of the `m·n` results takes `k`
/// multiplications and `k` additions, so `2·m·n·k`.
pub fn flops(m: usize, k: usize, n: usize) -> u64 {
    2 * m as u64 * n as u64 * k as u64
}
// ANCHOR_END: flops

// ANCHOR: naive
/// Rung 1, the definition: `C[i, j] = Σₚ A[i, p] · B[p, j]`, loops in the order `i →
/// j → p`.
///
/// The innermost loop walks a row of `A` (one float after the other) and a *column*
/// of `B`: consecutive `p` are `n` floats apart, so every step lands on a different
/// cache line.
pub fn naive(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    check_sizes("naive", (a, b, c), m, k, n);
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0;
            for p in 0..k {
                sum += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = sum;
        }
    }
}
// ANCHOR_END: naive

// ANCHOR: loop_order
/// Rung 2, the same sums with the loops in the order `i → p → j`: for one `A[i, p]`,
/// add `A[i, p] · B[p, :]` to the row `C[i, :]`.
///
/// The innermost loop now walks a row of `B` and a row of `C`, both contiguous, and
/// does the same thing to every element: the compiler turns it into SIMD instructions
/// on its own. Each `C[i, j]` still receives its products in the order `p = 0, 1, …,
/// k − 1`, so the result is bit for bit the one of [`naive`].
pub fn loop_order(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    check_sizes("loop_order", (a, b, c), m, k, n);
    c.fill(0.0);
    for i in 0..m {
        let c_row = &mut c[i * n..(i + 1) * n];
        for p in 0..k {
            let a_ip = a[i * k + p];
            let b_row = &b[p * n..(p + 1) * n];
            for (c_ij, &b_pj) in c_row.iter_mut().zip(b_row) {
                *c_ij += a_ip * b_pj;
            }
        }
    }
}
// ANCHOR_END: loop_order

// ANCHOR: tiles
/// The tile sizes of [`blocked_with`]: a block of `kc` rows and `nc` columns of `B`
/// is loaded into the cache once and used for every row of `A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiles {
    /// Rows of the block of `B` (the stretch of the sum over `p` done at a time).
    pub kc: usize,
    /// Columns of the block of `B`, and of the stretch of each row of `C` it updates.
    pub nc: usize,
}

impl Tiles {
    /// `kc = 128`, `nc = 256`: a block of `B` of 128 KiB, at home in a core's L2
    /// cache (256 KiB to a few MiB on current CPUs), and a stretch of `C`'s row of 1
    /// KiB, which stays in L1 while the 128 rows of the block are added to it.
    pub const DEFAULT: Tiles = Tiles { kc: 128, nc: 256 };
}
// ANCHOR_END: tiles

/// Rung 3 with the default tiles: see [`blocked_with`].
pub fn blocked(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    blocked_with(Tiles::DEFAULT, a, b, c, m, k, n);
}

// ANCHOR: blocked
/// Rung 3, cache blocking: rung 2 done one block of `B` at a time.
///
/// Rung 2 sweeps the whole of `B` for every row of `A`; once `B` outgrows a cache,
/// every sweep reads it again from the next level down. Here the columns are cut into
/// stretches of `nc` and the sum into stretches of `kc`: the `kc × nc` block of `B`
/// is read from memory once, then reused from the cache by all `m` rows. Blocks of
/// the sum are taken in order, so each `C[i, j]` still adds its products for `p = 0,
/// 1, …, k − 1`: the result is bit for bit the one of [`naive`].
///
/// # Panics
/// When a tile size is 0, or the slices do not hold `m·k`, `k·n` and `m·n` values.
pub fn blocked_with(
    tiles: Tiles,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    check_sizes("blocked", (a, b, c), m, k, n);
    assert!(
        tiles.kc > 0 && tiles.nc > 0,
        "blocked: tile sizes must be positive, got {tiles:?}"
    );
    c.fill(0.0);
    for j0 in (0..n).step_by(tiles.nc) {
        let j1 = (j0 + tiles.nc).min(n);
        for p0 in (0..k).step_by(tiles.kc) {
            let p1 = (p0 + tiles.kc).min(k);
            // C[:, j0..j1] += A[:, p0..p1] · B[p0..p1, j0..j1], rung 2's loops on the
            // block.
            for i in 0..m {
                let c_row = &mut c[i * n + j0..i * n + j1];
                for p in p0..p1 {
                    let a_ip = a[i * k + p];
                    let b_row = &b[p * n + j0..p * n + j1];
                    for (c_ij, &b_pj) in c_row.iter_mut().zip(b_row) {
                        *c_ij += a_ip * b_pj;
                    }
                }
            }
        }
    }
}
// ANCHOR_END: blocked
