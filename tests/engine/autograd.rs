//! The semantics of `backward`: accumulation, pruning, detaching, repeated calls, depth.

use engine::{NoGrad, Tensor, no_grad};

fn leaf(values: &[f32]) -> Tensor {
    Tensor::from_vec(values.to_vec(), [values.len()]).requires_grad_()
}

#[test]
fn x_plus_x_accumulates_both_uses() {
    // d(x + x)/dx = 2
    let x = leaf(&[1.0, -3.0]);
    (&x + &x).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![2.0, 2.0]);
}

#[test]
fn weight_used_twice_gets_both_gradients() {
    // L = Σ w·a + Σ w·b  ⇒  dL/dw = a + b
    let w = leaf(&[0.5, 2.0]);
    let a = Tensor::from_vec(vec![1.0, 2.0], [2]);
    let b = Tensor::from_vec(vec![10.0, 20.0], [2]);
    ((&w * &a).sum() + (&w * &b).sum()).backward();
    assert_eq!(w.grad().unwrap().to_vec(), vec![11.0, 22.0]);
}

#[test]
fn shared_subexpression_is_differentiated_once_per_path() {
    // y = x², z = y·y = x⁴  ⇒  dz/dx = 4x³
    let x = leaf(&[2.0]);
    let y = x.square();
    (&y * &y).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![32.0]);
}

#[test]
fn no_graph_is_recorded_without_an_input_that_requires_grad() {
    let a = Tensor::ones([3]);
    let y = (&a * 2.0).exp().sum();
    assert!(y.is_leaf());
    assert!(!y.requires_grad());
}

#[test]
fn a_graph_is_recorded_when_one_input_requires_grad() {
    let w = leaf(&[1.0]);
    let y = &Tensor::ones([1]) * &w;
    assert!(!y.is_leaf());
    assert!(y.requires_grad());
}

#[test]
fn no_grad_scope_records_nothing_and_restores_the_mode() {
    let w = leaf(&[1.0]);
    let inside = no_grad(|| &w * 3.0);
    assert!(!inside.requires_grad());
    assert!(engine::grad_mode::is_enabled());
    assert!((&w * 3.0).requires_grad());
}

#[test]
fn no_grad_restores_the_mode_after_a_panic() {
    let caught = std::panic::catch_unwind(|| no_grad(|| panic!("inside")));
    assert!(caught.is_err());
    assert!(engine::grad_mode::is_enabled());
}

#[test]
fn detach_stops_the_gradient() {
    // L = Σ x · detach(x)  ⇒  dL/dx = detach(x) = x (only one path counts)
    let x = leaf(&[3.0, -1.0]);
    (&x * &x.detach()).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![3.0, -1.0]);
}

#[test]
fn zero_grad_clears_the_accumulated_gradient() {
    let x = leaf(&[1.0]);
    (&x * 5.0).sum().backward();
    x.zero_grad();
    assert_eq!(x.grad().unwrap_err(), NoGrad::NotYetComputed);
    (&x * 7.0).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![7.0]);
}

#[test]
fn backward_twice_adds_the_same_gradient_again() {
    // y = x², z = y + y: each call adds dz/dx = 4x; intermediate gradients restart at zero,
    // so the second call must not double-count y's gradient (the classic bug).
    let x = leaf(&[1.5]);
    let y = x.square();
    let z = (&y + &y).sum();
    z.backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![6.0]);
    z.backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![12.0]);
}

#[test]
fn backward_with_an_upstream_gradient_weights_each_output() {
    // y = 3x elementwise; upstream u  ⇒  dx = 3u
    let x = leaf(&[1.0, 2.0]);
    let y = &x * 3.0;
    y.backward_with(&Tensor::from_vec(vec![1.0, -2.0], [2]));
    assert_eq!(x.grad().unwrap().to_vec(), vec![3.0, -6.0]);
}

#[test]
fn only_leaves_that_asked_get_a_gradient() {
    let w = leaf(&[1.0]);
    let c = Tensor::from_vec(vec![2.0], [1]);
    (&w * &c).sum().backward();
    assert!(w.grad().is_ok());
    assert_eq!(c.grad().unwrap_err(), NoGrad::NotTracked);
}

#[test]
fn a_chain_of_ten_thousand_ops_backprops_and_frees_on_a_small_stack() {
    // 256 KiB is far less than a recursive backward or a recursive drop would need.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let x = leaf(&[1.0]);
            let mut y = x.clone();
            for _ in 0..10_000 {
                y = &y * 1.0001;
            }
            y.sum().backward();
            let g = x.grad().unwrap().item();
            drop(y);
            g
        })
        .unwrap();
    let g = handle
        .join()
        .expect("backward or drop overflowed the stack");
    let expected = 1.0001f64.powi(10_000) as f32;
    assert!((g - expected).abs() < 1e-3 * expected, "{g} vs {expected}");
}

#[test]
fn assign_updates_every_handle_of_a_parameter() {
    let p = leaf(&[1.0, 2.0]);
    let alias = p.clone();
    p.assign(&Tensor::from_vec(vec![5.0, 6.0], [2]));
    assert_eq!(alias.to_vec(), vec![5.0, 6.0]);
    assert!(alias.requires_grad());
}

#[test]
fn reshape_shares_values_and_routes_gradients_back() {
    let x =
        Tensor::from_vec((0..6).map(|i| i as f32).collect(), [2, 3]).requires_grad_();
    let y = x.reshape([3, 2]);
    assert_eq!(y.to_vec(), x.to_vec());
    (&y * &Tensor::arange(6).reshape([3, 2])).sum().backward();
    assert_eq!(x.grad().unwrap().shape(), &[2, 3]);
    assert_eq!(
        x.grad().unwrap().to_vec(),
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
}

#[test]
fn two_leaves_never_share_one_gradient_handle() {
    // Both inputs of an add receive the same upstream gradient; assigning to one
    // parameter's gradient must not change the other's.
    let a = leaf(&[1.0]);
    let b = leaf(&[2.0]);
    (&a + &b).sum().backward();
    a.grad().unwrap().assign(&Tensor::from_vec(vec![9.0], [1]));
    assert_eq!(b.grad().unwrap().to_vec(), vec![1.0]);
}

#[test]
fn set_grad_replaces_the_gradient() {
    let a = leaf(&[1.0, 2.0]);
    a.set_grad(Some(Tensor::from_vec(vec![3.0, 4.0], [2])));
    assert_eq!(a.grad().unwrap().to_vec(), vec![3.0, 4.0]);
    a.set_grad(None);
    assert_eq!(a.grad().unwrap_err(), NoGrad::NotYetComputed);
}

#[test]
#[should_panic(
    expected = "set_grad: the gradient has shape [3] but the tensor has [2]"
)]
fn set_grad_checks_the_shape() {
    leaf(&[1.0, 2.0]).set_grad(Some(Tensor::zeros([3])));
}

#[test]
fn relu_derivative_at_exactly_zero_is_zero_as_in_pytorch() {
    // relu is not differentiable at 0; PyTorch (and this engine) take the derivative there
    // to be 0, so a unit sitting exactly at 0 passes no gradient.
    let x = leaf(&[-1.0, 0.0, 2.0]);
    x.relu().sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![0.0, 0.0, 1.0]);
}

#[test]
fn relu_keeps_a_nan_and_passes_its_gradient_as_pytorch_does() {
    // PyTorch, recorded in tests/golden/claims/appendix.json (relu_nan_forward and
    // relu_nan_grad): relu([NaN, -0.0, -1, 2]) = [nan, -0.0, 0.0, 2.0], and under an
    // upstream gradient of 3 the gradient is [3, 0, 0, 3]: its backward zeroes the
    // gradient where x ≤ 0, which a NaN is not.
    let x = leaf(&[f32::NAN, -0.0, -1.0, 2.0]);
    let y = x.relu();
    let bits: Vec<u32> = y.to_vec().iter().map(|v| v.to_bits()).collect();
    assert!(
        f32::from_bits(bits[0]).is_nan(),
        "relu(NaN) is NaN, found {y:?}"
    );
    assert_eq!(
        &bits[1..],
        &[(-0.0f32).to_bits(), 0.0f32.to_bits(), 2.0f32.to_bits()],
        "relu(-0.0) keeps the sign, as PyTorch's"
    );
    (&y * 3.0).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![3.0, 0.0, 0.0, 3.0]);
}

#[test]
fn powf_zero_has_a_zero_derivative_even_at_zero() {
    // x⁰ = 1 is constant; p·xᵖ⁻¹ would be 0·∞ = NaN at x = 0.
    let x = leaf(&[0.0, 2.0]);
    x.powf(0.0).sum().backward();
    assert_eq!(x.grad().unwrap().to_vec(), vec![0.0, 0.0]);
}

#[test]
fn cross_entropy_ignores_minus_infinity_in_other_classes() {
    // A vocabulary mask written as -inf must not make the loss NaN (−inf · 0 is NaN).
    // PyTorch: cross_entropy([[0, -inf, 1]], [0]) = log(1 + e) = 1.3132616.
    let logits =
        Tensor::from_vec(vec![0.0, f32::NEG_INFINITY, 1.0], [1, 3]).requires_grad_();
    let loss = logits
        .cross_entropy(&Tensor::from_vec(vec![0.0], [1]), engine::Reduction::Mean);
    assert!((loss.item() - 1.313_261_6).abs() < 1e-6, "{loss}");
    loss.backward();
    // softmax − onehot = [1/(1+e) − 1, 0, e/(1+e)]
    let e = std::f32::consts::E;
    let g = logits.grad().unwrap().to_vec();
    let expected = [1.0 / (1.0 + e) - 1.0, 0.0, e / (1.0 + e)];
    for (got, want) in g.iter().zip(expected) {
        assert!((got - want).abs() < 1e-6, "{g:?}");
    }
}
