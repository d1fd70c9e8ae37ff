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
//! Freed buffers of at least 256 KiB are kept per thread, up to 256 MiB
//! ([`set_spare_limit`]), and reused for
//! the next result of exactly their size (see [`spare_bytes`]): a loop that allocates the
//! same large results on every iteration then stops paying the operating system to map
//! and zero fresh pages each time. They are not live tensors and are not counted in
//! [`live_bytes`] or the peak.
//!
//! Before an op allocates a result it asks three questions here: does the element count
//! fit, is the request under the optional [`set_budget`] (a limit a workshop can set for
//! small laptops), and will the machine grant it. A request that
//! fails any of them panics at the caller's line with the op, the shape and the bytes,
//! instead of aborting the process with no word of where.
//!
//! ```should_panic
//! use engine::{memory, Tensor};
//! memory::set_budget(Some(1 << 20)); // 1 MiB for this thread's tensors
//! let big = Tensor::zeros([1024, 1024]); // 4 MiB: refused, naming `zeros` and the shape
//! ```
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

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::check;

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
    static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
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

/// Bytes of freed buffers this thread keeps for reuse (at most 256 MiB; buffers under
/// 256 KiB are never kept). They are not part of [`live_bytes`].
///
/// ```
/// use engine::{memory, Tensor};
/// let t = Tensor::zeros([512, 512]); // 1 MiB
/// drop(t);
/// assert!(memory::spare_bytes() >= 1 << 20); // kept for the next result of that size
/// memory::release_spare();
/// assert_eq!(memory::spare_bytes(), 0);
/// ```
pub fn spare_bytes() -> usize {
    crate::spare::spare_bytes()
}

/// Hands this thread's spare buffers (see [`spare_bytes`]) back to the system allocator,
/// for a program that has finished its large work and wants its memory back.
pub fn release_spare() {
    crate::spare::release();
}

/// Sets the most bytes of freed buffers this thread keeps for reuse (default 256 MiB;
/// 0 keeps none, as on a machine short of memory), freeing the oldest beyond it now.
pub fn set_spare_limit(bytes: usize) {
    crate::spare::set_limit(bytes);
}

/// The limit set by [`set_spare_limit`] (256 MiB unless changed).
pub fn spare_limit() -> usize {
    crate::spare::limit()
}

/// Sets (or, with `None`, removes) a limit on the bytes this thread's live tensors may
/// hold. An op whose result would take [`live_bytes`] past the limit panics with the op,
/// the shape and the bytes, before allocating anything.
pub fn set_budget(bytes: Option<usize>) {
    BUDGET.with(|b| b.set(bytes));
}

/// The limit set by [`set_budget`], if any.
pub fn budget() -> Option<usize> {
    BUDGET.with(Cell::get)
}

/// Requests this large are tried with the allocator before the op runs, so that a refusal
/// becomes a message instead of an abort. Smaller ones cannot fail in a way worth a check.
const PROBE_BYTES: usize = 64 << 20;

/// Checks that a result of shape `shape` can be allocated: its size fits in memory's
/// address range, it stays within the [`budget`], and the allocator grants it. Panics with
/// `op`, the shape and the bytes otherwise, pointing at the caller's line.
#[track_caller]
pub(crate) fn ensure_can_allocate(op: &str, shape: &[usize]) {
    let n = check::numel(op, shape);
    let Some(bytes) = n
        .checked_mul(size_of::<f32>())
        .filter(|&b| b <= isize::MAX as usize)
    else {
        check::fail(
            op,
            format!(
                "the result {shape:?} would hold {n} values, more bytes than any machine can address"
            ),
        )
    };
    if let Some(limit) = budget() {
        let live = live_bytes();
        if live.saturating_add(bytes) > limit {
            check::fail(
                op,
                format!(
                    "the result {shape:?} needs {} ({n} values of 4 bytes), but this thread's memory budget is {} and {} is already in use\n  hint: use smaller sizes, or raise the limit with engine::memory::set_budget",
                    human(bytes),
                    human(limit),
                    human(live)
                ),
            );
        }
    }
    if bytes >= PROBE_BYTES && Vec::<f32>::new().try_reserve_exact(n).is_err() {
        check::fail(
            op,
            format!(
                "the result {shape:?} needs {} ({n} values of 4 bytes), and the machine cannot allocate that much\n  hint: use smaller sizes (batch, sequence length, hidden size)",
                human(bytes)
            ),
        );
    }
}

/// Bytes in the largest binary unit that keeps the number ≥ 1: `1.50 GiB`.
pub fn human(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
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
        crate::spare::give_back(std::mem::take(&mut self.data));
    }
}
