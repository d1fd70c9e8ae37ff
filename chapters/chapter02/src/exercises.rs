//! Your solutions to the chapter 2 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter02 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use engine::Tensor;

use crate::Value;

/// Exercise 1. The logistic sigmoid `σ(x) = 1 / (1 + e⁻ˣ)` as a new op of the scalar
/// engine, built with [`Value::from_op`] and its local derivative.
pub fn sigmoid(x: &Value) -> Value {
    let _ = x;
    todo!(
        "exercise 1: compute s = σ(x), then Value::from_op(s, \"σ\", vec![(x.clone(), dσ/dx)])"
    )
}

/// Exercise 2. The gradient of `f` at the point `at` by central differences, one entry
/// per input.
pub fn numeric_gradient(f: impl Fn(&[Value]) -> Value, at: &[f64]) -> Vec<f64> {
    let _ = (f, at);
    todo!(
        "exercise 2: for each input i, (f(x + h·eᵢ) − f(x − h·eᵢ)) / 2h with h = 1e-5"
    )
}

/// Exercise 3. A neuron with two inputs: `tanh(x₁w₁ + x₂w₂ + b)`.
pub fn neuron(x: [&Value; 2], w: [&Value; 2], b: &Value) -> Value {
    let _ = (x, w, b);
    todo!(
        "exercise 3: two products, two sums and a tanh, with the scalar engine's ops"
    )
}

/// Exercise 4. `softplus(x) = ln(1 + eˣ)`, elementwise, as a tensor op whose derivative
/// you write by hand.
pub fn softplus(x: &Tensor) -> Tensor {
    let _ = x;
    todo!(
        "exercise 4: the value with tensor ops, then checks::with_derivative(&value, x, &derivative)"
    )
}
