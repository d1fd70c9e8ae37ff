//! Checking gradients: the scalar engine against the tensor engine on the same
//! expression, a bridge that hands the tensor engine a derivative written by hand (so
//! that `engine::gradcheck` can check it), and a deliberately wrong derivative for it
//! to catch.

use engine::Tensor;

use crate::scalar::Value;

// ANCHOR: same_expression
/// `tanh(a·b + a) · exp(b)` in the scalar engine: `a` is used twice.
pub fn expression(a: &Value, b: &Value) -> Value {
    let ab = a * b;
    let inner = &ab + a;
    &inner.tanh() * &b.exp()
}

/// The same expression in the tensor engine.
pub fn expression_tensor(a: &Tensor, b: &Tensor) -> Tensor {
    (a * b + a).tanh() * b.exp()
}
// ANCHOR_END: same_expression

// ANCHOR: both_engines
/// `[∂/∂a, ∂/∂b]` of [`expression`] at `(a, b)`, from the scalar engine (in `f64`).
pub fn scalar_gradients(a: f64, b: f64) -> [f64; 2] {
    let (a, b) = (Value::new(a), Value::new(b));
    expression(&a, &b).backward();
    [a.grad(), b.grad()]
}

/// `[∂/∂a, ∂/∂b]` of [`expression_tensor`] at `(a, b)`, from the tensor engine (in
/// `f32`), with `a` and `b` as 0-dimensional tensors.
pub fn tensor_gradients(a: f32, b: f32) -> [f32; 2] {
    let a = Tensor::scalar(a).requires_grad_();
    let b = Tensor::scalar(b).requires_grad_();
    expression_tensor(&a, &b).backward();
    let grad = |t: &Tensor| t.grad().expect("a leaf that requires a gradient").item();
    [grad(&a), grad(&b)]
}
// ANCHOR_END: both_engines

// ANCHOR: with_derivative
/// The values of `value`, with the derivative `derivative` with respect to `x`
/// (elementwise): `value + (x·d − x·d)`, where only the first `x·d` is recorded. The
/// bracket is exactly zero, so the forward pass sees `value`; `backward` sees `∂/∂x
/// (x·d) = d`, the derivative we chose. This is how a derivative written by hand is
/// plugged into the tensor engine.
///
/// # Panics
/// When the three shapes differ.
pub fn with_derivative(value: &Tensor, x: &Tensor, derivative: &Tensor) -> Tensor {
    assert!(
        value.shape() == x.shape() && derivative.shape() == x.shape(),
        "with_derivative: value {:?}, x {:?} and derivative {:?} must have one shape",
        value.shape(),
        x.shape(),
        derivative.shape()
    );
    let tracked = x * derivative.detach();
    value.detach() + (&tracked - tracked.detach())
}
// ANCHOR_END: with_derivative

// ANCHOR: from_scalar
/// Applies the scalar function `f` to every element of `x`, as a tensor op whose
/// values *and* derivatives come from the scalar engine (one `backward` per element):
/// the way to check a scalar derivative with [`engine::gradcheck::gradcheck`].
pub fn tensor_op_from_scalar(x: &Tensor, f: impl Fn(&Value) -> Value) -> Tensor {
    let (mut values, mut derivatives) = (Vec::new(), Vec::new());
    for xi in x.to_vec() {
        let input = Value::new(f64::from(xi));
        let output = f(&input);
        output.backward();
        values.push(output.data() as f32);
        derivatives.push(input.grad() as f32);
    }
    let value = Tensor::from_vec(values, x.shape());
    let derivative = Tensor::from_vec(derivatives, x.shape());
    with_derivative(&value, x, &derivative)
}
// ANCHOR_END: from_scalar

// ANCHOR: wrong_tanh
/// **Deliberately wrong.** `tanh` with its derivative written with the *input*,
/// `1 − x²`, where `1 − tanh²(x)` belongs: the mistake of forgetting which value the
/// formula is about. Right at `x = 0` only.
pub fn tanh_with_wrong_derivative(x: &Value) -> Value {
    let t = x.data().tanh();
    Value::from_op(t, "tanh", vec![(x.clone(), 1.0 - x.data() * x.data())])
}
// ANCHOR_END: wrong_tanh
