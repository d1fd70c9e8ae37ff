//! A second solution to each chapter 14 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use crate::CostModel;

/// Exercise 1, as a `while` loop that takes what is left, up to the limit, each time.
pub fn batch_launches(batch: usize, max_per_dim: usize) -> Vec<(usize, usize)> {
    assert!(
        max_per_dim >= 1,
        "batch_launches: a launch holds at least one matrix"
    );
    let mut launches = Vec::new();
    let mut first = 0;
    while first < batch {
        let count = (batch - first).min(max_per_dim);
        launches.push((first, count));
        first += count;
    }
    launches
}

/// Exercise 2, by peeling whole rows of `tile` values off `e`: `kk` rows, then the rest
/// along `m`.
pub fn transposed_copy_order(e: usize, tile: usize, bk: usize) -> (usize, usize) {
    let kk = e / tile;
    debug_assert!(kk < bk, "transposed_copy_order: {e} is past the block");
    (e - kk * tile, kk)
}

/// Exercise 3, from the bytes themselves: two `[n, n]` inputs up at the upload rate,
/// one `[n, n]` result back at the readback rate, over the whole time.
pub fn transfer_share(model: &CostModel, n: usize) -> f64 {
    let matrix_bytes = (n * n * 4) as f64;
    let moving = 2.0 * matrix_bytes / model.upload_bytes_per_second
        + matrix_bytes / model.readback_bytes_per_second;
    moving / model.gpu_seconds(n, true)
}
