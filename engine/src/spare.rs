//! Recently freed large buffers, kept by each thread for the next result of the same size.
//!
//! A training step or a benchmark loop allocates the same large results on every
//! iteration and frees them at its end. Left to the system allocator, memory that large is
//! handed back to the operating system when it is freed and requested again on the next
//! iteration, and the operating system must then map and zero every page again: a page
//! fault per 4 KiB, which cost a tenth of multi-head attention's forward and backward time.
//! Keeping a few freed buffers and reusing one when a result has exactly its size avoids
//! that, the way PyTorch's GPU allocator caches blocks.
//!
//! Only buffers of at least [`SPARE_MIN_VALUES`] values are kept, at most
//! [`SPARE_MAX_BYTES`] per thread; when a new one would exceed that, the oldest go back to
//! the allocator. A reused buffer is zero-filled (or emptied) exactly as a fresh one, so
//! reuse never changes a result. Spare buffers are not tensors: `memory::live_bytes` does
//! not count them; `memory::spare_bytes` does, and `memory::release_spare` frees them.

use std::cell::RefCell;

/// Buffers smaller than this many values (256 KiB) are left to the allocator, which
/// serves them from memory it keeps anyway.
pub const SPARE_MIN_VALUES: usize = 1 << 16;

/// The most bytes of spare buffers one thread keeps (256 MiB).
pub const SPARE_MAX_BYTES: usize = 256 << 20;

#[derive(Default)]
struct Spare {
    /// Oldest first.
    buffers: Vec<Vec<f32>>,
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
}

fn bytes_of(buffer: &Vec<f32>) -> usize {
    buffer.capacity() * size_of::<f32>()
}

/// Takes this thread's most recently kept buffer whose capacity is exactly `n`, if any.
fn take(n: usize) -> Option<Vec<f32>> {
    if n < SPARE_MIN_VALUES {
        return None;
    }
    SPARE
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            let at = spare.buffers.iter().rposition(|b| b.capacity() == n)?;
            let buffer = spare.buffers.remove(at);
            spare.bytes -= bytes_of(&buffer);
            Some(buffer)
        })
        .ok()
        .flatten()
}

/// `n` zeros, in a kept buffer of that size when this thread has one.
pub(crate) fn zeros(n: usize) -> Vec<f32> {
    match take(n) {
        Some(mut buffer) => {
            buffer.clear();
            buffer.resize(n, 0.0);
            buffer
        }
        None => vec![0.0; n],
    }
}

/// An empty vector with room for exactly `n` values, a kept buffer when this thread has
/// one.
pub(crate) fn with_capacity(n: usize) -> Vec<f32> {
    match take(n) {
        Some(mut buffer) => {
            buffer.clear();
            buffer
        }
        None => Vec::with_capacity(n),
    }
}

/// Keeps a freed buffer for reuse, if it is large enough, dropping the oldest kept ones
/// beyond [`SPARE_MAX_BYTES`]. (During the thread's exit, it is simply freed.)
pub(crate) fn give_back(buffer: Vec<f32>) {
    if buffer.capacity() < SPARE_MIN_VALUES || bytes_of(&buffer) > SPARE_MAX_BYTES {
        return;
    }
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        spare.bytes += bytes_of(&buffer);
        spare.buffers.push(buffer);
        while spare.bytes > SPARE_MAX_BYTES {
            let oldest = spare.buffers.remove(0);
            spare.bytes -= bytes_of(&oldest);
        }
    });
}

/// Bytes of spare buffers this thread holds.
pub(crate) fn spare_bytes() -> usize {
    SPARE.try_with(|s| s.borrow().bytes).unwrap_or(0)
}

/// Hands every spare buffer of this thread back to the allocator.
pub(crate) fn release() {
    let _ = SPARE.try_with(|spare| *spare.borrow_mut() = Spare::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_large_buffer_serves_the_next_result_of_its_size_zeroed() {
        let n = SPARE_MIN_VALUES + 3;
        let mut first = zeros(n);
        first.fill(7.0);
        let address = first.as_ptr();
        give_back(first);
        assert_eq!(spare_bytes(), n * 4);
        assert!(take(n + 1).is_none(), "only an exact size is reused");
        let second = zeros(n);
        assert_eq!(second.as_ptr(), address, "the same memory");
        assert!(second.iter().all(|&v| v == 0.0));
        assert_eq!(second.len(), n);
        assert_eq!(spare_bytes(), 0);
        give_back(second);
        let third = with_capacity(n);
        assert_eq!(
            (third.len(), third.capacity(), third.as_ptr()),
            (0, n, address)
        );
    }

    #[test]
    fn small_buffers_are_not_kept_and_the_total_stays_under_the_limit() {
        give_back(vec![1.0; SPARE_MIN_VALUES - 1]);
        assert_eq!(spare_bytes(), 0);
        let quarter = SPARE_MAX_BYTES / 4 / size_of::<f32>();
        let buffers: Vec<Vec<f32>> = (0..5).map(|i| zeros(quarter + i)).collect();
        let sizes: Vec<usize> = buffers.iter().map(|b| b.capacity()).collect();
        for b in buffers {
            give_back(b);
        }
        assert!(spare_bytes() <= SPARE_MAX_BYTES, "{}", spare_bytes());
        // The oldest went first: the newest three are kept.
        assert!(take(sizes[0]).is_none() && take(sizes[1]).is_none());
        assert!(take(sizes[4]).is_some() && take(sizes[3]).is_some() && take(sizes[2]).is_some());
        assert_eq!(spare_bytes(), 0);
    }

    #[test]
    fn release_frees_every_spare_buffer() {
        give_back(vec![0.0; SPARE_MIN_VALUES]);
        assert_eq!(spare_bytes(), SPARE_MIN_VALUES * 4);
        release();
        assert_eq!(spare_bytes(), 0);
        assert!(take(SPARE_MIN_VALUES).is_none());
    }
}
