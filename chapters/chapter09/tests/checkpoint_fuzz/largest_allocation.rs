//! A global allocator that records the largest single request a thread makes while it
//! is measuring: how the checkpoint tests see that a file's header cannot make the
//! reader ask for more memory than the file's size justifies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// [`System`], recording the largest request of each measuring thread.
pub struct Counting;

thread_local! {
    // `None` while the thread is not measuring. Const-initialised and without a
    // destructor, so reading it never allocates (which would recurse).
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
}

fn record(size: usize) {
    let _ = LARGEST.try_with(|largest| {
        if let Some(seen) = largest.get() {
            largest.set(Some(seen.max(size)));
        }
    });
}

// SAFETY: every call is passed on to `System` unchanged; recording touches only a
// thread-local `Cell`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(
        &self,
        ptr: *mut u8,
        layout: Layout,
        new_size: usize,
    ) -> *mut u8 {
        record(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` and returns its result with the largest single allocation, in bytes, that
/// this thread requested meanwhile.
pub fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let outer = LARGEST.with(|l| l.replace(Some(0)));
    let result = f();
    let largest = LARGEST.with(|l| l.replace(outer)).unwrap_or(0);
    if let Some(seen) = outer {
        LARGEST.with(|l| l.set(Some(seen.max(largest))));
    }
    (result, largest)
}
