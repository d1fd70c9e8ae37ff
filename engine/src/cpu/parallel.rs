//! Splitting an output between threads: contiguous blocks, each computed by one thread.

use crate::threads::{PARALLEL_MIN, num_threads};

/// Calls `fill(start, block)` for contiguous blocks of `out` that cover it, where `start` is
/// the index in `out` of the block's first element and every block but the last holds a
/// whole number of `unit`s. Outputs of at least [`PARALLEL_MIN`] elements are split between
/// [`num_threads`] scoped threads; smaller ones are one block on the calling thread. `fill`
/// must compute each element from its index alone, so the split cannot change a result.
pub(crate) fn for_each_block<F>(out: &mut [f32], unit: usize, fill: F)
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    let threads = num_threads();
    let unit = unit.max(1);
    if out.len() < PARALLEL_MIN || threads == 1 {
        fill(0, out);
        return;
    }
    let units = out.len().div_ceil(unit);
    let per_block = units.div_ceil(threads) * unit;
    std::thread::scope(|scope| {
        let fill = &fill;
        for (i, block) in out.chunks_mut(per_block).enumerate() {
            scope.spawn(move || fill(i * per_block, block));
        }
    });
}
