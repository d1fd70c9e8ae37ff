//! Two deliberately wrong versions of [`Value::backward`], kept so that the page's
//! claims about them are checked: the tests hold each one to the wrong numbers the
//! page quotes.
//!
//! Do not use them for anything else.

use crate::scalar::Value;

// ANCHOR: overwriting
/// **Deliberately wrong.** `backward` with `=` where `+=` belongs: an input used by
/// two ops (or twice by one) keeps only the last contribution. For `b = a + a` it
/// gives `∂b/∂a = 1` instead of 2.
pub fn backward_overwriting(root: &Value) {
    let order = root.topological_order();
    root.set_grad(1.0);
    for v in order.iter().rev() {
        for (input, local) in v.inputs() {
            // BUG: overwrites the other contributions
            input.set_grad(local * v.grad());
        }
    }
}
// ANCHOR_END: overwriting

// ANCHOR: stale
/// **Deliberately wrong.** The original micrograd `backward`: the root's gradient set
/// to 1 and every gradient accumulated, with nothing reset. The first call is right.
/// A second call finds the intermediate values still holding the first call's
/// gradients, adds the new ones on top, and passes the doubled sums down, so the
/// leaves receive more than one call's worth, by a factor that grows with their
/// depth.
pub fn backward_keeping_stale_gradients(root: &Value) {
    let order = root.topological_order();
    root.set_grad(1.0);
    for v in order.iter().rev() {
        for (input, local) in v.inputs() {
            // BUG: v.grad() may be stale
            input.set_grad(input.grad() + local * v.grad());
        }
    }
}
// ANCHOR_END: stale
