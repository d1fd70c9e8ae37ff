//! The autocast scope (`engine::autocast`): products and attention scores inside it equal
//! the same ops on explicitly rounded inputs with a rounded output, forward and backward,
//! bit for bit; every other op is untouched; scopes nest and restore; and gradients through
//! it agree with finite differences at a tolerance suited to each format.

use crate::common::randn;

use engine::gradcheck::{GradcheckOptions, gradcheck_with};
use engine::precision::Precision;
use engine::{Activation, BlockedAttentionOptions, Tensor, autocast};

/// The bits of a tensor.
fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|v| v.to_bits()).collect()
}

/// `f` inside an autocast scope and `g` (the explicit rounding) outside it: the same
/// output and the same gradients of every input, bit for bit.
fn same_as_explicit(
    what: &str,
    inputs: &[Tensor],
    f: impl Fn(&[Tensor]) -> Tensor,
    g: impl Fn(&[Tensor]) -> Tensor,
) {
    for p in [Precision::F16, Precision::Bf16] {
        let run = |h: &dyn Fn(&[Tensor]) -> Tensor| {
            let leaves: Vec<Tensor> =
                inputs.iter().map(|t| t.detach().requires_grad_()).collect();
            let out = h(&leaves);
            out.backward_with(&randn(out.shape(), 99));
            let mut results = vec![bits(&out)];
            results.extend(leaves.iter().map(|t| bits(&t.grad().unwrap())));
            results
        };
        let scoped = run(&|x| autocast(p, || f(x)));
        let explicit = run(&|x| {
            let rounded: Vec<Tensor> = x.iter().map(|t| t.to_precision(p)).collect();
            g(&rounded).to_precision(p)
        });
        assert!(
            scoped == explicit,
            "{what} in {p}: autocast differs from explicit rounding"
        );
        // And the rounding changed something: the check is not of two f32 runs.
        assert!(
            scoped != run(&|x| f(x)),
            "{what} in {p}: rounding changed nothing"
        );
    }
}

#[test]
fn products_inside_the_scope_equal_explicit_rounding_forward_and_backward() {
    let (a, b, w) = (
        randn(&[3, 4, 5], 1),
        randn(&[3, 5, 6], 2),
        randn(&[7, 5], 3),
    );
    same_as_explicit(
        "matmul",
        &[a.clone(), b.clone()],
        |x| x[0].matmul(&x[1]),
        |x| x[0].matmul(&x[1]),
    );
    same_as_explicit(
        "matmul_t",
        &[a.clone(), w],
        |x| x[0].matmul_t(&x[1]),
        |x| x[0].matmul_t(&x[1]),
    );
    same_as_explicit("bmm", &[a, b], |x| x[0].bmm(&x[1]), |x| x[0].bmm(&x[1]));
}

#[test]
fn attention_scores_inside_the_scope_equal_explicit_rounding() {
    let (q, k, w) = (randn(&[2, 3, 4], 4), randn(&[2, 5, 4], 5), randn(&[4], 6));
    for f in [Activation::Tanh, Activation::Relu] {
        same_as_explicit(
            "additive_scores",
            &[q.clone(), k.clone(), w.clone()],
            |x| x[0].additive_scores_with(&x[1], &x[2], f),
            |x| x[0].additive_scores_with(&x[1], &x[2], f),
        );
    }
    let v = randn(&[2, 5, 3], 7);
    let options = BlockedAttentionOptions {
        block: 2,
        causal_offset: Some(2),
        ..Default::default()
    };
    same_as_explicit(
        "blocked_attention",
        &[q, k, v],
        |x| x[0].blocked_attention(&x[1], &x[2], &options),
        |x| x[0].blocked_attention(&x[1], &x[2], &options),
    );
}

#[test]
fn softmax_reductions_and_element_wise_ops_stay_in_f32() {
    let x = randn(&[4, 9], 8);
    let plain = [
        x.softmax(-1),
        x.log_softmax(-1),
        x.sum(),
        x.exp(),
        &x * 1.0001,
        x.mean(),
    ];
    let scoped = autocast(Precision::F16, || {
        [
            x.softmax(-1),
            x.log_softmax(-1),
            x.sum(),
            x.exp(),
            &x * 1.0001,
            x.mean(),
        ]
    });
    for (a, b) in plain.iter().zip(&scoped) {
        assert_eq!(bits(a), bits(b));
    }
}

#[test]
fn scopes_nest_and_restore_even_after_a_panic() {
    assert_eq!(engine::autocast::active(), None);
    autocast(Precision::F16, || {
        assert_eq!(engine::autocast::active(), Some(Precision::F16));
        autocast(Precision::F32, || {
            assert_eq!(engine::autocast::active(), None)
        });
        autocast(Precision::Bf16, || {
            assert_eq!(engine::autocast::active(), Some(Precision::Bf16))
        });
        assert_eq!(engine::autocast::active(), Some(Precision::F16));
    });
    let caught =
        std::panic::catch_unwind(|| autocast(Precision::F16, || panic!("inside")));
    assert!(caught.is_err());
    assert_eq!(engine::autocast::active(), None);
    // backward runs with autocast off: the gradient of a product computed outside a scope
    // is the same when backward is called inside one.
    let (a, b) = (randn(&[3, 4], 9).requires_grad_(), randn(&[4, 2], 10));
    a.matmul(&b).sum().backward();
    let outside = bits(&a.grad().unwrap());
    a.zero_grad();
    let y = a.matmul(&b).sum();
    autocast(Precision::F16, || y.backward());
    assert_eq!(bits(&a.grad().unwrap()), outside);
}

#[test]
fn gradients_through_the_scope_agree_with_finite_differences_at_the_formats_tolerance()
 {
    // Rounding makes the function a staircase with steps of about ε·|x|: a finite
    // difference must step over many stairs (eps well above ε) and is compared at a
    // tolerance of a few ε.
    for (p, options) in [
        (
            Precision::F16,
            GradcheckOptions {
                eps: 5e-2,
                atol: 2e-2,
                rtol: 2e-2,
            },
        ),
        (
            Precision::Bf16,
            GradcheckOptions {
                eps: 2e-1,
                atol: 8e-2,
                rtol: 8e-2,
            },
        ),
    ] {
        let inputs = [randn(&[3, 4], 11), randn(&[5, 4], 12)];
        gradcheck_with(
            |x| autocast(p, || x[0].matmul_t(&x[1]).tanh()),
            &inputs,
            options,
        )
        .unwrap_or_else(|e| panic!("{p}: {e}"));
    }
}

#[test]
fn a_loss_of_small_gradients_underflows_in_f16_and_not_in_bf16() {
    // What loss scaling is for: gradients of 1e-8 are zero in f16, not in bf16.
    let a = randn(&[4, 4], 13).requires_grad_();
    let b = randn(&[4, 4], 14);
    for (p, all_zero) in [(Precision::F16, true), (Precision::Bf16, false)] {
        a.zero_grad();
        let y = autocast(p, || a.matmul(&b));
        y.backward_with(&Tensor::full([4, 4], 1e-8));
        let g = a.grad().unwrap().to_vec();
        assert_eq!(g.iter().all(|&v| v == 0.0), all_zero, "{p}: {g:?}");
    }
}
