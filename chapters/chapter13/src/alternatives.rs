//! A second solution to each chapter 13 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use std::collections::HashMap;

/// Exercise 1, with the columns of `C` outermost (`j`, then `i`) and each dot product
/// summed backwards, from the last `p` to the first: another order of the same sums.
pub fn matmul_transposed_b(
    a: &[f32],
    b_t: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
) {
    assert_eq!(a.len(), m * k, "matmul_transposed_b: a is not [m, k]");
    assert_eq!(b_t.len(), n * k, "matmul_transposed_b: b_t is not [n, k]");
    assert_eq!(c.len(), m * n, "matmul_transposed_b: c is not [m, n]");
    for j in 0..n {
        for i in 0..m {
            let mut sum = 0.0f32;
            for p in (0..k).rev() {
                sum += a[i * k + p] * b_t[j * k + p];
            }
            c[i * n + j] = sum;
        }
    }
}

/// Exercise 2, with the blocks walked in the destination's order (blocks of `src`'s
/// columns outermost) and each block written row of `dst` by row.
pub fn transpose_blocked(
    src: &[f32],
    dst: &mut [f32],
    rows: usize,
    cols: usize,
    tile: usize,
) {
    assert!(tile >= 1, "transpose_blocked: a tile of at least 1");
    assert_eq!(
        src.len(),
        rows * cols,
        "transpose_blocked: src is not [rows, cols]"
    );
    assert_eq!(
        dst.len(),
        rows * cols,
        "transpose_blocked: dst is not [cols, rows]"
    );
    let mut j0 = 0;
    while j0 < cols {
        let j1 = (j0 + tile).min(cols);
        let mut i0 = 0;
        while i0 < rows {
            let i1 = (i0 + tile).min(rows);
            for j in j0..j1 {
                for i in i0..i1 {
                    dst[j * rows + i] = src[i * cols + j];
                }
            }
            i0 = i1;
        }
        j0 = j1;
    }
}

/// Exercise 3, with a time stamp per cached line: a miss when the line is absent, and
/// when the cache is full the line with the oldest stamp goes.
pub fn cache_misses(addresses: &[usize], line_bytes: usize, lines: usize) -> usize {
    let mut last_use: HashMap<usize, usize> = HashMap::new();
    let mut misses = 0;
    for (now, &address) in addresses.iter().enumerate() {
        let line = address / line_bytes;
        if !last_use.contains_key(&line) {
            misses += 1;
            if lines == 0 {
                continue;
            }
            if last_use.len() == lines {
                let oldest = *last_use
                    .iter()
                    .min_by_key(|&(_, &time)| time)
                    .map(|(l, _)| l)
                    .expect("a full cache holds a line");
                last_use.remove(&oldest);
            }
        }
        last_use.insert(line, now);
    }
    misses
}

/// Exercise 4, with indices instead of chunks, and each multiply-add fused
/// (`mul_add`, one rounding instead of two).
pub fn microkernel_2x8(a_panel: &[f32], b_panel: &[f32], tile: &mut [[f32; 8]; 2]) {
    let steps = a_panel.len() / 2;
    assert_eq!(
        b_panel.len(),
        steps * 8,
        "microkernel_2x8: panels of different lengths"
    );
    for p in 0..steps {
        for (i, row) in tile.iter_mut().enumerate() {
            for (j, c) in row.iter_mut().enumerate() {
                *c = a_panel[p * 2 + i].mul_add(b_panel[p * 8 + j], *c);
            }
        }
    }
}
