//! Autocast: mixed precision emulated on the CPU. Inside [`autocast`], the ops that a GPU
//! would run in half precision (matrix products and attention scores) take their inputs
//! rounded to the chosen format and give their output rounded to it, while they still
//! accumulate in `f32`, as tensor cores do; every other op (softmax, reductions, losses,
//! layer norms, element-wise ops) runs in `f32` on whatever it is given. This is the split
//! of PyTorch's `torch.autocast`: its lists of ops that "autocast to float16" and ops that
//! "autocast to float32".
//!
//! | inside `autocast(p, …)` | computed as |
//! |---|---|
//! | `matmul`, `matmul_t`, `bmm` (so `Linear` and attention scores) | `a.to_precision(p) · b.to_precision(p)`, accumulated in `f32`, then `.to_precision(p)` |
//! | `additive_scores`, `additive_scores_with`, `blocked_attention` | the same: inputs and output rounded |
//! | everything else | unchanged, in `f32` |
//!
//! The rounding goes through [`Tensor::to_precision`](crate::Tensor::to_precision), so it
//! is recorded: the backward pass rounds the gradients at the same places, as a GPU's
//! half-precision backward kernels would. `backward` itself runs with autocast off (the
//! forward pass's rounding, kept in the graph, already decides where gradients are
//! rounded). With [`Precision::F32`] the scope changes nothing.
//!
//! There are no half-precision GPU kernels yet: inside the scope, a product of tensors on
//! a GPU stops with a message.

use std::cell::Cell;

use crate::precision::Precision;

thread_local! {
    static PRECISION: Cell<Option<Precision>> = const { Cell::new(None) };
}

/// Runs `f` with autocast to `precision` on this thread, like PyTorch's
/// `with torch.autocast(device_type, dtype=…):`. The previous setting is restored
/// afterwards, even if `f` panics; scopes nest.
///
/// ```
/// use engine::precision::Precision;
/// use engine::{Tensor, autocast};
/// let a = Tensor::from_vec(vec![1.0001, 2.0], [1, 2]);
/// let b = Tensor::from_vec(vec![1.0, 1.0], [2, 1]);
/// assert!(a.matmul(&b).item() > 3.0);
/// // In f16, 1.0001 is 1: the product sees the rounded input.
/// let half = autocast(Precision::F16, || a.matmul(&b));
/// assert_eq!(half.item(), 3.0);
/// ```
pub fn autocast<R>(precision: Precision, f: impl FnOnce() -> R) -> R {
    let _restore = Guard::set(Some(precision));
    f()
}

/// The precision products are autocast to on this thread, or `None` (no scope, or a scope
/// of [`Precision::F32`]).
pub fn active() -> Option<Precision> {
    PRECISION.with(Cell::get).filter(|&p| p != Precision::F32)
}

/// Switches autocast off until dropped: inside an autocast op (its own products must not
/// round again) and during `backward`.
pub(crate) fn suspend() -> Guard {
    Guard::set(None)
}

/// Restores the previous setting when dropped.
pub(crate) struct Guard {
    previous: Option<Precision>,
}

impl Guard {
    fn set(value: Option<Precision>) -> Guard {
        Guard {
            previous: PRECISION.with(|c| c.replace(value)),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        PRECISION.with(|c| c.set(self.previous));
    }
}
