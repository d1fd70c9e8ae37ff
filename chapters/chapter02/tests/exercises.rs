//! The exercises of chapter 2, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use chapter02::Value;
use chapter02::exercises::{neuron, numeric_gradient, sigmoid, softplus};
use engine::Tensor;
use engine::gradcheck::gradcheck;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn exercise_1_sigmoid_has_the_right_value_and_local_derivative() {
    // σ(0) = 1/2, σ'(0) = 1/4; σ(ln 3) = 1/(1 + 1/3) = 3/4, σ'(ln 3) = 3/4 · 1/4 = 3/16.
    for (x0, value, slope) in [
        (0.0, 0.5, 0.25),
        (3f64.ln(), 0.75, 0.1875),
        (-(3f64.ln()), 0.25, 0.1875),
    ] {
        let x = Value::new(x0);
        let s = sigmoid(&x);
        assert!(close(s.data(), value, 1e-12), "σ({x0}) = {}", s.data());
        s.backward();
        assert!(close(x.grad(), slope, 1e-12), "σ'({x0}) = {}", x.grad());
    }
}

#[test]
fn exercise_1_sigmoid_composes_with_the_other_ops() {
    // L = σ(x)·x at x = ln 3: L' = σ'(x)·x + σ(x) = (3/16) ln 3 + 3/4.
    let x = Value::new(3f64.ln());
    let l = &sigmoid(&x) * &x;
    l.backward();
    assert!(
        close(x.grad(), 0.1875 * 3f64.ln() + 0.75, 1e-12),
        "{}",
        x.grad()
    );
}

#[test]
fn exercise_2_numeric_gradient_matches_hand_derived_gradients() {
    // a·b + c at (2, −3, 10): (b, a, 1) = (−3, 2, 1).
    let f = |v: &[Value]| &(&v[0] * &v[1]) + &v[2];
    let g = numeric_gradient(f, &[2.0, -3.0, 10.0]);
    assert_eq!(g.len(), 3);
    for (got, want) in g.iter().zip([-3.0, 2.0, 1.0]) {
        assert!(close(*got, want, 1e-5), "{g:?}");
    }
    // tanh at 0.5: 1 − tanh²(0.5) = 0.786447732978…
    let g = numeric_gradient(|v: &[Value]| v[0].tanh(), &[0.5]);
    assert!(close(g[0], 0.786_447_732_978_147_6, 1e-5), "{g:?}");
    // x·eˣ at 1: (1 + x)eˣ = 2e.
    let g = numeric_gradient(|v: &[Value]| &v[0] * &v[0].exp(), &[1.0]);
    assert!(close(g[0], 2.0 * std::f64::consts::E, 1e-5), "{g:?}");
}

#[test]
fn exercise_2_numeric_gradient_is_zero_for_an_input_the_function_ignores() {
    // e^a with a second input that plays no part: its gradient is exactly 0.
    let g = numeric_gradient(|v: &[Value]| v[0].exp(), &[0.0, 5.0]);
    assert!(close(g[0], 1.0, 1e-5) && close(g[1], 0.0, 1e-12), "{g:?}");
}

#[test]
fn exercise_3_neuron_has_the_hand_derived_value_and_gradients() {
    // n = 2·(−3) + 0·1 + (6 + asinh 1) = asinh 1, and tanh(asinh 1) = 1/√2, so
    // ∂o/∂n = 1 − 1/2 = 1/2: ∂o/∂x₁ = w₁/2, ∂o/∂w₁ = x₁/2, ∂o/∂x₂ = w₂/2, ∂o/∂w₂ = x₂/2.
    let (x1, x2) = (Value::new(2.0), Value::new(0.0));
    let (w1, w2) = (Value::new(-3.0), Value::new(1.0));
    let b = Value::new(6.0 + 1f64.asinh());
    let o = neuron([&x1, &x2], [&w1, &w2], &b);
    assert!(
        close(o.data(), std::f64::consts::FRAC_1_SQRT_2, 1e-12),
        "{}",
        o.data()
    );
    o.backward();
    let grads = [&x1, &w1, &x2, &w2, &b].map(Value::grad);
    for (got, want) in grads.iter().zip([-1.5, 1.0, 0.5, 0.0, 0.5]) {
        assert!(close(*got, want, 1e-12), "x₁ w₁ x₂ w₂ b: {grads:?}");
    }
}

#[test]
fn exercise_4_softplus_has_the_right_values_and_derivative() {
    // softplus(0) = ln 2, softplus(ln 3) = ln 4, softplus(−ln 3) = ln(4/3);
    // the derivative is σ: 1/2, 3/4, 1/4.
    let l3 = 3f32.ln();
    let x = Tensor::from_vec(vec![0.0, l3, -l3], [3]).requires_grad_();
    let y = softplus(&x);
    let want = [2f32.ln(), 4f32.ln(), (4f32 / 3.0).ln()];
    for (got, want) in y.to_vec().iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{y}");
    }
    y.sum().backward();
    let g = x.grad().expect("softplus must pass the gradient to x");
    for (got, want) in g.to_vec().iter().zip([0.5, 0.75, 0.25]) {
        assert!((got - want).abs() < 1e-6, "{g}");
    }
    let points = Tensor::from_vec(vec![-2.0, -0.5, 0.0, 1.0, 3.0], [5]);
    assert_eq!(gradcheck(|t| softplus(&t[0]), &[points]), Ok(()));
}
