// ANCHOR: all
//! Reference solutions to the chapter 2 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use engine::Tensor;

use crate::Value;
use crate::checks::with_derivative;

// ANCHOR: sigmoid
/// Exercise 1. The logistic sigmoid `σ(x) = 1 / (1 + e⁻ˣ)` as a new op of the scalar
/// engine. Its local derivative is written with its output: `σ(x) (1 − σ(x))`.
pub fn sigmoid(x: &Value) -> Value {
    let s = 1.0 / (1.0 + (-x.data()).exp());
    Value::from_op(s, "σ", vec![(x.clone(), s * (1.0 - s))])
}
// ANCHOR_END: sigmoid

// ANCHOR: numeric_gradient
/// Exercise 2. The gradient of `f` at `at` by central differences, one input at a
/// time: `∂f/∂xᵢ ≈ (f(x + h eᵢ) − f(x − h eᵢ)) / 2h`, with `h = 1e-5` (in `f64` the
/// error is about `h²`, far below the tests' tolerance). Uses only the forward pass.
pub fn numeric_gradient(f: impl Fn(&[Value]) -> Value, at: &[f64]) -> Vec<f64> {
    let h = 1e-5;
    let f_at =
        |x: &[f64]| f(&x.iter().map(|&v| Value::new(v)).collect::<Vec<_>>()).data();
    (0..at.len())
        .map(|i| {
            let (mut plus, mut minus) = (at.to_vec(), at.to_vec());
            plus[i] += h;
            minus[i] -= h;
            (f_at(&plus) - f_at(&minus)) / (2.0 * h)
        })
        .collect()
}
// ANCHOR_END: numeric_gradient

// ANCHOR: neuron
/// Exercise 3. A neuron with two inputs: `tanh(x₁w₁ + x₂w₂ + b)`.
pub fn neuron(x: [&Value; 2], w: [&Value; 2], b: &Value) -> Value {
    let x1w1 = x[0] * w[0];
    let x2w2 = x[1] * w[1];
    let sum = &x1w1 + &x2w2;
    (&sum + b).tanh()
}
// ANCHOR_END: neuron

// ANCHOR: softplus
/// Exercise 4. `softplus(x) = ln(1 + eˣ)`, elementwise, as a tensor op with a
/// derivative written by hand: `σ(x)`, plugged in with [`with_derivative`].
pub fn softplus(x: &Tensor) -> Tensor {
    let value = (x.exp() + 1.0).log();
    with_derivative(&value, x, &x.sigmoid())
}
// ANCHOR_END: softplus
// ANCHOR_END: all
