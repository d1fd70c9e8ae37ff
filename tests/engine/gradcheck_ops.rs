//! Every differentiable op against finite differences, with respect to every
//! differentiable input.
//!
//! `gradcheck` reduces the op's output with fixed random weights `w` to `L = Σ w ⊙ f(x)`
//! and compares `∂L/∂x` from `backward` with the central difference
//! `(L(x + ε) − L(x − ε)) / 2ε` (ε = 1e-2) for every element. A derivative that is zero,
//! has the wrong sign or misses a factor is off by far more than the tolerances.
//!
//! Inputs stay away from the points where an op is not differentiable: nothing within ε of
//! `relu`'s kink, no ties for `max`, positive inputs for `log`, `sqrt` and fractional powers.

use crate::common;

use common::{away_from_zero, check, distinct, ids, mask, randn, uniform};
use engine::{GeluApprox, Reduction, Tensor, manual_seed};

// ---- arithmetic with broadcasting ---------------------------------------------------------
//
// For c = a ∘ b with broadcasting, the gradient of each operand is the elementwise
// derivative times the upstream, summed over the dimensions broadcasting added or stretched
// (so it has the operand's shape again).

#[test]
fn add_gradcheck_same_shape_and_broadcast() {
    // ∂(a+b)/∂a = 1, ∂(a+b)/∂b = 1.
    check(
        "add [2,3]+[2,3]",
        |t| &t[0] + &t[1],
        &[randn(&[2, 3], 1), randn(&[2, 3], 2)],
    );
    // b is stretched along dim 1 and a along dim 2 of the [2,4,3] result.
    check(
        "add [2,1,3]+[4,1]",
        |t| &t[0] + &t[1],
        &[randn(&[2, 1, 3], 3), randn(&[4, 1], 4)],
    );
    check(
        "add [2,3]+[]",
        |t| &t[0] + &t[1],
        &[randn(&[2, 3], 5), randn(&[], 6)],
    );
}

#[test]
fn add_gradcheck_with_scalar_on_either_side() {
    check("x + 2.5", |t| &t[0] + 2.5, &[randn(&[2, 3], 7)]);
    check("2.5 + x", |t| 2.5 + &t[0], &[randn(&[2, 3], 8)]);
}

#[test]
fn sub_gradcheck_same_shape_and_broadcast() {
    // ∂(a−b)/∂a = 1, ∂(a−b)/∂b = −1.
    check(
        "sub [3,4]-[3,4]",
        |t| &t[0] - &t[1],
        &[randn(&[3, 4], 9), randn(&[3, 4], 10)],
    );
    check(
        "sub [4,1]-[3]",
        |t| &t[0] - &t[1],
        &[randn(&[4, 1], 11), randn(&[3], 12)],
    );
    check(
        "sub [2,3,1]-[1,4]",
        |t| &t[0] - &t[1],
        &[randn(&[2, 3, 1], 13), randn(&[1, 4], 14)],
    );
}

#[test]
fn sub_gradcheck_with_scalar_on_either_side() {
    check("1 - x", |t| 1.0 - &t[0], &[randn(&[2, 3], 15)]);
    check("x - 0.5", |t| &t[0] - 0.5, &[randn(&[2, 3], 16)]);
}

#[test]
fn mul_gradcheck_same_shape_and_broadcast() {
    // ∂(ab)/∂a = b, ∂(ab)/∂b = a.
    check(
        "mul [2,3]*[2,3]",
        |t| &t[0] * &t[1],
        &[randn(&[2, 3], 17), randn(&[2, 3], 18)],
    );
    check(
        "mul [2,3,4]*[3,1]",
        |t| &t[0] * &t[1],
        &[randn(&[2, 3, 4], 19), randn(&[3, 1], 20)],
    );
    check(
        "mul []*[3,2]",
        |t| &t[0] * &t[1],
        &[randn(&[], 21), randn(&[3, 2], 22)],
    );
}

#[test]
fn mul_gradcheck_with_scalar_and_with_itself() {
    check("x * 2", |t| &t[0] * 2.0, &[randn(&[2, 3], 23)]);
    check("-1.5 * x", |t| -1.5 * &t[0], &[randn(&[2, 3], 24)]);
    // x·x: both operands are the same tensor, so its two gradients add up to 2x.
    check("x * x", |t| &t[0] * &t[0], &[randn(&[2, 3], 25)]);
}

#[test]
fn div_gradcheck_same_shape_and_broadcast() {
    // ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −a/b².
    check(
        "div [2,3]/[2,3]",
        |t| &t[0] / &t[1],
        &[randn(&[2, 3], 26), away_from_zero(&[2, 3], 0.5, 27)],
    );
    check(
        "div [1,4]/[3,1]",
        |t| &t[0] / &t[1],
        &[randn(&[1, 4], 28), away_from_zero(&[3, 1], 0.5, 29)],
    );
    check(
        "div [3,4]/[4]",
        |t| &t[0] / &t[1],
        &[randn(&[3, 4], 30), away_from_zero(&[4], 0.5, 31)],
    );
}

#[test]
fn div_gradcheck_with_scalar_on_either_side() {
    // d(2/x) = −2/x² dx
    check(
        "2 / x",
        |t| 2.0 / &t[0],
        &[away_from_zero(&[2, 3], 0.5, 32)],
    );
    check("x / 3", |t| &t[0] / 3.0, &[randn(&[2, 3], 33)]);
}

// ---- elementwise functions ----------------------------------------------------------------

#[test]
fn neg_gradcheck() {
    check("neg", |t| -&t[0], &[randn(&[3, 4], 40)]);
}

#[test]
fn exp_gradcheck() {
    // d eˣ = eˣ dx
    check("exp", |t| t[0].exp(), &[uniform(&[3, 4], -2.0, 2.0, 41)]);
}

#[test]
fn log_gradcheck() {
    // d ln x = dx / x
    check("log", |t| t[0].log(), &[uniform(&[3, 4], 0.3, 3.0, 42)]);
}

#[test]
fn tanh_gradcheck() {
    // d tanh x = (1 − tanh² x) dx
    check("tanh", |t| t[0].tanh(), &[uniform(&[3, 4], -2.5, 2.5, 43)]);
}

#[test]
fn sigmoid_gradcheck() {
    // d σ(x) = σ(x)(1 − σ(x)) dx
    check(
        "sigmoid",
        |t| t[0].sigmoid(),
        &[uniform(&[3, 4], -4.0, 4.0, 44)],
    );
}

#[test]
fn relu_gradcheck_away_from_the_kink() {
    // d relu(x) = [x > 0] dx; every |x| ≥ 0.1 is well beyond the step ε = 0.01.
    check("relu", |t| t[0].relu(), &[away_from_zero(&[3, 4], 0.1, 45)]);
}

#[test]
fn gelu_gradcheck_both_forms() {
    // erf form: d[x Φ(x)] = Φ(x) + x φ(x).
    check(
        "gelu erf",
        |t| t[0].gelu(GeluApprox::Erf),
        &[uniform(&[3, 4], -3.0, 3.0, 46)],
    );
    // tanh form, with u = √(2/π)(x + 0.044715 x³):
    // d[½x(1 + tanh u)] = ½(1 + tanh u) + ½x(1 − tanh² u) √(2/π)(1 + 3·0.044715 x²).
    check(
        "gelu tanh",
        |t| t[0].gelu(GeluApprox::Tanh),
        &[uniform(&[3, 4], -3.0, 3.0, 47)],
    );
}

#[test]
fn sqrt_gradcheck() {
    // d √x = dx / (2√x)
    check("sqrt", |t| t[0].sqrt(), &[uniform(&[3, 4], 0.3, 4.0, 48)]);
}

#[test]
fn powf_gradcheck_for_several_powers() {
    // d xᵖ = p xᵖ⁻¹ dx
    for (p, x) in [
        (2.0, randn(&[3, 4], 49)),
        (3.0, randn(&[3, 4], 50)),
        (0.5, uniform(&[3, 4], 0.5, 3.0, 51)),
        (-1.5, uniform(&[3, 4], 0.5, 2.5, 52)),
        (2.5, uniform(&[3, 4], 0.5, 2.5, 53)),
    ] {
        check(&format!("powf({p})"), |t| t[0].powf(p), &[x]);
    }
}

// ---- reductions ---------------------------------------------------------------------------
//
// A sum hands its upstream gradient back to every element it summed: the gradient is the
// upstream with the reduced dimensions restored (size 1) and broadcast to the input shape.

#[test]
fn sum_gradcheck_all_and_one_dim() {
    check("sum()", |t| t[0].sum(), &[randn(&[2, 3, 4], 60)]);
    for dim in [0, 1, 2] {
        for keepdim in [false, true] {
            check(
                &format!("sum_dim{}({dim})", if keepdim { "_keepdim" } else { "" }),
                |t| {
                    if keepdim {
                        t[0].sum_dim_keepdim(dim)
                    } else {
                        t[0].sum_dim(dim)
                    }
                },
                &[randn(&[2, 3, 4], 61 + dim as u64)],
            );
        }
    }
}

#[test]
fn sum_dims_gradcheck_over_several_dims() {
    for (dims, keepdim) in [
        (vec![0, 2], false),
        (vec![2, 0], true),
        (vec![-1, -2], false),
        (vec![0, 1, 2], true),
    ] {
        check(
            &format!(
                "sum_dims{}({dims:?})",
                if keepdim { "_keepdim" } else { "" }
            ),
            |t| {
                if keepdim {
                    t[0].sum_dims_keepdim(&dims)
                } else {
                    t[0].sum_dims(&dims)
                }
            },
            &[randn(&[2, 3, 4], 65)],
        );
    }
}

#[test]
fn mean_gradcheck_all_and_one_dim() {
    // ∂ mean / ∂xᵢ = 1/n for each of the n averaged elements.
    check("mean()", |t| t[0].mean(), &[randn(&[3, 4], 66)]);
    check(
        "mean_dim_keepdim(1)",
        |t| t[0].mean_dim_keepdim(1),
        &[randn(&[2, 3, 4], 67)],
    );
    check("mean_dim(-1)", |t| t[0].mean_dim(-1), &[randn(&[2, 5], 68)]);
}

#[test]
fn max_gradcheck_without_ties() {
    // The gradient goes only to the maximal element of each reduced line. Values are 0.1
    // apart, so a step of ε = 0.01 never changes which element is the maximum.
    check("max()", |t| t[0].max(), &[distinct(&[3, 4], 0.1, 69)]);
    for dim in [0, 1, 2] {
        for keepdim in [false, true] {
            check(
                &format!("max_dim{}({dim})", if keepdim { "_keepdim" } else { "" }),
                |t| {
                    if keepdim {
                        t[0].max_dim_keepdim(dim)
                    } else {
                        t[0].max_dim(dim)
                    }
                },
                &[distinct(&[2, 3, 4], 0.1, 70 + dim as u64)],
            );
        }
    }
}

/// Ties are not differentiable, so finite differences cannot check them; the engine's
/// convention (as PyTorch's `amax`) is to share the gradient equally.
#[test]
fn max_shares_the_gradient_between_ties() {
    let x = Tensor::from_vec(vec![1.0, 3.0, 3.0, 2.0, 0.0, -1.0], [2, 3])
        .requires_grad_();
    x.max_dim(1)
        .backward_with(&Tensor::from_vec(vec![4.0, 10.0], [2]));
    assert_eq!(
        x.grad().unwrap().to_vec(),
        vec![0.0, 2.0, 2.0, 10.0, 0.0, 0.0]
    );
    let y = Tensor::from_vec(vec![5.0, 1.0, 5.0, 5.0], [2, 2]).requires_grad_();
    y.max().backward_with(&Tensor::scalar(3.0));
    assert_eq!(y.grad().unwrap().to_vec(), vec![1.0, 0.0, 1.0, 1.0]);
}

// ---- softmax ------------------------------------------------------------------------------

#[test]
fn softmax_gradcheck_along_each_dim() {
    // With s = softmax(x) along d: ∂L/∂x = s ⊙ (g − Σ_d g ⊙ s).
    for dim in [0, 1, 2, -1] {
        check(
            &format!("softmax({dim})"),
            |t| t[0].softmax(dim),
            &[randn(&[2, 3, 4], 80)],
        );
    }
}

#[test]
fn log_softmax_gradcheck_along_each_dim() {
    // With l = log_softmax(x) along d: ∂L/∂x = g − softmax(x) Σ_d g.
    for dim in [0, 1, 2, -2] {
        check(
            &format!("log_softmax({dim})"),
            |t| t[0].log_softmax(dim),
            &[randn(&[2, 3, 4], 81)],
        );
    }
}

// ---- matmul -------------------------------------------------------------------------------
//
// C = AB: ∂L/∂A = G Bᵀ, ∂L/∂B = Aᵀ G, each summed over the batch dimensions its operand was
// broadcast along.

#[test]
fn matmul_gradcheck_2d() {
    check(
        "[3,4]x[4,2]",
        |t| t[0].matmul(&t[1]),
        &[randn(&[3, 4], 90), randn(&[4, 2], 91)],
    );
}

#[test]
fn matmul_gradcheck_batched() {
    check(
        "[2,3,4]x[2,4,5]",
        |t| t[0].matmul(&t[1]),
        &[randn(&[2, 3, 4], 92), randn(&[2, 4, 5], 93)],
    );
}

#[test]
fn matmul_gradcheck_broadcast_batch_dims() {
    // Batch dims [2,1] and [5] broadcast to [2,5]: A's gradient sums over the 5, B's over
    // the 2.
    check(
        "[2,1,3,4]x[5,4,2]",
        |t| t[0].matmul(&t[1]),
        &[randn(&[2, 1, 3, 4], 94), randn(&[5, 4, 2], 95)],
    );
    check(
        "[2,3,4]x[4,2]",
        |t| t[0].matmul(&t[1]),
        &[randn(&[2, 3, 4], 96), randn(&[4, 2], 97)],
    );
    check(
        "[3,4]x[2,4,2]",
        |t| t[0].matmul(&t[1]),
        &[randn(&[3, 4], 98), randn(&[2, 4, 2], 99)],
    );
}

#[test]
fn matmul_t_gradcheck_2d_batched_and_broadcast() {
    // C = A Bᵀ: dA = dC B, dB = dCᵀ A, summed over broadcast batch dimensions.
    check(
        "[3,4]x[2,4]ᵀ",
        |t| t[0].matmul_t(&t[1]),
        &[randn(&[3, 4], 100), randn(&[2, 4], 101)],
    );
    check(
        "[2,1,3,4]x[5,2,4]ᵀ",
        |t| t[0].matmul_t(&t[1]),
        &[randn(&[2, 1, 3, 4], 102), randn(&[5, 2, 4], 103)],
    );
    check(
        "[2,3,4]x[5,4]ᵀ (a Linear layer's weight)",
        |t| t[0].matmul_t(&t[1]),
        &[randn(&[2, 3, 4], 104), randn(&[5, 4], 105)],
    );
}

#[test]
fn bmm_gradcheck() {
    check(
        "bmm [2,3,4]x[2,4,3]",
        |t| t[0].bmm(&t[1]),
        &[randn(&[2, 3, 4], 100), randn(&[2, 4, 3], 101)],
    );
}

// ---- shape ops ----------------------------------------------------------------------------

#[test]
fn reshape_unsqueeze_squeeze_gradcheck() {
    // A reshape moves no values: the gradient is the upstream in the input's shape. The
    // weights make the position of each entry matter.
    check(
        "reshape([4,-1])",
        |t| t[0].reshape([4, -1]),
        &[randn(&[2, 3, 4], 110)],
    );
    check(
        "unsqueeze(1)",
        |t| t[0].unsqueeze(1),
        &[randn(&[2, 3], 111)],
    );
    check("squeeze(1)", |t| t[0].squeeze(1), &[randn(&[2, 1, 3], 112)]);
}

#[test]
fn transpose_and_permute_gradcheck() {
    // The gradient of a permutation is the inverse permutation of the upstream. [2,0,1] is
    // a 3-cycle, not its own inverse.
    check(
        "transpose(0, 2)",
        |t| t[0].transpose(0, 2),
        &[randn(&[2, 3, 4], 113)],
    );
    check(
        "permute([2,0,1])",
        |t| t[0].permute([2, 0, 1]),
        &[randn(&[2, 3, 4], 114)],
    );
    check(
        "permute([1,3,0,2])",
        |t| t[0].permute([1, 3, 0, 2]),
        &[randn(&[2, 3, 1, 4], 115)],
    );
}

#[test]
fn broadcast_to_and_expand_gradcheck() {
    // Every copy made by broadcasting sends its gradient back to the one original entry.
    check(
        "broadcast_to [3,1] -> [2,3,4]",
        |t| t[0].broadcast_to([2, 3, 4]),
        &[randn(&[3, 1], 116)],
    );
    check(
        "expand [2,1,3] -> [-1,4,-1]",
        |t| t[0].expand([-1, 4, -1]),
        &[randn(&[2, 1, 3], 117)],
    );
}

#[test]
fn concat_gradcheck_every_input() {
    // Each input receives the stretch of the upstream gradient where it was placed.
    check(
        "concat dim 1",
        |t| Tensor::concat(t, 1),
        &[
            randn(&[2, 1, 3], 118),
            randn(&[2, 2, 3], 119),
            randn(&[2, 3, 3], 120),
        ],
    );
    check(
        "concat dim -1",
        |t| Tensor::concat(t, -1),
        &[randn(&[2, 2], 121), randn(&[2, 3], 122)],
    );
    check(
        "concat dim 0",
        |t| Tensor::concat(t, 0),
        &[randn(&[1, 3], 123), randn(&[2, 3], 124)],
    );
}

#[test]
fn concat_with_a_constant_input_sends_the_right_stretch_to_the_others() {
    // The middle input needs no gradient; the one after it must still get its own stretch.
    let constant = randn(&[2, 1], 125);
    check(
        "concat around a constant",
        |t| Tensor::concat(&[&t[0], &constant, &t[1]], 1),
        &[randn(&[2, 2], 126), randn(&[2, 3], 127)],
    );
}

#[test]
fn stack_gradcheck_every_input() {
    for dim in [0, 1, 2] {
        check(
            &format!("stack dim {dim}"),
            |t| Tensor::stack(t, dim),
            &[
                randn(&[2, 3], 128),
                randn(&[2, 3], 129),
                randn(&[2, 3], 130),
            ],
        );
    }
}

#[test]
fn narrow_and_slice_gradcheck() {
    // The gradient is the upstream padded with zeros where nothing was taken.
    check(
        "narrow(1, 1, 2)",
        |t| t[0].narrow(1, 1, 2),
        &[randn(&[3, 5, 2], 131)],
    );
    check(
        "narrow(0, 2, 3) to the end",
        |t| t[0].narrow(0, 2, 3),
        &[randn(&[5, 2], 132)],
    );
    check(
        "narrow(-1, 0, 1) from the start",
        |t| t[0].narrow(-1, 0, 1),
        &[randn(&[3, 4], 133)],
    );
    check(
        "slice(1, 2..5)",
        |t| t[0].slice(1, 2..5),
        &[randn(&[3, 6], 134)],
    );
}

// ---- indexing -----------------------------------------------------------------------------

#[test]
fn index_select_gradcheck_with_repeated_indices() {
    // Scatter-add: a row selected k times receives the sum of its k upstream gradients;
    // a row never selected receives 0.
    let rows = ids(&[2, 0, 2, 3, 2], &[5]);
    check(
        "index_select rows",
        |t| t[0].index_select(0, &rows),
        &[randn(&[5, 3], 140)],
    );
    let middle = ids(&[4, 4, 1], &[3]);
    check(
        "index_select middle dim",
        |t| t[0].index_select(1, &middle),
        &[randn(&[2, 5, 3], 141)],
    );
}

#[test]
fn embedding_gradcheck_with_repeated_ids() {
    // A token used twice accumulates the gradients of both positions.
    let tokens = ids(&[1, 3, 1, 0, 1, 4], &[2, 3]);
    check(
        "embedding",
        |t| Tensor::embedding(&tokens, &t[0]),
        &[randn(&[6, 4], 142)],
    );
}

#[test]
fn masked_fill_gradcheck_and_masked_entries_get_no_gradient() {
    // d masked_fill(x)/dx = [not masked]: the filled entries no longer depend on x.
    let m = mask(&[1, 0, 0, 1], &[1, 4]);
    check(
        "masked_fill broadcast mask",
        |t| t[0].masked_fill(&m, -1e9),
        &[randn(&[3, 4], 143)],
    );

    let x = randn(&[3, 4], 144).requires_grad_();
    let upstream = randn(&[3, 4], 145);
    x.masked_fill(&m, -1e9).backward_with(&upstream);
    let grad = x.grad().unwrap().to_vec();
    let up = upstream.to_vec();
    for i in 0..12 {
        let masked = i % 4 == 0 || i % 4 == 3;
        let expected = if masked { 0.0 } else { up[i] };
        assert_eq!(grad[i], expected, "element {i} (masked: {masked})");
    }
}

#[test]
fn where_cond_gradcheck_with_broadcasting() {
    // ∂/∂a = [cond] and ∂/∂b = [not cond], each summed over the dimensions the operand was
    // broadcast along.
    let cond = mask(&[1, 0, 1], &[3, 1]);
    check(
        "where_cond [3,1] ? [1,4] : []",
        |t| cond.where_cond(&t[0], &t[1]),
        &[randn(&[1, 4], 146), randn(&[], 147)],
    );
    let cond = mask(&[0, 1, 1, 0], &[1, 4]);
    check(
        "where_cond [1,4] ? [3,1] : [3,4]",
        |t| cond.where_cond(&t[0], &t[1]),
        &[randn(&[3, 1], 148), randn(&[3, 4], 149)],
    );
}

#[test]
fn where_cond_sends_the_gradient_only_to_the_chosen_side() {
    let cond = mask(&[1, 0, 0, 1, 1, 0], &[2, 3]);
    let a = randn(&[2, 3], 150).requires_grad_();
    let b = randn(&[2, 3], 151).requires_grad_();
    let upstream = randn(&[2, 3], 152);
    cond.where_cond(&a, &b).backward_with(&upstream);
    let (ga, gb) = (a.grad().unwrap().to_vec(), b.grad().unwrap().to_vec());
    for (i, (&c, &u)) in cond.to_vec().iter().zip(&upstream.to_vec()).enumerate() {
        let (want_a, want_b) = if c != 0.0 { (u, 0.0) } else { (0.0, u) };
        assert_eq!((ga[i], gb[i]), (want_a, want_b), "element {i}");
    }
}

// ---- dropout ------------------------------------------------------------------------------

#[test]
fn dropout_gradcheck_with_a_fixed_mask() {
    // The mask is a constant: ∂/∂x = mask / (1 − p). Reseeding inside the function draws the
    // same mask on every evaluation, so finite differences see the same function.
    check(
        "dropout(0.4) train",
        |t| {
            manual_seed(11);
            t[0].dropout(0.4, true)
        },
        &[randn(&[4, 5], 160)],
    );
    check(
        "dropout eval",
        |t| t[0].dropout(0.4, false),
        &[randn(&[4, 5], 161)],
    );
}

// ---- loss ---------------------------------------------------------------------------------

#[test]
fn cross_entropy_gradcheck_every_reduction() {
    // With p = softmax(logits): ∂ loss_n / ∂ logits_n = p_n − onehot(target_n), divided by
    // the number of examples for the mean.
    let targets = ids(&[1, 4, 1, 0], &[4]);
    for reduction in [Reduction::Mean, Reduction::Sum, Reduction::None] {
        check(
            &format!("cross_entropy [4,5] {reduction:?}"),
            |t| t[0].cross_entropy(&targets, reduction),
            &[randn(&[4, 5], 170)],
        );
    }
}

#[test]
fn cross_entropy_gradcheck_with_sequence_logits() {
    // [B, T, C] logits with [B, T] targets.
    let targets = ids(&[0, 3, 3, 2, 1, 0], &[2, 3]);
    for reduction in [Reduction::Mean, Reduction::Sum, Reduction::None] {
        check(
            &format!("cross_entropy [2,3,4] {reduction:?}"),
            |t| t[0].cross_entropy(&targets, reduction),
            &[randn(&[2, 3, 4], 171)],
        );
    }
}

// ---- composites ---------------------------------------------------------------------------

#[test]
fn composite_attention_scores_gradcheck() {
    // softmax(Q Kᵀ / √d) V, with a causal mask: every op of an attention head at once.
    let causal = mask(&[0, 1, 1, 0, 0, 1, 0, 0, 0], &[3, 3]);
    check(
        "attention",
        |t| {
            let scores = t[0].matmul(&t[1].transpose(-1, -2)) / 2.0;
            scores.masked_fill(&causal, -1e9).softmax(-1).matmul(&t[2])
        },
        &[
            randn(&[2, 3, 4], 180),
            randn(&[2, 3, 4], 181),
            randn(&[2, 3, 4], 182),
        ],
    );
}

#[test]
fn repeat_interleave_gradcheck() {
    // Each input entry is copied `repeats` times, so its gradient is the sum of the
    // upstream over its copies.
    check(
        "repeat_interleave [2,3] x2 dim 0",
        |t| t[0].repeat_interleave(2, 0),
        &[randn(&[2, 3], 91)],
    );
    check(
        "repeat_interleave [2,3] x3 dim -1",
        |t| t[0].repeat_interleave(3, -1),
        &[randn(&[2, 3], 92)],
    );
}
