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
//! [`SPARE_MAX_BYTES`] per thread (`memory::set_spare_limit` changes that, 0 turns it off); when a new one would exceed that, the oldest go back to
//! the allocator. A reused buffer is zero-filled (or emptied) exactly as a fresh one, so
//! reuse never changes a result, except for kernels that write every element of their
//! output, which take it as it is ([`for_overwrite`]); a test fills the spare buffers with
//! NaN before each of those kernels and checks that none is left. Spare buffers are not tensors: `memory::live_bytes` does
//! not count them; `memory::spare_bytes` does, and `memory::release_spare` frees them.

use std::cell::RefCell;

/// Buffers smaller than this many values (256 KiB) are left to the allocator, which
/// serves them from memory it keeps anyway.
pub const SPARE_MIN_VALUES: usize = 1 << 16;

/// The most bytes of spare buffers one thread keeps unless `memory::set_spare_limit`
/// says otherwise (256 MiB).
pub const SPARE_MAX_BYTES: usize = 256 << 20;

struct Spare {
    /// Oldest first.
    buffers: Vec<Vec<f32>>,
    bytes: usize,
    limit: usize,
}

impl Spare {
    /// Drops the oldest buffers until the total is within the limit.
    fn trim(&mut self) {
        while self.bytes > self.limit {
            let oldest = self.buffers.remove(0);
            self.bytes -= bytes_of(&oldest);
        }
    }
}

thread_local! {
    static SPARE: RefCell<Spare> = const {
        RefCell::new(Spare { buffers: Vec::new(), bytes: 0, limit: SPARE_MAX_BYTES })
    };
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

/// `n` values for a kernel that writes every one of them: a kept buffer of that size with
/// its old values still in it, or zeros. Skips the zero-fill that [`zeros`] does on a kept
/// buffer (a tenth of multi-head attention's time went to that memset); a kernel that only
/// writes some elements, or adds into them, must use [`zeros`].
pub(crate) fn for_overwrite(n: usize) -> Vec<f32> {
    match take(n) {
        Some(mut buffer) => {
            buffer.resize(n, 0.0); // the old length is n unless it was built shorter
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
/// beyond the limit. (During the thread's exit, it is simply freed.)
pub(crate) fn give_back(buffer: Vec<f32>) {
    if buffer.capacity() < SPARE_MIN_VALUES {
        return;
    }
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        if bytes_of(&buffer) > spare.limit {
            return;
        }
        spare.bytes += bytes_of(&buffer);
        spare.buffers.push(buffer);
        spare.trim();
    });
}

/// Sets the most bytes of spare buffers this thread keeps (0: none), freeing the oldest
/// beyond it now.
pub(crate) fn set_limit(bytes: usize) {
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        spare.limit = bytes;
        spare.trim();
    });
}

/// The most bytes of spare buffers this thread keeps.
pub(crate) fn limit() -> usize {
    SPARE.try_with(|s| s.borrow().limit).unwrap_or(0)
}

/// Bytes of spare buffers this thread holds.
pub(crate) fn spare_bytes() -> usize {
    SPARE.try_with(|s| s.borrow().bytes).unwrap_or(0)
}

/// Hands every spare buffer of this thread back to the allocator.
pub(crate) fn release() {
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        spare.buffers.clear();
        spare.bytes = 0;
    });
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
        assert!(
            take(sizes[4]).is_some()
                && take(sizes[3]).is_some()
                && take(sizes[2]).is_some()
        );
        assert_eq!(spare_bytes(), 0);
    }

    #[test]
    fn a_buffer_for_overwriting_keeps_its_old_values() {
        let n = SPARE_MIN_VALUES;
        give_back(vec![f32::NAN; n]);
        let reused = for_overwrite(n);
        assert_eq!(reused.len(), n);
        assert!(reused.iter().all(|v| v.is_nan()), "not filled again");
        let fresh = for_overwrite(n);
        assert!(
            fresh.iter().all(|&v| v == 0.0),
            "a new buffer starts as zeros"
        );
    }

    #[test]
    fn a_limit_of_zero_keeps_nothing_and_a_lower_limit_frees_the_oldest_now() {
        let n = SPARE_MIN_VALUES;
        give_back(vec![1.0; n]);
        give_back(vec![2.0; n + 1]);
        set_limit(bytes_of(&vec![0.0f32; n + 1]));
        assert_eq!(limit(), (n + 1) * 4);
        assert_eq!(spare_bytes(), (n + 1) * 4, "the older buffer went first");
        set_limit(0);
        assert_eq!(spare_bytes(), 0);
        give_back(vec![3.0; n]);
        assert_eq!(spare_bytes(), 0);
        set_limit(SPARE_MAX_BYTES);
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
