//! Your solutions to the chapter 13 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter13 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

/// Exercise 1. `C = A · Bᵀ` for row-major `a: [m, k]` and `b_t: [n, k]` (so `B` is
/// `b_t` transposed), written into `c: [m, n]`, reading `b_t` in place: no transposed copy.
pub fn matmul_transposed_b(
    a: &[f32],
    b_t: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    let _ = (a, b_t, c, m, k, n);
    todo!(
        "exercise 1: C[i, j] is the dot product of row i of a and row j of b_t, both contiguous"
    )
}

/// Exercise 2. Writes the transpose of the row-major `src: [rows, cols]` into
/// `dst: [cols, rows]`, one `tile × tile` block at a time.
pub fn transpose_blocked(
    src: &[f32],
    dst: &mut [f32],
    rows: usize,
    cols: usize,
    tile: usize,
) {
    let _ = (src, dst, rows, cols, tile);
    todo!(
        "exercise 2: loop over blocks of rows and columns, then transpose inside each block"
    )
}

/// Exercise 3. The number of cache misses of a sequence of byte `addresses` read through a
/// fully associative cache of `lines` lines of `line_bytes` bytes that evicts the least
/// recently used line.
pub fn cache_misses(addresses: &[usize], line_bytes: usize, lines: usize) -> usize {
    let _ = (addresses, line_bytes, lines);
    todo!(
        "exercise 3: keep the cached line numbers in order of use; a miss loads one"
    )
}

/// Exercise 4. A micro-kernel of another shape: `tile += a_panel · b_panel` for a 2 × 8
/// tile, where `a_panel` holds 2 values per step (a column of a strip of 2 rows of `A`)
/// and `b_panel` 8 values per step (a row of a strip of 8 columns of `B`), as the
/// chapter's packing lays them out.
pub fn microkernel_2x8(a_panel: &[f32], b_panel: &[f32], tile: &mut [[f32; 8]; 2]) {
    let _ = (a_panel, b_panel, tile);
    todo!(
        "exercise 4: for each step, add the outer product of its 2 values of A and 8 of B"
    )
}
