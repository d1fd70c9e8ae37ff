// ANCHOR: all
//! The reference solutions of the chapter 14 exercises (`src/exercises.rs` is yours).

use crate::CostModel;

/// Exercise 1. The launches of a batched product whose `batch` matrices do not all
/// fit in one launch's z dimension (at most `max_per_dim` workgroups): `(first,
/// count)` for each launch, in order, covering `0..batch` once.
pub fn batch_launches(batch: usize, max_per_dim: usize) -> Vec<(usize, usize)> {
    (0..batch)
        .step_by(max_per_dim.max(1))
        .map(|first| (first, max_per_dim.min(batch - first)))
        .collect()
}

/// Exercise 2. Where value `e` (`0 ≤ e < tile · bk`) of the block of A copied in one
/// step goes, `(mm, kk)` (row within the tile, position along k), when A is stored
/// transposed, `[k, m]`: consecutive values must be consecutive in memory, which for
/// a transposed A runs along m.
pub fn transposed_copy_order(e: usize, tile: usize, bk: usize) -> (usize, usize) {
    let _ = bk;
    (e % tile, e / tile)
}

/// Exercise 3. The share of the GPU's time for an `[n, n] · [n, n]` product that
/// starts and ends in host memory (see [`CostModel::gpu_seconds`]) spent moving
/// values: uploading the two inputs and reading back the result.
pub fn transfer_share(model: &CostModel, n: usize) -> f64 {
    let moving = model.gpu_seconds(n, true) - model.gpu_seconds(n, false);
    moving / model.gpu_seconds(n, true)
}
// ANCHOR_END: all
