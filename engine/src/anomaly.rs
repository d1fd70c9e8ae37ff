//! Anomaly mode: name the first op that produces a NaN or an infinity.
//!
//! A NaN in a loss is easy to see and hard to trace. With anomaly mode on, every op checks
//! its forward output, and `backward` checks every gradient it computes; the first
//! non-finite value stops the program with the op's name and its input shapes, like
//! PyTorch's `torch.autograd.detect_anomaly`. The check reads every value, so it is off by
//! default.
//!
//! ```should_panic
//! use engine::{anomaly, Tensor};
//! anomaly::detect_anomaly(|| {
//!     Tensor::from_vec(vec![1.0, 0.0], &[2]).log(); // panics: log produced -inf
//! });
//! ```

use std::cell::{Cell, RefCell};
use std::panic::Location;

use crate::op::Op;
use crate::scoped_flag::with_flag;
use crate::tensor::Tensor;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    /// While `backward` computes a derivative: the tensor whose op is being differentiated
    /// and the caller's `backward()` line. The ops a derivative uses are then reported by
    /// [`check_backward`] under the name of the op being differentiated, not under their
    /// own names, and a check that fails inside it (a memory budget refusal) names that op.
    /// The message is written only when one is needed: this costs one handle per op.
    static DERIVATIVE: RefCell<Option<(Tensor, &'static Location<'static>)>> =
        const { RefCell::new(None) };
}

/// Restores the previous derivative when dropped, even on a panic.
struct DerivativeGuard(Option<(Tensor, &'static Location<'static>)>);

impl Drop for DerivativeGuard {
    fn drop(&mut self) {
        DERIVATIVE.with(|d| *d.borrow_mut() = self.0.take());
    }
}

/// While `backward` computes a derivative: `backward() called at …: the derivative of `op`
/// (input shapes …)`, which `check::fail` puts before its message.
pub(crate) fn current_derivative() -> Option<String> {
    DERIVATIVE.with(|d| {
        let current = d.borrow();
        let (node, called_at) = current.as_ref()?;
        let op = node.0.op.as_ref()?;
        Some(format!(
            "backward() called at {called_at}: the derivative of `{}` (input shapes {})",
            op.name(),
            shapes(&op.inputs())
        ))
    })
}

fn in_a_derivative() -> bool {
    DERIVATIVE.with(|d| d.borrow().is_some())
}

/// Switches anomaly mode on or off for this thread.
pub fn set_detect_anomaly(enabled: bool) {
    ENABLED.with(|e| e.set(enabled));
}

/// Whether anomaly mode is on for this thread.
pub fn is_enabled() -> bool {
    ENABLED.with(Cell::get)
}

/// Runs `f` with anomaly mode on, restoring the previous mode afterwards (even on panic).
pub fn detect_anomaly<R>(f: impl FnOnce() -> R) -> R {
    with_flag(&ENABLED, true, f)
}

fn first_bad(values: &[f32]) -> Option<(usize, f32)> {
    values
        .iter()
        .copied()
        .enumerate()
        .find(|(_, v)| !v.is_finite())
}

fn shapes(inputs: &[&Tensor]) -> String {
    let list: Vec<String> =
        inputs.iter().map(|t| format!("{:?}", t.shape())).collect();
    list.join(", ")
}

/// Runs the derivative `f` of the op that made `node`, silencing the forward checks of the
/// ops it uses, and naming that op (with `backward()`'s caller, `called_at`) in the message
/// of any check that fails inside it.
pub(crate) fn in_derivative<R>(
    node: &Tensor,
    called_at: &'static Location<'static>,
    f: impl FnOnce() -> R,
) -> R {
    let previous =
        DERIVATIVE.with(|d| d.borrow_mut().replace((node.clone(), called_at)));
    let _restore = DerivativeGuard(previous);
    f()
}

#[track_caller]
pub(crate) fn check_forward(op: &Op, output: &[f32]) {
    if !is_enabled() || in_a_derivative() {
        return;
    }
    if let Some((i, v)) = first_bad(output) {
        panic!(
            "anomaly: the forward pass of `{}` produced {v} at element {i} of its output\n  input shapes: {}",
            op.name(),
            shapes(&op.inputs())
        );
    }
}

#[track_caller]
pub(crate) fn check_backward(op: &Op, input_index: usize, grad: &Tensor) {
    if !is_enabled() {
        return;
    }
    if let Some((i, v)) = first_bad(&grad.to_vec()) {
        panic!(
            "anomaly: the backward pass of `{}` produced {v} at element {i} of the gradient for its input {input_index}\n  input shapes: {}",
            op.name(),
            shapes(&op.inputs())
        );
    }
}
