//! What each method holds in memory during one training step, as the engine counts
//! it.

use engine::memory;

use crate::methods::{Method, random_inputs};

// ANCHOR: training_peak
/// The most bytes that tensors held at once during one training step of `method`
/// over `n` positions (the forward pass, then `output.sum().backward()`), beyond the
/// inputs `[1, n, 64]`. It runs on a thread of its own, whose counters nothing else
/// touches, so the number is exact and the same on every machine.
pub fn training_peak(method: Method, n: usize) -> usize {
    std::thread::spawn(move || {
        let (q, k, v) = random_inputs(n, 0);
        let (q, k, v) = (q.requires_grad_(), k.requires_grad_(), v.requires_grad_());
        memory::reset_peak();
        let before = memory::live_bytes();
        method.attend(&q, &k, &v).sum().backward();
        memory::peak_bytes() - before
    })
    .join()
    .expect("the measurement thread does not panic")
}
// ANCHOR_END: training_peak
