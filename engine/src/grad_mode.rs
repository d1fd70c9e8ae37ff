//! Gradient mode: whether ops record the graph that `backward` walks.

use std::cell::Cell;

use crate::scoped_flag::{FlagGuard, with_flag};

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether ops on this thread currently record the graph.
pub fn is_enabled() -> bool {
    ENABLED.with(Cell::get)
}

/// Runs `f` with graph recording switched off on this thread, like `with torch.no_grad():`.
/// Tensors made inside carry no op, so they cost no graph memory. The previous mode is
/// restored afterwards, even if `f` panics.
///
/// ```
/// use engine::{no_grad, Tensor};
/// let w = Tensor::ones(&[2]).requires_grad_();
/// let y = no_grad(|| &w * 3.0);
/// assert!(!y.requires_grad());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    with_flag(&ENABLED, false, f)
}

/// Switches graph recording off until the guard is dropped (for engine code that must not
/// use a closure, so that `#[track_caller]` still sees the caller's line).
pub(crate) fn no_grad_guard() -> FlagGuard {
    FlagGuard::set(&ENABLED, false)
}
