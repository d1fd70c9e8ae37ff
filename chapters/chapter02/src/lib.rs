//! # Chapter 2: autograd from scratch
//!
//! The code of the second lesson (the page is `book/src/ch02-autograd.md`):
//!
//! 1. [`Value`]: a scalar autograd engine, a number in a graph with `+`, `×`,
//!    [`tanh`](Value::tanh) and [`exp`](Value::exp), each op recording its local
//!    derivatives ([`Value::from_op`]).
//! 2. [`Value::topological_order`]: the graph walked without recursion, and
//!    [`Value::backward`]: the chain rule along that order, accumulating.
//! 3. [`bugs`]: two deliberately wrong `backward`s, one that overwrites where it must
//!    accumulate and one that keeps stale intermediate gradients, with the numbers
//!    they get wrong.
//! 4. [`checks`]: the same expression in the scalar and the tensor engine, a bridge
//!    that hands the tensor engine a derivative written by hand
//!    ([`checks::with_derivative`]), and `engine::gradcheck` catching a wrong one.
//! 5. [`picture`]: the graph of the running example, drawn from a walk over it.
//! 6. [`tour`]: everything the page prints (`cargo run -p chapter02`).
//!
//! The running example is micrograd's `L = (a·b + c)·f` ([`example`]). The exercises
//! are in [`exercises`]: out of the box the reference solutions run; with `--features
//! exercises` your own `src/exercises.rs` does.

use engine::Tensor;
use engine::gradcheck::{GradcheckError, GradcheckOptions, gradcheck};

pub mod bugs;
pub mod checks;
pub mod picture;
mod scalar;

pub use scalar::{Value, short};

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter02: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

// ANCHOR: example
/// The running example, micrograd's `L = (a·b + c)·f`, with every value named.
pub struct Example {
    /// A leaf, 2.
    pub a: Value,
    /// A leaf, −3.
    pub b: Value,
    /// A leaf, 10.
    pub c: Value,
    /// A leaf, −2.
    pub f: Value,
    /// `e = a·b`.
    pub e: Value,
    /// `d = e + c`.
    pub d: Value,
    /// `L = d·f`, the output.
    pub l: Value,
}

/// Builds the running example at `a = 2, b = −3, c = 10, f = −2`.
pub fn example() -> Example {
    let a = Value::new(2.0);
    let b = Value::new(-3.0);
    let c = Value::new(10.0);
    let f = Value::new(-2.0);
    let e = &a * &b;
    let d = &e + &c;
    let l = &d * &f;
    Example {
        a,
        b,
        c,
        f,
        e,
        d,
        l,
    }
}
// ANCHOR_END: example

impl Example {
    /// Each value with its name, for printing and drawing.
    pub fn names(&self) -> [(&'static str, &Value); 7] {
        [
            ("a", &self.a),
            ("b", &self.b),
            ("c", &self.c),
            ("f", &self.f),
            ("e", &self.e),
            ("d", &self.d),
            ("L", &self.l),
        ]
    }

    /// The name of a value of the example (`"?"` for a value from elsewhere).
    pub fn name_of(&self, v: &Value) -> &'static str {
        self.names()
            .into_iter()
            .find(|(_, w)| w.same(v))
            .map_or("?", |(n, _)| n)
    }
}

/// The title of the chapter's figure.
pub const FIGURE_TITLE: &str = "L = (a·b + c)·f after L.backward()";

/// The figure `ch02-graph.svg`: the running example after `backward`, every box and
/// arrow found by walking its graph.
pub fn graph_figure() -> String {
    let x = example();
    x.l.backward();
    picture::graph_figure(FIGURE_TITLE, &x.l, &x.names())
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter02`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_forward
    let x = example();
    let order = x.l.topological_order();
    let names: Vec<&str> = order.iter().map(|v| x.name_of(v)).collect();
    line(format!("topological order: {}", names.join(" ")));
    x.l.backward();
    for v in order.iter().rev() {
        line(format!("{} = {v:?}", x.name_of(v)));
    }
    // ANCHOR_END: tour_forward

    // ANCHOR: tour_reuse
    let a = Value::new(3.0);
    let b = &a + &a;
    b.backward();
    line(format!(
        "b = a + a = {}: backward gives ∂b/∂a = {}",
        short(b.data()),
        short(a.grad())
    ));
    let a = Value::new(3.0);
    let b = &a + &a;
    bugs::backward_overwriting(&b);
    line(format!(
        "b = a + a = {}: backward_overwriting gives ∂b/∂a = {}",
        short(b.data()),
        short(a.grad())
    ));
    // ANCHOR_END: tour_reuse

    // ANCHOR: tour_twice
    let grads = |x: &Example| {
        let shown = [&x.a, &x.b, &x.c, &x.f, &x.e, &x.d];
        let parts: Vec<String> = shown
            .iter()
            .map(|v| format!("{} {}", x.name_of(v), short(v.grad())))
            .collect();
        parts.join(", ")
    };
    let x = example();
    x.l.backward();
    line(format!("backward once:                    {}", grads(&x)));
    x.l.backward();
    line(format!("backward twice:                   {}", grads(&x)));
    let x = example();
    bugs::backward_keeping_stale_gradients(&x.l);
    line(format!("stale backward once:              {}", grads(&x)));
    bugs::backward_keeping_stale_gradients(&x.l);
    line(format!("stale backward twice:             {}", grads(&x)));
    // ANCHOR_END: tour_twice

    // ANCHOR: tour_tensor
    let leaf = |v: f32| Tensor::scalar(v).requires_grad_();
    let (a, b, c, f) = (leaf(2.0), leaf(-3.0), leaf(10.0), leaf(-2.0));
    let e = &a * &b;
    let d = &e + &c;
    let l = &d * &f;
    d.retain_grad(); // keep this intermediate gradient; e's is dropped
    l.backward();
    let item =
        |t: &Tensor| short(f64::from(t.grad().expect("a kept gradient").item()));
    line(format!(
        "tensor engine: a {}, b {}, c {}, f {}, d {}",
        item(&a),
        item(&b),
        item(&c),
        item(&f),
        item(&d)
    ));
    let dropped = e.grad().expect_err("an intermediate gradient is dropped");
    // The message is long: broken at spaces to the page's width.
    let message = format!("e.grad(): {dropped}");
    line(lesson::wrap(&message, lesson::COLUMNS));
    // ANCHOR_END: tour_tensor

    // ANCHOR: tour_broadcast
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let bias = Tensor::zeros([3]).requires_grad_();
    let y = &x + &bias; // [2, 3] + [3] -> [2, 3]
    y.retain_grad();
    (&y * &y).sum().backward();
    line(format!(
        "y.shape() = {:?}, bias.shape() = {:?}",
        y.shape(),
        bias.shape()
    ));
    line(format!("y.grad() = {}", y.grad().expect("retained")));
    line(format!("bias.grad() = {}", bias.grad().expect("a leaf")));
    let u = Tensor::from_vec(vec![1.0, 2.0], [2, 1]).requires_grad_();
    let v = Tensor::from_vec(vec![10.0, 20.0, 30.0], [1, 3]).requires_grad_();
    let outer = &u * &v; // [2, 1] × [1, 3] -> [2, 3]
    outer.sum().backward();
    line(format!("outer.shape() = {:?}", outer.shape()));
    line(format!("u.grad() = {}", u.grad().expect("a leaf")));
    line(format!("v.grad() = {}", v.grad().expect("a leaf")));
    // ANCHOR_END: tour_broadcast

    // ANCHOR: tour_compare
    let (a, b) = (0.8, -0.6);
    let by_scalar = checks::scalar_gradients(a, b);
    let by_tensor = checks::tensor_gradients(a as f32, b as f32);
    line(format!(
        "scalar engine (f64): ∂/∂a = {:.7}, ∂/∂b = {:.7}",
        by_scalar[0], by_scalar[1]
    ));
    line(format!(
        "tensor engine (f32): ∂/∂a = {:.7}, ∂/∂b = {:.7}",
        by_tensor[0], by_tensor[1]
    ));
    let gap = (0..2)
        .map(|i| (by_scalar[i] - f64::from(by_tensor[i])).abs())
        .fold(0.0, f64::max);
    line(format!("largest difference: {gap:.1e}"));
    // ANCHOR_END: tour_compare

    // ANCHOR: tour_gradcheck
    line(format!("{:?}", GradcheckOptions::default()));
    let a = Tensor::from_vec(vec![0.8, -1.2, 0.3], [3]);
    let b = Tensor::from_vec(vec![-0.6, 0.4, 1.5], [3]);
    let result = gradcheck(|t| checks::expression_tensor(&t[0], &t[1]), &[a, b]);
    line(format!("gradcheck(expression_tensor): {result:?}"));
    let x = [Tensor::from_vec(vec![-1.5, -0.4, 0.0, 0.7, 2.0], [5])]; // one input
    let scalar_tanh =
        |t: &[Tensor]| checks::tensor_op_from_scalar(&t[0], Value::tanh);
    line(format!(
        "gradcheck(scalar tanh): {:?}",
        gradcheck(scalar_tanh, &x)
    ));
    // ANCHOR_END: tour_gradcheck

    // ANCHOR: tour_wrong
    let wrong = |t: &[Tensor]| {
        checks::tensor_op_from_scalar(&t[0], checks::tanh_with_wrong_derivative)
    };
    let Err(GradcheckError::Mismatch(mismatch)) = gradcheck(wrong, &x) else {
        panic!("1 − x² is not tanh's derivative");
    };
    let report = format!("gradcheck(tanh with 1 − x²): {mismatch}");
    line(lesson::wrap(&report, lesson::COLUMNS));
    line(format!(
        "backward / finite differences = {:.2}",
        mismatch.analytic / mismatch.numeric
    ));
    let x0 = f64::from(x[0].to_vec()[mismatch.index]);
    let (right, wrong_slope) = (1.0 - x0.tanh().powi(2), 1.0 - x0 * x0);
    line(format!(
        "at x = {x0}: 1 − tanh²(x) = {right:.4}, 1 − x² = {wrong_slope}, ratio {:.2}",
        wrong_slope / right
    ));
    let zero = Tensor::from_vec(vec![0.0], [1]);
    line(format!(
        "gradcheck(tanh with 1 − x², at 0 only): {:?}",
        gradcheck(wrong, &[zero])
    ));
    // ANCHOR_END: tour_wrong

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch02-autograd.md")]
struct Book;
