//! How many threads the engine's large element-wise kernels use.
//!
//! Element-wise arithmetic, softmax and its gradient split tensors of at least
//! [`PARALLEL_MIN`] elements into contiguous blocks, one per thread. Every element is still
//! computed by the same operations, so the results do not depend on the thread count (a
//! test compares the bits of 1 and 3 threads).
//!
//! The count is, in order: the last [`set_num_threads`], else the environment variable
//! `ENGINE_NUM_THREADS` (read once), else the number of CPUs the process may use. Matrix
//! products are threaded separately: on up to `MATMUL_NUM_THREADS` threads (read once per
//! process), else one per physical core.
//!
//! ```
//! engine::threads::set_num_threads(1); // everything element-wise on the calling thread
//! assert_eq!(engine::threads::num_threads(), 1);
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Tensors smaller than this many elements (4 MiB of `f32`) are never split. Starting and
/// joining threads costs tens of microseconds, and below this size that is a fair share of
/// the work: a training step of chapter 9, whose largest tensors have 147,456 elements,
/// ran 20% slower on 2 threads with a limit of 2¹⁷.
pub const PARALLEL_MIN: usize = 1 << 20;

/// 0 while [`set_num_threads`] has not been called.
static CHOSEN: AtomicUsize = AtomicUsize::new(0);

/// Sets the number of threads of element-wise kernels for the whole process (at least 1).
#[track_caller]
pub fn set_num_threads(threads: usize) {
    assert!(
        threads >= 1,
        "set_num_threads: the thread count must be at least 1, found 0"
    );
    CHOSEN.store(threads, Ordering::Relaxed);
}

/// The number of threads element-wise kernels use (see the [module](self) documentation).
pub fn num_threads() -> usize {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => default_threads(),
        n => n,
    }
}

fn default_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("ENGINE_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            })
    })
}
