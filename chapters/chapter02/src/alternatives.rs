//! A second solution to each chapter 2 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::Tensor;

use crate::Value;
use crate::checks::with_derivative;

/// Exercise 1, with the derivative written from `e⁻ˣ` instead of from the output:
/// `e⁻ˣ / (1 + e⁻ˣ)²`, and the value as `eˣ / (1 + eˣ)`.
pub fn sigmoid(x: &Value) -> Value {
    let e = (-x.data()).exp();
    let value = 1.0 / (1.0 + e);
    let slope = e / ((1.0 + e) * (1.0 + e));
    Value::from_op(value, "σ", vec![(x.clone(), slope)])
}

/// Exercise 2, one input at a time in a plain loop, each point built as `Value`s once
/// and the step added to a copy of the point.
pub fn numeric_gradient(f: impl Fn(&[Value]) -> Value, at: &[f64]) -> Vec<f64> {
    let h = 1e-5;
    let mut gradient = Vec::with_capacity(at.len());
    for i in 0..at.len() {
        let shifted = |delta: f64| -> f64 {
            let point: Vec<Value> = at
                .iter()
                .enumerate()
                .map(|(j, &v)| Value::new(if j == i { v + delta } else { v }))
                .collect();
            f(&point).data()
        };
        gradient.push((shifted(h) - shifted(-h)) / (2.0 * h));
    }
    gradient
}

/// Exercise 3, with the bias added first and `tanh` written through `exp`:
/// `tanh(n) = 1 − 2 / (e²ⁿ + 1)`, built from the engine's `exp`, `+` and `*` only, with
/// the division as one more op of its own.
pub fn neuron(x: [&Value; 2], w: [&Value; 2], b: &Value) -> Value {
    let n = &(b + &(x[0] * w[0])) + &(x[1] * w[1]);
    let e2n = (&n * &Value::new(2.0)).exp();
    let denominator = &e2n + &Value::new(1.0);
    // r = 1 / denominator, whose derivative is −1 / denominator².
    let d = denominator.data();
    let r =
        Value::from_op(1.0 / d, "1/x", vec![(denominator.clone(), -1.0 / (d * d))]);
    &Value::new(1.0) + &(&r * &Value::new(-2.0))
}

/// Exercise 4, with the numerically stable value `relu(x) + ln(1 + e^(−|x|))` and the
/// derivative written as `eˣ / (1 + eˣ)` instead of the engine's `sigmoid`.
pub fn softplus(x: &Tensor) -> Tensor {
    let value = x.relu() + ((-x.abs()).exp() + 1.0).log();
    let derivative = x.exp() / (x.exp() + 1.0);
    with_derivative(&value, x, &derivative)
}
