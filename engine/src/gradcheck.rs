//! Checking `backward` against finite differences.
//!
//! For a function `f` of some tensors, [`gradcheck`] compares the gradient that autograd
//! computes with the central difference `(L(x + ε) − L(x − ε)) / 2ε` for every input
//! element. `f`'s output is first reduced to a scalar `L = Σ w ⊙ f(x)` with fixed random
//! weights `w`: a plain sum would hide mistakes (the sum of a softmax is always 1, so *any*
//! softmax derivative would pass).
//!
//!
//! The function must give the same output every time it is called on the same inputs: the
//! finite differences call it many times, and a function that draws random numbers (dropout
//! in training mode) would make them measure the randomness, not the derivative. So
//! [`gradcheck`] calls it twice on the inputs first and returns
//! [`GradcheckError::NotDeterministic`] when the two outputs differ, before blaming any
//! derivative.
//!
//! ```
//! use engine::{gradcheck::gradcheck, Tensor};
//! let x = Tensor::from_vec(vec![0.3, -1.2, 2.0], &[3]);
//! gradcheck(|t| t[0].tanh(), &[x]).unwrap();
//! ```

use std::fmt;

use crate::check;
use crate::grad_mode::no_grad;
use crate::random::rng_from_seed;
use crate::tensor::Tensor;

/// Step size and tolerances for [`gradcheck_with`].
#[derive(Clone, Copy, Debug)]
pub struct GradcheckOptions {
    /// The finite-difference step.
    pub eps: f32,
    /// Absolute tolerance.
    pub atol: f32,
    /// Tolerance relative to the numeric derivative.
    pub rtol: f32,
}

impl Default for GradcheckOptions {
    /// Tuned for `f32`: a step of 1e-2 keeps rounding noise small, and a wrong derivative
    /// (zero, a sign error, a missing factor) is off by far more than the tolerances.
    fn default() -> Self {
        GradcheckOptions {
            eps: 1e-2,
            atol: 2e-3,
            rtol: 1e-2,
        }
    }
}

/// The element where analytic and numeric gradients disagree most.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which input (position in the slice passed to `gradcheck`).
    pub input: usize,
    /// Row-major index of the element within that input.
    pub index: usize,
    /// The gradient computed by `backward`.
    pub analytic: f32,
    /// The central finite difference.
    pub numeric: f32,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gradcheck: input {} element {}: backward gives {}, finite differences give {} (difference {})",
            self.input,
            self.index,
            self.analytic,
            self.numeric,
            (self.analytic - self.numeric).abs()
        )
    }
}

impl std::error::Error for Mismatch {}

/// Why [`gradcheck`] failed.
#[derive(Clone, Debug, PartialEq)]
pub enum GradcheckError {
    /// `backward` and the finite differences disagree: the derivative is wrong. Holds the
    /// element where they disagree most.
    Mismatch(Mismatch),
    /// Two calls of the function on the same inputs gave different outputs (it draws
    /// random numbers, say), so finite differences of it mean nothing; no derivative was
    /// compared.
    NotDeterministic {
        /// Row-major index of the first output element that differs.
        index: usize,
        /// Its value in the first call.
        first: f32,
        /// Its value in the second call.
        second: f32,
    },
}

impl fmt::Display for GradcheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GradcheckError::Mismatch(mismatch) => mismatch.fmt(f),
            GradcheckError::NotDeterministic {
                index,
                first,
                second,
            } => write!(
                f,
                "gradcheck: the function is not deterministic: called twice on the same inputs, output element {index} was {first}, then {second}; finite differences would measure the change between calls, not the derivative. hint: fix the randomness for the check (dropout with training = false or p = 0, a fixed mask, or engine::manual_seed at the start of the function)"
            ),
        }
    }
}

impl std::error::Error for GradcheckError {}

/// [`gradcheck_with`] using the default options.
#[track_caller]
pub fn gradcheck(
    f: impl Fn(&[Tensor]) -> Tensor,
    inputs: &[Tensor],
) -> Result<(), GradcheckError> {
    gradcheck_with(f, inputs, GradcheckOptions::default())
}

/// Checks the gradient of `f` with respect to every element of every input.
///
/// First calls `f` twice on the inputs (recording, then under [`no_grad`], as the finite
/// differences call it) and returns [`GradcheckError::NotDeterministic`] when the outputs
/// differ. Then returns [`GradcheckError::Mismatch`] with the worst element (relative to
/// the tolerance) when any element is outside `atol + rtol · |numeric|`. Inputs are
/// copied; the caller's tensors are untouched.
///
/// # Panics
/// When the two calls return outputs of different shapes.
#[track_caller]
pub fn gradcheck_with(
    f: impl Fn(&[Tensor]) -> Tensor,
    inputs: &[Tensor],
    opts: GradcheckOptions,
) -> Result<(), GradcheckError> {
    let leaves: Vec<Tensor> =
        inputs.iter().map(|t| t.detach().requires_grad_()).collect();
    let out = f(&leaves);
    let again = no_grad(|| f(&leaves.iter().map(Tensor::detach).collect::<Vec<_>>()));
    check::ensure(again.shape() == out.shape(), "gradcheck", || {
        format!(
            "the function returned shape {:?}, then {:?} on the same inputs; it must return the same output for the same inputs",
            out.shape(),
            again.shape()
        )
    });
    let differs = |(a, b): &(f32, f32)| a != b && !(a.is_nan() && b.is_nan());
    if let Some((index, (first, second))) = out
        .to_vec()
        .into_iter()
        .zip(again.to_vec())
        .enumerate()
        .find(|(_, pair)| differs(pair))
    {
        return Err(GradcheckError::NotDeterministic {
            index,
            first,
            second,
        });
    }
    let weights =
        Tensor::normal_with(out.shape(), 0.0, 1.0, &mut rng_from_seed(0x6752_6164));
    // An output that does not depend on the inputs (a constant, a comparison) has a zero
    // gradient, which the finite differences below must confirm.
    if out.requires_grad() {
        (&out * &weights).sum().backward();
    }

    // L as a function of one input's values, accumulated in f64 to keep rounding noise out
    // of the difference quotient.
    let w = weights.to_vec();
    let loss_with = |which: usize, values: Vec<f32>| -> f64 {
        let mut args: Vec<Tensor> = leaves.iter().map(Tensor::detach).collect();
        args[which] = Tensor::from_vec(values, inputs[which].shape());
        let y = no_grad(|| f(&args)).to_vec();
        y.iter()
            .zip(&w)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum()
    };

    let mut worst: Option<(f32, Mismatch)> = None;
    for (i, leaf) in leaves.iter().enumerate() {
        let analytic = leaf
            .grad()
            .map(|g| g.to_vec())
            .unwrap_or_else(|_| vec![0.0; leaf.numel()]);
        let base = leaf.to_vec();
        for j in 0..base.len() {
            let mut plus = base.clone();
            plus[j] += opts.eps;
            let mut minus = base.clone();
            minus[j] -= opts.eps;
            let numeric = ((loss_with(i, plus) - loss_with(i, minus))
                / (2.0 * f64::from(opts.eps))) as f32;
            let excess = (analytic[j] - numeric).abs()
                / (opts.atol + opts.rtol * numeric.abs());
            // A NaN on either side checks nothing: it is as far off as it gets.
            let excess = if excess.is_nan() {
                f32::INFINITY
            } else {
                excess
            };
            if excess > 1.0 && worst.as_ref().is_none_or(|(e, _)| excess > *e) {
                worst = Some((
                    excess,
                    Mismatch {
                        input: i,
                        index: j,
                        analytic: analytic[j],
                        numeric,
                    },
                ));
            }
        }
    }
    match worst {
        Some((_, mismatch)) => Err(GradcheckError::Mismatch(mismatch)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_correct_derivative() {
        let x = Tensor::from_vec(vec![0.5, -1.0, 2.0], [3]);
        assert_eq!(gradcheck(|t| t[0].square(), &[x]), Ok(()));
    }

    #[test]
    fn a_function_that_ignores_its_input_has_a_zero_gradient() {
        let x = Tensor::from_vec(vec![0.5, -1.0], [2]);
        assert_eq!(gradcheck(|t| t[0].gt(&Tensor::scalar(0.0)), &[x]), Ok(()));
    }

    #[test]
    fn rejects_a_deliberately_wrong_derivative() {
        // The value is x², but autograd sees `detach(x) · x` and reports x·w instead of 2x·w.
        let xs = [0.5, -1.0, 2.0];
        let x = Tensor::from_vec(xs.to_vec(), [3]);
        let Err(GradcheckError::Mismatch(err)) =
            gradcheck(|t| &t[0].detach() * &t[0], &[x])
        else {
            panic!("x·detach(x) has the derivative x, not 2x");
        };
        let w = weights(3);
        // The worst element is the one with the largest |x·w| (the size of the error).
        let expected = (0..3)
            .max_by(|&a, &b| (xs[a] * w[a]).abs().total_cmp(&(xs[b] * w[b]).abs()))
            .unwrap();
        assert_eq!((err.input, err.index), (0, expected));
        assert!(
            (err.analytic - xs[expected] * w[expected]).abs() < 1e-5,
            "{err}"
        );
        assert!(
            (err.numeric - 2.0 * xs[expected] * w[expected]).abs() < 1e-2,
            "{err}"
        );
        assert!(
            err.to_string()
                .contains(&format!("input 0 element {expected}"))
        );
    }

    #[test]
    fn dropout_in_training_mode_is_reported_as_not_deterministic() {
        crate::manual_seed(7);
        let x =
            Tensor::from_vec(vec![0.5, -1.0, 2.0, 1.5, -0.7, 0.9, 3.0, -2.2], [8]);
        let err = gradcheck(|t| t[0].dropout(0.5, true), std::slice::from_ref(&x))
            .unwrap_err();
        let GradcheckError::NotDeterministic {
            index,
            first,
            second,
        } = err
        else {
            panic!("expected NotDeterministic, found {err:?}");
        };
        // Each call keeps an element (doubled, as 1 / (1 − p) = 2) or zeroes it.
        let kept = 2.0 * x.to_vec()[index];
        assert!(first != second, "{err}");
        assert!(
            [0.0, kept].contains(&first) && [0.0, kept].contains(&second),
            "{err}"
        );
        assert!(
            err.to_string().starts_with(&format!(
                "gradcheck: the function is not deterministic: called twice on the same inputs, output element {index} was {first}, then {second}"
            )),
            "{err}"
        );
        // In evaluation mode dropout is the identity, whose derivative passes.
        assert_eq!(gradcheck(|t| t[0].dropout(0.5, false), &[x]), Ok(()));
    }

    #[test]
    fn dropout_with_its_generator_seeded_in_the_function_passes() {
        // Seeded at every call, the mask is the same each time: a deterministic function,
        // whose derivative (the mask times 2) the finite differences confirm.
        let x =
            Tensor::from_vec(vec![0.5, -1.0, 2.0, 1.5, -0.7, 0.9, 3.0, -2.2], [8]);
        let seeded = |t: &[Tensor]| {
            crate::manual_seed(3);
            t[0].dropout(0.5, true)
        };
        assert_eq!(gradcheck(seeded, &[x]), Ok(()));
    }

    #[test]
    fn a_function_that_counts_its_calls_is_not_deterministic() {
        let calls = std::cell::Cell::new(0.0f32);
        let x = Tensor::from_vec(vec![1.5, -2.0], [2]);
        let drifting = |t: &[Tensor]| {
            calls.set(calls.get() + 1.0);
            &t[0] * calls.get()
        };
        let err = gradcheck(drifting, &[x]).unwrap_err();
        assert_eq!(
            err,
            GradcheckError::NotDeterministic {
                index: 0,
                first: 1.5,
                second: 3.0
            }
        );
        assert_eq!(
            err.to_string(),
            "gradcheck: the function is not deterministic: called twice on the same inputs, output element 0 was 1.5, then 3; finite differences would measure the change between calls, not the derivative. hint: fix the randomness for the check (dropout with training = false or p = 0, a fixed mask, or engine::manual_seed at the start of the function)"
        );
    }

    #[test]
    fn a_nan_on_one_call_only_is_not_deterministic_and_on_both_calls_it_is() {
        let calls = std::cell::Cell::new(0);
        let x = Tensor::from_vec(vec![1.5, -2.0], [2]);
        // NaN in element 1 on the first call, a number on the second.
        let flaky = |t: &[Tensor]| {
            calls.set(calls.get() + 1);
            let fill = if calls.get() == 1 { f32::NAN } else { 0.0 };
            let keep = Tensor::from_vec(vec![1.0, 0.0], [2]);
            keep.where_cond(&t[0], &Tensor::scalar(fill))
        };
        let err = gradcheck(flaky, std::slice::from_ref(&x)).unwrap_err();
        let GradcheckError::NotDeterministic {
            index,
            first,
            second,
        } = err
        else {
            panic!("expected NotDeterministic, found {err:?}");
        };
        assert_eq!(index, 1);
        assert!(first.is_nan() && second == 0.0);
        // The same NaN on every call is deterministic: it is not reported as such, but as
        // a mismatch, since a NaN derivative checks nothing.
        let always_nan = |t: &[Tensor]| &t[0] * f32::NAN;
        let err = gradcheck(always_nan, &[x]).unwrap_err();
        assert!(
            matches!(err, GradcheckError::Mismatch(_)),
            "expected a Mismatch, found {err:?}"
        );
    }

    #[test]
    fn a_mismatch_displays_as_before() {
        let x = Tensor::from_vec(vec![2.0], [1]);
        let err = gradcheck(|t| &t[0].detach() * &t[0], &[x]).unwrap_err();
        let GradcheckError::Mismatch(mismatch) = &err else {
            panic!("expected a Mismatch, found {err:?}");
        };
        assert_eq!(err.to_string(), mismatch.to_string());
        assert!(
            err.to_string()
                .starts_with("gradcheck: input 0 element 0: backward gives "),
            "{err}"
        );
    }

    fn weights(n: usize) -> Vec<f32> {
        Tensor::normal_with([n], 0.0, 1.0, &mut rng_from_seed(0x6752_6164)).to_vec()
    }
}
