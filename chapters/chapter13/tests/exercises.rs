//! The exercises of chapter 13, held to hand-computed values and to the definition of each
//! operation written out here. They run against the reference solutions by default and
//! against `src/exercises.rs` with `--features exercises`.

use chapter13::exercises::{
    cache_misses, matmul_transposed_b, microkernel_2x8, transpose_blocked,
};
use chapter13::{rounding_bound, seeded};

#[test]
fn exercise_1_matmul_transposed_b_reads_b_transposed_in_place() {
    // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]] stored transposed: b_t = [[5, 7], [6, 8]].
    let mut c = vec![f32::NAN; 4];
    matmul_transposed_b(
        &[1.0, 2.0, 3.0, 4.0],
        &[5.0, 7.0, 6.0, 8.0],
        &mut c,
        2,
        2,
        2,
    );
    assert_eq!(c, vec![19.0, 22.0, 43.0, 50.0]);
    // Non-square, odd sizes and k = 0, against the definition C[i, j] = Σₚ A[i, p]·B[p, j].
    for (m, k, n) in [(3, 5, 2), (17, 33, 9), (1, 64, 1), (2, 0, 3)] {
        let (a, b) = (seeded(m * k, 1), seeded(k * n, 2));
        let b_t: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
        let mut c = vec![f32::NAN; m * n];
        matmul_transposed_b(&a, &b_t, &mut c, m, k, n);
        let bound = rounding_bound(&a, &b, m, k, n);
        for i in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k)
                    .map(|p| f64::from(a[i * k + p]) * f64::from(b[p * n + j]))
                    .sum();
                let got = f64::from(c[i * n + j]);
                assert!(
                    (got - exact).abs() <= bound[i * n + j],
                    "[{m}, {k}, {n}] C[{i}, {j}] = {got}, expected {exact}"
                );
            }
        }
    }
}

#[test]
fn exercise_2_transpose_blocked_gives_the_transpose_for_every_tile_size() {
    // [[1, 2, 3], [4, 5, 6]] transposed is [[1, 4], [2, 5], [3, 6]].
    let mut dst = vec![f32::NAN; 6];
    transpose_blocked(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut dst, 2, 3, 2);
    assert_eq!(dst, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    for (rows, cols) in [(1, 1), (3, 5), (17, 33), (64, 8), (0, 4)] {
        let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
        for tile in [1, 3, 8, 100] {
            let mut dst = vec![f32::NAN; rows * cols];
            transpose_blocked(&src, &mut dst, rows, cols, tile);
            for i in 0..rows {
                for j in 0..cols {
                    assert_eq!(
                        dst[j * rows + i],
                        src[i * cols + j],
                        "[{rows}, {cols}], tile {tile}, element [{i}, {j}]"
                    );
                }
            }
        }
    }
}

#[test]
fn exercise_3_cache_misses_counts_what_an_lru_cache_would_load() {
    // Lines of 64 bytes. Two lines: 0 miss, 4 hit (line 0), 64 miss, 0 hit, 128 miss
    // (evicts line 1, the least recently used), 4 hit: 3 misses. One line: 5 misses.
    let addresses = [0, 4, 64, 0, 128, 4];
    assert_eq!(cache_misses(&addresses, 64, 2), 3);
    assert_eq!(cache_misses(&addresses, 64, 1), 5);
    assert_eq!(cache_misses(&[], 64, 4), 0);
    // A 16 × 16 matrix of f32 (64-byte rows) read through a cache of 4 lines: row by row,
    // each line is loaded once (16 misses); column by column, every read is a new line
    // (256 misses), the access pattern of rung 1's inner loop.
    let by_rows: Vec<usize> = (0..256).map(|i| i * 4).collect();
    let by_columns: Vec<usize> =
        (0..256).map(|i| ((i % 16) * 16 + i / 16) * 4).collect();
    assert_eq!(cache_misses(&by_rows, 64, 4), 16);
    assert_eq!(cache_misses(&by_columns, 64, 4), 256);
    // With 16 lines the whole matrix fits: 16 misses either way.
    assert_eq!(cache_misses(&by_columns, 64, 16), 16);
}

#[test]
fn exercise_4_microkernel_2x8_adds_one_outer_product_per_step() {
    // Two steps. A's strip (2 rows): column p = 0 is (1, 2), p = 1 is (3, 4).
    // B's strip (8 columns): row 0 is 1..=8, row 1 is [1, 0, 0, 0, 0, 0, 0, 1].
    let a_panel = [1.0, 2.0, 3.0, 4.0];
    let b_panel = [
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        1.0,
    ];
    let mut tile = [[100.0; 8], [0.0; 8]];
    microkernel_2x8(&a_panel, &b_panel, &mut tile);
    // Row 0: 100 + 1·row 0 + 3·row 1; row 1: 2·row 0 + 4·row 1.
    assert_eq!(
        tile[0],
        [104.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 111.0]
    );
    assert_eq!(tile[1], [6.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 20.0]);
    // No step: the tile is unchanged.
    microkernel_2x8(&[], &[], &mut tile);
    assert_eq!(tile[1], [6.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 20.0]);
}
