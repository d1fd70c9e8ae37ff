//! The derivatives of PyTorch's staples (`abs`, `clamp`, `maximum`/`minimum`, `min`, the
//! values of `max_dim_with_indices` and `topk`, `gather`, `flatten`, `cumsum`,
//! `tril`/`triu`, `logsumexp`, `mse_loss`) against finite differences.
//!
//! As in `gradcheck_ops.rs`, inputs stay more than the finite-difference step (1e-2) away
//! from the points where an op is not differentiable: zero for `abs`, the bounds for
//! `clamp`, ties for `maximum`, `min` and the selections.

use crate::common;

use common::{away_from_zero, check, distinct, ids, randn};
use engine::{Reduction, Tensor};

#[test]
fn abs_gradcheck_away_from_zero() {
    // d|x|/dx = sign(x)
    check("abs", |t| t[0].abs(), &[away_from_zero(&[3, 4], 0.05, 1)]);
}

/// Values whose distance to `bound` is at least 0.05: a step never crosses it.
fn away_from(bound: f32, x: &Tensor) -> Tensor {
    let values = x
        .to_vec()
        .iter()
        .map(|&v| if (v - bound).abs() < 0.05 { v + 0.1 } else { v })
        .collect();
    Tensor::from_vec(values, x.shape())
}

#[test]
fn clamp_gradcheck_with_both_bounds_and_with_one() {
    // d clamp(x)/dx = 1 strictly inside the bounds, 0 outside.
    let x = away_from(0.5, &away_from(-0.5, &randn(&[4, 5], 2)));
    check(
        "clamp(-0.5, 0.5)",
        |t| t[0].clamp(-0.5, 0.5),
        std::slice::from_ref(&x),
    );
    check(
        "clamp_min(-0.5)",
        |t| t[0].clamp_min(-0.5),
        std::slice::from_ref(&x),
    );
    check("clamp_max(0.5)", |t| t[0].clamp_max(0.5), &[x]);
}

#[test]
fn maximum_and_minimum_gradcheck_with_broadcasting() {
    // The gradient goes to the winning operand, summed over broadcast dimensions.
    // Both on a grid of step 0.3, b shifted by half a step: every broadcast pair differs by
    // at least 0.15, so no finite-difference step crosses a tie.
    let a = distinct(&[2, 1, 3], 0.3, 3);
    let b = &distinct(&[4, 1], 0.3, 4) + 0.15;
    assert!((&a - &b).abs().min().item() > 0.14);
    check("maximum", |t| t[0].maximum(&t[1]), &[a.clone(), b.clone()]);
    check("minimum", |t| t[0].minimum(&t[1]), &[a, b]);
}

#[test]
fn min_and_min_dim_gradcheck() {
    // The gradient goes to the minimal element.
    check("min", |t| t[0].min(), &[distinct(&[3, 4], 0.1, 5)]);
    check(
        "min_dim(1)",
        |t| t[0].min_dim(1),
        &[distinct(&[2, 3, 4], 0.1, 6)],
    );
    check(
        "min_dim_keepdim(-1)",
        |t| t[0].min_dim_keepdim(-1),
        &[distinct(&[2, 3, 4], 0.1, 7)],
    );
}

#[test]
fn selected_values_gradcheck() {
    let x = distinct(&[3, 5], 0.1, 8);
    check(
        "max_dim_with_indices values",
        |t| t[0].max_dim_with_indices(1).0,
        std::slice::from_ref(&x),
    );
    check(
        "min_dim_keepdim_with_indices values",
        |t| t[0].min_dim_keepdim_with_indices(0).0,
        std::slice::from_ref(&x),
    );
    check(
        "topk(3, -1) values",
        |t| t[0].topk(3, -1).0,
        std::slice::from_ref(&x),
    );
    check(
        "topk_smallest(2, 0) values",
        |t| t[0].topk_smallest(2, 0).0,
        &[x],
    );
}

#[test]
fn gather_gradcheck_with_repeated_positions() {
    // A position read twice receives both gradients.
    let index = ids(&[0, 3, 3, 2, 1, 0, 1, 1, 1], &[3, 3]);
    check(
        "gather(1)",
        move |t| t[0].gather(1, &index),
        &[randn(&[3, 4], 9)],
    );
}

#[test]
fn flatten_gradcheck() {
    check(
        "flatten(1, 2)",
        |t| t[0].flatten(1, 2),
        &[randn(&[2, 3, 4, 2], 10)],
    );
}

#[test]
fn cumsum_gradcheck_along_each_dimension() {
    // d out[j] / d x[i] = 1 for i ≤ j: the gradient of x[i] is Σ_{j ≥ i} g[j].
    for dim in [0, 1, 2, -1] {
        check(
            &format!("cumsum({dim})"),
            |t| t[0].cumsum(dim),
            &[randn(&[2, 3, 4], 11)],
        );
    }
}

#[test]
fn tril_and_triu_gradcheck() {
    check("tril(0)", |t| t[0].tril(0), &[randn(&[2, 4, 4], 12)]);
    check("triu(1)", |t| t[0].triu(1), &[randn(&[3, 5], 13)]);
    check("tril(-1)", |t| t[0].tril(-1), &[randn(&[4, 3], 14)]);
}

#[test]
fn logsumexp_gradcheck() {
    // d logsumexp(x) / dx = softmax(x)
    check(
        "logsumexp(-1)",
        |t| t[0].logsumexp(-1),
        &[randn(&[3, 4], 15)],
    );
    check(
        "logsumexp_keepdim(0)",
        |t| t[0].logsumexp_keepdim(0),
        &[randn(&[3, 2, 2], 16)],
    );
}

#[test]
fn mse_loss_gradcheck_both_inputs_every_reduction() {
    // d/dx mean((x − y)²) = 2 (x − y) / n, and the opposite for y.
    for reduction in [Reduction::Mean, Reduction::Sum, Reduction::None] {
        check(
            &format!("mse_loss {reduction:?}"),
            |t| t[0].mse_loss(&t[1], reduction),
            &[randn(&[3, 4], 17), randn(&[3, 4], 18)],
        );
    }
}
