//! Memory accounting: the bytes held by live tensor buffers, and the peak since a reset.
//!
//! Counts are kept per thread: a buffer is charged to the thread that allocated it (and
//! credited back to that same thread's counter when it is freed, wherever that happens).
//! This makes the numbers exact even while other threads, such as parallel tests, allocate
//! tensors of their own.
//!
//! Tensors that share a buffer (a `reshape`, a `detach`) are counted once: the bytes belong
//! to the buffer, not to the handles.
//!
//! ```
//! use engine::{memory, Tensor};
//! memory::reset_peak();
//! let before = memory::live_bytes();
//! let t = Tensor::zeros(&[256, 4]); // 1024 f32 values = 4096 bytes
//! assert_eq!(memory::live_bytes() - before, 4096);
//! drop(t);
//! assert_eq!(memory::live_bytes(), before);
//! assert!(memory::peak_bytes() >= before + 4096);
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
struct Counter {
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl Counter {
    fn charge(&self, bytes: usize) {
        let now = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    fn credit(&self, bytes: usize) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }
}

thread_local! {
    static COUNTER: Arc<Counter> = Arc::new(Counter::default());
}

fn this_thread() -> Arc<Counter> {
    COUNTER.with(Arc::clone)
}

/// Bytes held by the live tensor buffers allocated on this thread.
pub fn live_bytes() -> usize {
    this_thread().live.load(Ordering::Relaxed)
}

/// The largest value [`live_bytes`] has reached since the last [`reset_peak`].
pub fn peak_bytes() -> usize {
    this_thread().peak.load(Ordering::Relaxed)
}

/// Starts a new peak measurement from the current live bytes.
pub fn reset_peak() {
    let c = this_thread();
    c.peak
        .store(c.live.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The values of one tensor (or of several that share them), charged to the allocating
/// thread's counter for as long as they live.
pub(crate) struct Buffer {
    data: Vec<f32>,
    counter: Arc<Counter>,
}

impl Buffer {
    pub(crate) fn new(data: Vec<f32>) -> Self {
        let counter = this_thread();
        counter.charge(data.len() * size_of::<f32>());
        Buffer { data, counter }
    }

    pub(crate) fn as_slice(&self) -> &[f32] {
        &self.data
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.counter.credit(self.data.len() * size_of::<f32>());
    }
}
