//! The [`Optimizer`] trait and the checks every optimizer shares.

use crate::check;
use crate::tensor::Tensor;

/// Something that updates parameters from their gradients, like `torch.optim.Optimizer`.
///
/// A training step is: forward, `backward`, [`step`](Optimizer::step),
/// [`zero_grad`](Optimizer::zero_grad). A parameter without a gradient (one the loss did
/// not reach) is skipped by `step`, as in PyTorch.
pub trait Optimizer {
    /// Updates every parameter that has a gradient. Runs under
    /// [`no_grad`](crate::no_grad) and writes through [`Tensor::assign`], so every handle
    /// to a parameter (the layer's, the optimizer's) sees the new values.
    fn step(&mut self);

    /// The parameters being optimized, in the order they were given.
    fn parameters(&self) -> &[Tensor];

    /// Forgets every parameter's gradient (PyTorch's `set_to_none=True` behaviour).
    fn zero_grad(&self) {
        for p in self.parameters() {
            p.zero_grad();
        }
    }

    /// The current learning rate.
    fn lr(&self) -> f32;

    /// Changes the learning rate, as a schedule does between steps. An implementation
    /// refuses a rate its constructor would refuse (negative, infinite or NaN), with
    /// [`check_learning_rate`]: a NaN rate would otherwise turn every parameter into NaN
    /// at the next step.
    fn set_lr(&mut self, lr: f32);
}

/// The checks every optimizer makes on its parameter list when it is built; call it from
/// the constructor of an optimizer of your own, with the constructor's name as `op`.
///
/// It panics, naming the parameter by its position in the list, when:
/// - the list is empty (an optimizer of nothing is a mistake, usually a model whose
///   `parameters()` was called before its layers were added, or the wrong list);
/// - a parameter does not require a gradient: `backward` never gives it one, so no step
///   would ever move it;
/// - a parameter is the result of an op rather than a leaf, which
///   [`Tensor::assign`] cannot update;
/// - the same tensor is listed twice, which one step would update twice.
///
/// ```
/// use engine::optim::check_parameters;
/// use engine::Tensor;
///
/// let w = Tensor::zeros([2]).requires_grad_();
/// check_parameters("MyOptimizer::new", &[w]);
/// ```
///
/// ```should_panic
/// # use engine::optim::check_parameters;
/// # use engine::Tensor;
/// // MyOptimizer::new: parameter 0 (shape [2]) does not require a gradient, …
/// check_parameters("MyOptimizer::new", &[Tensor::zeros([2])]);
/// ```
#[track_caller]
pub fn check_parameters(op: &str, params: &[Tensor]) {
    check::ensure(!params.is_empty(), op, || {
        "the parameter list is empty, so there is nothing to optimize; hint: pass the tensors to train, e.g. the model's parameters()".into()
    });
    for (i, p) in params.iter().enumerate() {
        check::ensure(p.is_leaf(), op, || {
            format!(
                "parameter {i} (shape {:?}) is the result of an op, not a leaf; only leaves can be optimized. hint: build it with requires_grad_() or nn::parameter",
                p.shape()
            )
        });
        check::ensure(p.requires_grad(), op, || {
            format!(
                "parameter {i} (shape {:?}) does not require a gradient, so backward never gives it one and no step would move it; hint: create it with requires_grad_() or nn::parameter, or leave it out of the list",
                p.shape()
            )
        });
        for (j, earlier) in params[..i].iter().enumerate() {
            check::ensure(!earlier.same(p), op, || {
                format!(
                    "parameters {j} and {i} (shape {:?}) are the same tensor, which each step would update twice; hint: a model's parameters() lists a tied weight once, use that",
                    p.shape()
                )
            });
        }
    }
}

/// The check every optimizer makes on a learning rate, in its constructor and in
/// [`Optimizer::set_lr`]: finite and at least 0. Call it from an optimizer of your own,
/// with the method's name as `op`.
///
/// ```should_panic
/// use engine::optim::check_learning_rate;
/// // MyOptimizer::set_lr: lr must be finite and ≥ 0, found NaN
/// check_learning_rate("MyOptimizer::set_lr", f32::NAN);
/// ```
#[track_caller]
pub fn check_learning_rate(op: &str, lr: f32) {
    check_non_negative(op, "lr", lr);
}

/// Checks that a hyper-parameter is finite and at least zero.
#[track_caller]
pub(crate) fn check_non_negative(op: &str, name: &str, value: f32) {
    check::ensure(value >= 0.0 && value.is_finite(), op, || {
        format!("{name} must be finite and ≥ 0, found {value}")
    });
}
