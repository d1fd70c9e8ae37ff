// ANCHOR: all
//! Reference solutions to the chapter 13 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

// ANCHOR: matmul_transposed_b
/// Exercise 1. `C = A · Bᵀ` for row-major `a: [m, k]` and `b_t: [n, k]`, written into
/// `c: [m, n]`, reading `b_t` in place. `C[i, j]` is the dot product of two rows,
/// both contiguous: the inner loop has unit stride without changing the loop order.
pub fn matmul_transposed_b(
    a: &[f32],
    b_t: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    assert!(a.len() == m * k && b_t.len() == n * k && c.len() == m * n);
    for i in 0..m {
        let a_row = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let b_row = &b_t[j * k..(j + 1) * k];
            c[i * n + j] = a_row.iter().zip(b_row).map(|(x, y)| x * y).sum();
        }
    }
}
// ANCHOR_END: matmul_transposed_b

// ANCHOR: transpose_blocked
/// Exercise 2. The transpose of `src: [rows, cols]` into `dst: [cols, rows]`, one
/// `tile × tile` block at a time: inside a block, the rows read from `src` and the
/// rows written to `dst` each span only `tile` cache lines, which stay in the cache.
pub fn transpose_blocked(
    src: &[f32],
    dst: &mut [f32],
    rows: usize,
    cols: usize,
    tile: usize,
) {
    assert!(src.len() == rows * cols && dst.len() == rows * cols && tile > 0);
    for i0 in (0..rows).step_by(tile) {
        for j0 in (0..cols).step_by(tile) {
            for i in i0..(i0 + tile).min(rows) {
                for j in j0..(j0 + tile).min(cols) {
                    dst[j * rows + i] = src[i * cols + j];
                }
            }
        }
    }
}
// ANCHOR_END: transpose_blocked

// ANCHOR: cache_misses
/// Exercise 3. The misses of `addresses` read through a fully associative LRU cache
/// of `lines` lines of `line_bytes` bytes. The cached line numbers are kept from
/// least to most recently used.
pub fn cache_misses(addresses: &[usize], line_bytes: usize, lines: usize) -> usize {
    if lines == 0 {
        return addresses.len(); // nothing is ever kept
    }
    let mut cached: Vec<usize> = Vec::with_capacity(lines);
    let mut misses = 0;
    for &address in addresses {
        let line = address / line_bytes;
        if let Some(at) = cached.iter().position(|&l| l == line) {
            cached.remove(at); // a hit: move it to the most recent end
        } else {
            misses += 1;
            if cached.len() == lines {
                cached.remove(0); // evict the least recently used
            }
        }
        cached.push(line);
    }
    misses
}
// ANCHOR_END: cache_misses

// ANCHOR: microkernel_2x8
/// Exercise 4. `tile += a_panel · b_panel` for a 2 × 8 tile: each step adds the outer
/// product of 2 values of `A` and 8 of `B`, 16 multiply-adds from 10 loads.
pub fn microkernel_2x8(a_panel: &[f32], b_panel: &[f32], tile: &mut [[f32; 8]; 2]) {
    for (a_p, b_p) in a_panel.chunks_exact(2).zip(b_panel.chunks_exact(8)) {
        for (row, &a_ip) in tile.iter_mut().zip(a_p) {
            for (c_ij, &b_pj) in row.iter_mut().zip(b_p) {
                *c_ij += a_ip * b_pj;
            }
        }
    }
}
// ANCHOR_END: microkernel_2x8
// ANCHOR_END: all
