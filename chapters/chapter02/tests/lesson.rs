//! The lesson's code: the scalar engine's forward values and hand-derived gradients, its
//! topological order, the two deliberately wrong `backward`s held to the wrong numbers the
//! page quotes, the scalar engine against the tensor engine and finite differences, the
//! bridge for hand-written derivatives, gradcheck catching a wrong one, and the graph
//! layout of the figure.

use chapter02::bugs::{backward_keeping_stale_gradients, backward_overwriting};
use chapter02::checks::{
    expression, expression_tensor, scalar_gradients, tanh_with_wrong_derivative,
    tensor_gradients, tensor_op_from_scalar, with_derivative,
};
use chapter02::picture::graph_layout;
use chapter02::{Value, example, short};
use engine::gradcheck::{GradcheckError, gradcheck};
use engine::{NoGrad, Tensor};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// The gradients of the example's values, in the order a, b, c, f, e, d, L.
fn example_grads(x: &chapter02::Example) -> [f64; 7] {
    [&x.a, &x.b, &x.c, &x.f, &x.e, &x.d, &x.l].map(Value::grad)
}

#[test]
fn the_forward_pass_computes_the_example() {
    let x = example();
    assert_eq!(x.e.data(), -6.0);
    assert_eq!(x.d.data(), 4.0);
    assert_eq!(x.l.data(), -8.0);
    assert_eq!((x.e.op(), x.d.op(), x.l.op()), ("×", "+", "×"));
    assert!(x.a.is_leaf() && !x.l.is_leaf());
    // Nothing is differentiated before backward.
    assert_eq!(example_grads(&x), [0.0; 7]);
}

#[test]
fn backward_gives_the_hand_derived_gradients() {
    // ∂L/∂f = d = 4, ∂L/∂d = f = −2, ∂L/∂c = ∂L/∂e = ∂L/∂d = −2,
    // ∂L/∂a = ∂L/∂e · b = 6, ∂L/∂b = ∂L/∂e · a = −4.
    let x = example();
    x.l.backward();
    assert_eq!(example_grads(&x), [6.0, -4.0, -2.0, 4.0, -2.0, -2.0, 1.0]);
}

#[test]
fn every_op_records_its_local_derivatives() {
    let (a, b) = (Value::new(2.0), Value::new(-3.0));
    let locals = |v: &Value| v.inputs().map(|(_, d)| d).collect::<Vec<_>>();
    assert_eq!(locals(&(&a + &b)), vec![1.0, 1.0]);
    assert_eq!(locals(&(&a * &b)), vec![-3.0, 2.0]);
    let t = a.tanh();
    assert!(close(locals(&t)[0], 1.0 - 2f64.tanh().powi(2), 1e-15));
    assert_eq!(locals(&a.exp()), vec![2f64.exp()]);
    assert!(t.inputs().all(|(input, _)| input.same(&a)));
}

#[test]
fn the_topological_order_puts_every_value_after_its_inputs_once() {
    // A graph with shared values at several depths: a feeds three ops.
    let a = Value::new(0.5);
    let b = Value::new(-1.5);
    let ab = &a * &b;
    let s = &ab + &a;
    let t = s.tanh();
    let u = &t * &a;
    let root = &(&u + &s) + &ab.exp();
    let order = root.topological_order();
    assert_eq!(order.len(), 9, "a, b, ab, s, t, u, u + s, exp(ab), root");
    for (i, v) in order.iter().enumerate() {
        assert_eq!(order.iter().filter(|w| w.same(v)).count(), 1, "once each");
        for (input, _) in v.inputs() {
            let j = order
                .iter()
                .position(|w| w.same(input))
                .expect("inputs are listed");
            assert!(j < i, "an input comes before its use");
        }
    }
    assert!(order.last().expect("not empty").same(&root));
}

#[test]
fn the_example_is_ordered_depth_first_inputs_in_argument_order() {
    let x = example();
    let order: Vec<&str> =
        x.l.topological_order()
            .iter()
            .map(|v| x.name_of(v))
            .collect();
    assert_eq!(order, ["a", "b", "e", "c", "d", "f", "L"]);
}

#[test]
fn a_value_used_twice_receives_both_contributions() {
    let a = Value::new(3.0);
    let b = &a + &a;
    b.backward();
    assert_eq!(a.grad(), 2.0);

    let a = Value::new(3.0);
    let square = &a * &a;
    square.backward();
    assert_eq!(a.grad(), 6.0, "d(a²)/da = 2a");
}

#[test]
fn the_overwriting_backward_loses_a_contribution_as_the_page_says() {
    let a = Value::new(3.0);
    let b = &a + &a;
    backward_overwriting(&b);
    assert_eq!(a.grad(), 1.0, "the page quotes ∂b/∂a = 1");

    let a = Value::new(3.0);
    let square = &a * &a;
    backward_overwriting(&square);
    assert_eq!(a.grad(), 3.0, "a instead of 2a");

    // Where no value is used twice, it agrees with backward.
    let x = example();
    backward_overwriting(&x.l);
    assert_eq!(example_grads(&x), [6.0, -4.0, -2.0, 4.0, -2.0, -2.0, 1.0]);
}

#[test]
fn backward_twice_adds_one_more_call_to_the_leaves_only() {
    let x = example();
    x.l.backward();
    x.l.backward();
    // Leaves doubled; intermediate values hold one call's gradient.
    assert_eq!(example_grads(&x), [12.0, -8.0, -4.0, 8.0, -2.0, -2.0, 1.0]);
}

#[test]
fn the_stale_backward_is_right_once_and_wrong_twice_as_the_page_says() {
    let x = example();
    backward_keeping_stale_gradients(&x.l);
    assert_eq!(example_grads(&x), [6.0, -4.0, -2.0, 4.0, -2.0, -2.0, 1.0]);
    backward_keeping_stale_gradients(&x.l);
    // d's stale −2 is passed on with the new −2: e and c get −4 more, and e's −6 reaches
    // a as 18 (not 6) and b as −12 (not −4).
    assert_eq!(example_grads(&x), [24.0, -16.0, -6.0, 8.0, -6.0, -4.0, 1.0]);
}

#[test]
fn zero_grad_on_the_leaves_makes_the_next_backward_a_fresh_one() {
    let x = example();
    x.l.backward();
    for leaf in [&x.a, &x.b, &x.c, &x.f] {
        leaf.zero_grad();
    }
    x.l.backward();
    assert_eq!(example_grads(&x), [6.0, -4.0, -2.0, 4.0, -2.0, -2.0, 1.0]);
}

#[test]
fn backward_on_a_leaf_accumulates_one() {
    let a = Value::new(5.0);
    a.backward();
    a.backward();
    assert_eq!(a.grad(), 2.0);
}

#[test]
fn a_chain_of_a_hundred_thousand_ops_neither_overflows_backward_nor_drop() {
    // Recursion would need one stack frame per op, in the walk and in the drop.
    let x = Value::new(0.5);
    let mut y = x.clone();
    for _ in 0..100_000 {
        y = &y * &Value::new(1.0);
    }
    assert_eq!(y.topological_order().len(), 200_001);
    y.backward();
    assert_eq!(x.grad(), 1.0);
    drop(y);
    assert!(x.is_leaf());
}

#[test]
fn tanh_and_exp_derivatives_match_central_differences() {
    let h = 1e-6;
    for x0 in [-2.0, -0.3, 0.0, 0.7, 1.9] {
        for f in [Value::tanh, Value::exp] {
            let x = Value::new(x0);
            f(&x).backward();
            let numeric = (f(&Value::new(x0 + h)).data()
                - f(&Value::new(x0 - h)).data())
                / (2.0 * h);
            assert!(
                close(x.grad(), numeric, 1e-8),
                "at {x0}: {} vs {numeric}",
                x.grad()
            );
        }
    }
}

#[test]
fn the_scalar_and_the_tensor_engine_agree_on_the_expression() {
    for (a, b) in [(0.8, -0.6), (-1.2, 0.4), (0.3, 1.5), (2.0, -2.0)] {
        let s = scalar_gradients(a, b);
        let t = tensor_gradients(a as f32, b as f32);
        for i in 0..2 {
            let tol = 1e-5 * s[i].abs().max(1.0);
            assert!(
                close(s[i], f64::from(t[i]), tol),
                "({a}, {b}) input {i}: {} vs {}",
                s[i],
                t[i]
            );
        }
    }
}

#[test]
fn the_expression_has_the_hand_derived_gradient() {
    // g = tanh(ab + a)·eᵇ: ∂g/∂a = (1 − tanh²(ab + a))(b + 1)eᵇ,
    // ∂g/∂b = (1 − tanh²(ab + a)) a eᵇ + tanh(ab + a) eᵇ.
    let (a, b) = (0.8f64, -0.6f64);
    let t = (a * b + a).tanh();
    let da = (1.0 - t * t) * (b + 1.0) * b.exp();
    let db = (1.0 - t * t) * a * b.exp() + t * b.exp();
    let [ga, gb] = scalar_gradients(a, b);
    assert!(
        close(ga, da, 1e-12) && close(gb, db, 1e-12),
        "{ga} {gb} vs {da} {db}"
    );
    let g = expression(&Value::new(a), &Value::new(b));
    assert!(close(g.data(), t * b.exp(), 1e-15));
}

#[test]
fn gradcheck_accepts_the_tensor_expression_and_the_scalar_tanh() {
    let a = Tensor::from_vec(vec![0.8, -1.2, 0.3], [3]);
    let b = Tensor::from_vec(vec![-0.6, 0.4, 1.5], [3]);
    assert_eq!(
        gradcheck(|t| expression_tensor(&t[0], &t[1]), &[a, b]),
        Ok(())
    );
    let x = [Tensor::from_vec(vec![-1.5, -0.4, 0.0, 0.7, 2.0], [5])];
    assert_eq!(
        gradcheck(|t| tensor_op_from_scalar(&t[0], Value::tanh), &x),
        Ok(())
    );
    assert_eq!(
        gradcheck(|t| tensor_op_from_scalar(&t[0], Value::exp), &x),
        Ok(())
    );
}

#[test]
fn gradcheck_catches_the_wrong_tanh_derivative_except_at_zero() {
    let xs = [-1.5f32, -0.4, 0.0, 0.7, 2.0];
    let x = Tensor::from_vec(xs.to_vec(), [5]);
    let wrong =
        |t: &[Tensor]| tensor_op_from_scalar(&t[0], tanh_with_wrong_derivative);
    let Err(GradcheckError::Mismatch(mismatch)) = gradcheck(wrong, &[x]) else {
        panic!("1 − x² is not tanh's derivative");
    };
    // Both sides are scaled by the same random weight, so their ratio is the ratio of the
    // wrong derivative to the right one at that element.
    let x0 = xs[mismatch.index];
    let ratio = (1.0 - x0 * x0) / (1.0 - x0.tanh().powi(2));
    assert!(
        (mismatch.analytic / mismatch.numeric - ratio).abs() < 1e-2 * ratio.abs(),
        "{mismatch}"
    );
    assert_eq!(
        (mismatch.input, mismatch.index),
        (0, 4),
        "the page names element 4 (x = 2)"
    );
    // At 0 the two formulas agree: one point proves little.
    let zero = Tensor::from_vec(vec![0.0], [1]);
    assert_eq!(gradcheck(wrong, &[zero]), Ok(()));
}

#[test]
fn the_wrong_tanh_has_the_right_value_and_the_wrong_local_derivative() {
    let x = Value::new(0.5);
    let t = tanh_with_wrong_derivative(&x);
    assert_eq!(t.data(), 0.5f64.tanh());
    t.backward();
    assert_eq!(x.grad(), 0.75, "1 − 0.5²");
    assert!((x.grad() - (1.0 - 0.5f64.tanh().powi(2))).abs() > 0.03);
}

#[test]
fn with_derivative_keeps_the_value_and_carries_the_chosen_derivative() {
    let x = Tensor::from_vec(vec![1.0, -2.0, 3.0], [3]).requires_grad_();
    let value = Tensor::from_vec(vec![0.1, 0.2, 0.3], [3]);
    let chosen = Tensor::from_vec(vec![5.0, 6.0, 7.0], [3]);
    let y = with_derivative(&value, &x, &chosen);
    assert_eq!(y.to_vec(), vec![0.1, 0.2, 0.3], "exactly the value");
    (&y * &Tensor::from_vec(vec![1.0, 10.0, 100.0], [3]))
        .sum()
        .backward();
    assert_eq!(x.grad().expect("a leaf").to_vec(), vec![5.0, 60.0, 700.0]);
}

#[test]
#[should_panic(
    expected = "with_derivative: value [2], x [3] and derivative [3] must have one shape"
)]
fn with_derivative_refuses_shapes_that_differ() {
    let x = Tensor::zeros([3]);
    let _ = with_derivative(&Tensor::zeros([2]), &x, &Tensor::zeros([3]));
}

#[test]
fn the_tensor_engine_drops_intermediate_gradients_unless_retained() {
    let leaf = |v: f32| Tensor::scalar(v).requires_grad_();
    let (a, b, c, f) = (leaf(2.0), leaf(-3.0), leaf(10.0), leaf(-2.0));
    let e = &a * &b;
    let d = &e + &c;
    d.retain_grad();
    let l = &d * &f;
    l.backward();
    let grad = |t: &Tensor| t.grad().expect("kept").item();
    assert_eq!(
        [grad(&a), grad(&b), grad(&c), grad(&f), grad(&d)],
        [6.0, -4.0, -2.0, 4.0, -2.0]
    );
    assert_eq!(e.grad().unwrap_err(), NoGrad::NotALeaf);
}

#[test]
fn broadcasting_sums_the_gradient_back_to_each_input_shape() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let bias = Tensor::zeros([3]).requires_grad_();
    let y = &x + &bias;
    (&y * &y).sum().backward();
    // ∂/∂bias_j = Σᵢ 2(x_ij + bias_j): the column sums of 2x.
    assert_eq!(
        bias.grad().expect("a leaf").to_vec(),
        vec![10.0, 14.0, 18.0]
    );

    let u = Tensor::from_vec(vec![1.0, 2.0], [2, 1]).requires_grad_();
    let v = Tensor::from_vec(vec![10.0, 20.0, 30.0], [1, 3]).requires_grad_();
    (&u * &v).sum().backward();
    let (gu, gv) = (u.grad().expect("a leaf"), v.grad().expect("a leaf"));
    assert_eq!((gu.shape(), gu.to_vec()), (&[2, 1][..], vec![60.0, 60.0]));
    assert_eq!(
        (gv.shape(), gv.to_vec()),
        (&[1, 3][..], vec![3.0, 3.0, 3.0])
    );
}

#[test]
fn the_graph_layout_comes_from_walking_the_example() {
    let x = example();
    x.l.backward();
    let (nodes, edges) = graph_layout(&x.l, &x.names());
    let expected = [
        ("a\ndata 2 | grad 6", (0, 0)),
        ("b\ndata -3 | grad -4", (0, 1)),
        ("e = a × b\ndata -6 | grad -2", (1, 0)),
        ("c\ndata 10 | grad -2", (1, 1)),
        ("d = e + c\ndata 4 | grad -2", (2, 0)),
        ("f\ndata -2 | grad 4", (2, 1)),
        ("L = d × f\ndata -8 | grad 1", (3, 0)),
    ];
    let found: Vec<(&str, (u32, u32))> =
        nodes.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    assert_eq!(found, expected);
    assert_eq!(edges, [(0, 2), (1, 2), (2, 4), (3, 4), (4, 6), (5, 6)]);
}

#[test]
fn the_graph_layout_names_unnamed_values_and_draws_a_reused_value_twice() {
    let a = Value::new(1.5);
    let b = &a + &a;
    let t = b.tanh();
    let (nodes, edges) = graph_layout(&t, &[("a", &a)]);
    let texts: Vec<&str> = nodes
        .iter()
        .map(|(s, _)| s.split('\n').next().unwrap_or(""))
        .collect();
    assert_eq!(texts, ["a", "v1 = a + a", "v2 = tanh(v1)"]);
    assert_eq!(edges, [(0, 1), (0, 1), (1, 2)]);
    let places: Vec<(u32, u32)> = nodes.iter().map(|(_, p)| *p).collect();
    assert_eq!(places, [(0, 0), (1, 0), (2, 0)]);
}

#[test]
fn short_numbers_drop_trailing_zeros_and_negative_zero() {
    assert_eq!(short(6.0), "6");
    assert_eq!(short(-0.5), "-0.5");
    assert_eq!(short(std::f64::consts::FRAC_1_SQRT_2), "0.7071");
    assert_eq!(short(-0.00001), "0");
    assert_eq!(short(120.0), "120");
    assert_eq!(format!("{:?}", Value::new(-8.0)), "Value(data=-8, grad=0)");
}
