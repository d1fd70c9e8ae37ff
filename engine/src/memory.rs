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
//! Every tensor's values are counted in one place, when they become a tensor: that is where
//! the optional [`set_budget`] (a limit a workshop can set for small laptops) is checked,
//! for every op, every creation function and every derivative alike. Memory held outside
//! tensors, such as the attention library's KV cache, is counted there too through a
//! [`Reservation`]. Ops whose result can be larger than their inputs (broadcasting, matrix
//! products, concatenation, …) also ask before they compute: does the element count fit,
//! is it under the budget, and will the machine grant it. A request that fails any of these
//! panics at the caller's line with the op, the shape and the bytes, instead of aborting
//! the process with no word of where; inside `backward()` it also names the forward op
//! whose derivative was being computed.
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

/// Sets (or, with `None`, removes) a limit on the bytes this thread's live tensors (and
/// [`Reservation`]s) may hold. An op whose result would take [`live_bytes`] past the limit
/// panics with the op, the shape and the bytes, at the caller's line; inside `backward()`,
/// the message also names the forward op whose derivative needed the memory.
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

/// Checks that a result of shape `shape` can be allocated, before an op computes it: its
/// size fits in memory's address range, it stays within the [`budget`], and the allocator
/// grants it. Panics with `op`, the shape and the bytes otherwise, pointing at the
/// caller's line.
///
/// Every tensor's values are checked against the budget again when they become a tensor
/// ([`Buffer::new`], through [`admit`]); this earlier check lets an op refuse before it
/// spends the time and the memory of computing a result it could not keep.
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
    check_budget(op, bytes, || format!("the result {shape:?}"));
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

/// Panics, naming `op` and `what` (e.g. "the result [2, 3]"), when `bytes` more would
/// take this thread's live bytes past its [`budget`].
#[track_caller]
fn check_budget(op: &str, bytes: usize, what: impl FnOnce() -> String) {
    let Some(limit) = budget() else { return };
    let live = live_bytes();
    if live.saturating_add(bytes) > limit {
        check::fail(
            op,
            format!(
                "{} needs {} ({} values of 4 bytes), but this thread's memory budget is {} and {} is already in use\n  hint: use smaller sizes, or raise the limit with engine::memory::set_budget",
                what(),
                human(bytes),
                bytes / size_of::<f32>(),
                human(limit),
                human(live)
            ),
        );
    }
}

/// The one place where memory for values is counted: checks `values` more `f32`s against
/// this thread's [`budget`] (panicking with `op` and `what` when they do not fit), then
/// charges them to this thread's counter, which is returned so the bytes can be credited
/// back when they are freed. Every tensor's buffer and every [`Reservation`] comes here.
#[track_caller]
fn admit(op: &str, values: usize, what: impl FnOnce() -> String) -> Arc<Counter> {
    let bytes = values * size_of::<f32>();
    check_budget(op, bytes, what);
    let counter = this_thread();
    counter.charge(bytes);
    counter
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
    /// Takes `data`, the values of a tensor of shape `shape` made by `op`, after checking
    /// them against the budget (see [`admit`]).
    #[track_caller]
    pub(crate) fn new(op: &str, shape: &[usize], data: Vec<f32>) -> Self {
        let counter = admit(op, data.len(), || format!("the result {shape:?}"));
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

/// Memory that holds values outside any tensor, counted like a tensor's: in
/// [`live_bytes`], in the peak, and against the [`budget`]. A structure that keeps its own
/// growing buffers (the attention library's KV cache) holds one and resizes it whenever its
/// buffers' capacity changes, so that its memory shows up where a learner looks for it.
///
/// ```
/// use engine::memory::{self, Reservation};
/// let before = memory::live_bytes();
/// let mut held = Reservation::new();
/// held.resize("my_cache", 1000, || "keys and values for 10 tokens".into());
/// assert_eq!(memory::live_bytes() - before, 4000); // 1000 f32 values
/// held.resize("my_cache", 250, String::new); // shrinking is always allowed
/// assert_eq!(memory::live_bytes() - before, 1000);
/// drop(held);
/// assert_eq!(memory::live_bytes(), before);
/// ```
pub struct Reservation {
    values: usize,
    counter: Option<Arc<Counter>>,
}

impl Reservation {
    /// A reservation of nothing.
    pub fn new() -> Reservation {
        Reservation {
            values: 0,
            counter: None,
        }
    }

    /// The number of `f32` values reserved.
    pub fn values(&self) -> usize {
        self.values
    }

    /// Reserves `values` `f32`s in all, instead of the current number. Growing checks the
    /// extra bytes against this thread's [`budget`] and panics, naming `op` and what
    /// `what` describes, when they do not fit; the reservation is then unchanged.
    #[track_caller]
    pub fn resize(&mut self, op: &str, values: usize, what: impl FnOnce() -> String) {
        if values > self.values {
            let counter = admit(op, values - self.values, what);
            if let Some(old) = self.counter.replace(counter) {
                // The old bytes move to this thread's counter with the new ones.
                old.credit(self.values * size_of::<f32>());
                this_thread().charge(self.values * size_of::<f32>());
            }
        } else if let Some(counter) = &self.counter {
            counter.credit((self.values - values) * size_of::<f32>());
        }
        self.values = values;
    }
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({})", human(self.values * size_of::<f32>()))
    }
}

impl Default for Reservation {
    fn default() -> Self {
        Reservation::new()
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(counter) = &self.counter {
            counter.credit(self.values * size_of::<f32>());
        }
    }
}
