//! The fused `additive_scores` op against its definition, the composed form
//! `(q.unsqueeze(2) + k.unsqueeze(1)).tanh() · w` (and `.relu()` for
//! `additive_scores_with(.., Activation::Relu)`): values, every gradient, finite
//! differences, the edge cases of its loops, and its error messages.

use crate::common;

use common::{check, panic_at, panic_message, randn};
use engine::{Activation, Tensor, memory};

/// The composed (broadcast) form with the activation `f`: builds `[B, Q, K, h]`.
fn composed_with(
    queries: &Tensor,
    keys: &Tensor,
    w: &Tensor,
    f: Activation,
) -> Tensor {
    f.apply(&(queries.unsqueeze(2) + keys.unsqueeze(1)))
        .matmul(&w.unsqueeze(1))
        .squeeze(-1)
}

#[track_caller]
fn assert_close(what: &str, fused: &Tensor, composed: &Tensor, tol: f32) {
    assert_eq!(fused.shape(), composed.shape(), "{what}: shapes");
    let scale = composed.to_vec().iter().fold(1.0f32, |m, v| m.max(v.abs()));
    let worst = fused
        .to_vec()
        .iter()
        .zip(composed.to_vec())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(
        worst <= tol * scale,
        "{what}: largest difference {worst:e} (scale {scale})"
    );
}

/// Values and the three gradients of both forms, with the same upstream gradient.
fn both_forms(b: usize, q: usize, k: usize, h: usize, seed: u64) {
    for f in [Activation::Tanh, Activation::Relu] {
        both_forms_with(b, q, k, h, seed, f);
    }
}

/// [`both_forms`] for one activation.
fn both_forms_with(b: usize, q: usize, k: usize, h: usize, seed: u64, f: Activation) {
    let queries = randn(&[b, q, h], seed).requires_grad_();
    let keys = randn(&[b, k, h], seed + 1).requires_grad_();
    let w = randn(&[h], seed + 2).requires_grad_();
    let upstream = randn(&[b, q, k], seed + 3);
    let what = format!("{f}, B={b} Q={q} K={k} h={h}");

    let fused = queries.additive_scores_with(&keys, &w, f);
    fused.backward_with(&upstream);
    let fused_grads: Vec<Tensor> = [&queries, &keys, &w]
        .iter()
        .map(|t| t.grad().unwrap())
        .collect();
    for t in [&queries, &keys, &w] {
        t.zero_grad();
    }
    let plain = composed_with(&queries, &keys, &w, f);
    plain.backward_with(&upstream);

    assert_close(&format!("{what}: scores"), &fused, &plain, 1e-5);
    for (name, (t, g)) in ["queries", "keys", "w"]
        .iter()
        .zip([&queries, &keys, &w].iter().zip(&fused_grads))
    {
        assert_close(
            &format!("{what}: gradient of the {name}"),
            g,
            &t.grad().unwrap(),
            1e-5,
        );
    }
}

#[test]
fn equals_the_composed_form_in_value_and_every_gradient() {
    // h = 8 and 16 fill the partial sums exactly; 13 and 3 leave a tail; 1 is all tail.
    both_forms(2, 3, 4, 8, 10);
    both_forms(2, 5, 3, 13, 20);
    both_forms(1, 1, 7, 3, 30);
    both_forms(3, 2, 2, 1, 40);
    both_forms(2, 9, 11, 16, 50);
}

#[test]
fn equals_the_composed_form_at_a_realistic_size() {
    // Long sums over h and over keys and queries, as in a real layer.
    both_forms(2, 24, 40, 64, 60);
}

#[test]
fn saturated_inputs_give_the_limits_and_no_nan() {
    // tanh(±50) is ±1 and its derivative 0: scores are ±Σ w, gradients of q and k vanish.
    let queries = Tensor::from_vec(vec![50.0, -50.0], [1, 1, 2]).requires_grad_();
    let keys = Tensor::from_vec(vec![0.0, 0.0], [1, 1, 2]).requires_grad_();
    let w = Tensor::from_vec(vec![2.0, 3.0], [2]).requires_grad_();
    let scores = queries.additive_scores(&keys, &w);
    assert_eq!(scores.to_vec(), vec![2.0 - 3.0]);
    scores.sum().backward();
    assert_eq!(queries.grad().unwrap().to_vec(), vec![0.0, 0.0]);
    assert_eq!(keys.grad().unwrap().to_vec(), vec![0.0, 0.0]);
    assert_eq!(w.grad().unwrap().to_vec(), vec![1.0, -1.0]);
}

#[test]
fn a_nan_input_gives_a_nan_score() {
    let queries = Tensor::from_vec(vec![f32::NAN, 0.0], [1, 1, 2]);
    let keys = Tensor::zeros([1, 2, 2]);
    let w = Tensor::ones([2]);
    let scores = queries.additive_scores(&keys, &w).to_vec();
    assert!(scores.iter().all(|s| s.is_nan()), "{scores:?}");
}

#[test]
fn hand_computed_scores_and_gradients() {
    // q = [0.5, -1], keys [0, 1] and [1, 2], w = [2, 1]:
    // s₀ = 2 tanh(0.5) + tanh(0), s₁ = 2 tanh(1.5) + tanh(1).
    let queries = Tensor::from_vec(vec![0.5, -1.0], [1, 1, 2]).requires_grad_();
    let keys = Tensor::from_vec(vec![0.0, 1.0, 1.0, 2.0], [1, 2, 2]).requires_grad_();
    let w = Tensor::from_vec(vec![2.0, 1.0], [2]).requires_grad_();
    let scores = queries.additive_scores(&keys, &w);
    let th = |x: f32| x.tanh();
    let expected = [2.0 * th(0.5) + th(0.0), 2.0 * th(1.5) + th(1.0)];
    for (s, e) in scores.to_vec().iter().zip(expected) {
        assert!((s - e).abs() < 1e-6, "{s} against {e}");
    }
    // d(s₀ + s₁)/dw = [tanh(0.5) + tanh(1.5), tanh(0) + tanh(1)];
    // d/dq = Σₖ w (1 − tanh²): [2(1 − tanh²0.5) + 2(1 − tanh²1.5), (1 − 0) + (1 − tanh²1)].
    scores.sum().backward();
    let d = |x: f32| 1.0 - th(x) * th(x);
    let expected_w = [th(0.5) + th(1.5), th(0.0) + th(1.0)];
    let expected_q = [2.0 * d(0.5) + 2.0 * d(1.5), d(0.0) + d(1.0)];
    let expected_k = [2.0 * d(0.5), d(0.0), 2.0 * d(1.5), d(1.0)];
    for (got, want) in [
        (w.grad().unwrap().to_vec(), expected_w.to_vec()),
        (queries.grad().unwrap().to_vec(), expected_q.to_vec()),
        (keys.grad().unwrap().to_vec(), expected_k.to_vec()),
    ] {
        for (g, e) in got.iter().zip(&want) {
            assert!((g - e).abs() < 1e-6, "{got:?} against {want:?}");
        }
    }
}

#[test]
fn additive_scores_gradcheck() {
    check(
        "additive_scores [2,3,5] [2,4,5] [5]",
        |t| t[0].additive_scores(&t[1], &t[2]),
        &[randn(&[2, 3, 5], 1), randn(&[2, 4, 5], 2), randn(&[5], 3)],
    );
    check(
        "additive_scores [1,2,9] [1,3,9] [9] (a partial-sum block and a tail)",
        |t| t[0].additive_scores(&t[1], &t[2]),
        &[randn(&[1, 2, 9], 4), randn(&[1, 3, 9], 5), randn(&[9], 6)],
    );
}

#[test]
fn additive_scores_with_relu_gradcheck() {
    // ReLU has a kink at 0, where finite differences straddle two slopes: keep every
    // q + k away from it (|q| in [0.5, 1.5], |k| below 0.25).
    let queries = common::away_from_zero(&[2, 3, 6], 0.5, 7);
    let keys = common::uniform(&[2, 4, 6], -0.25, 0.25, 8);
    check(
        "additive_scores_with relu [2,3,6] [2,4,6] [6]",
        |t| t[0].additive_scores_with(&t[1], &t[2], Activation::Relu),
        &[queries, keys, randn(&[6], 9)],
    );
}

#[test]
fn relu_scores_by_hand_and_no_gradient_where_every_energy_is_negative() {
    // q + k = [1.5, -2], [-0.5, -1]: w·relu = 2·1.5 + 0 = 3, and 0 (every energy < 0).
    let queries = Tensor::from_vec(vec![0.5, -1.0], [1, 1, 2]).requires_grad_();
    let keys =
        Tensor::from_vec(vec![1.0, -1.0, -1.0, 0.0], [1, 2, 2]).requires_grad_();
    let w = Tensor::from_vec(vec![2.0, 1.0], [2]).requires_grad_();
    let scores = queries.additive_scores_with(&keys, &w, Activation::Relu);
    assert_eq!(scores.to_vec(), vec![3.0, 0.0]);
    scores.sum().backward();
    // Only the first key's first unit is active: dq = w[0] there, dw = its energy.
    assert_eq!(queries.grad().unwrap().to_vec(), vec![2.0, 0.0]);
    assert_eq!(keys.grad().unwrap().to_vec(), vec![2.0, 0.0, 0.0, 0.0]);
    assert_eq!(w.grad().unwrap().to_vec(), vec![1.5, 0.0]);
}

#[test]
fn a_nan_energy_stays_nan_through_the_fused_relu_as_through_the_element_wise_one() {
    // q + k = [NaN, 1]: relu keeps the NaN, so the score is NaN; its slope there is 1,
    // as the element-wise relu's (PyTorch's), so the NaN reaches every gradient through
    // w[0] alone, and the finite unit's gradients are untouched.
    let queries = Tensor::from_vec(vec![f32::NAN, 0.5], [1, 1, 2]).requires_grad_();
    let keys = Tensor::from_vec(vec![1.0, 0.5], [1, 1, 2]).requires_grad_();
    let w = Tensor::from_vec(vec![2.0, 3.0], [2]).requires_grad_();
    let scores = queries.additive_scores_with(&keys, &w, Activation::Relu);
    assert!(scores.to_vec()[0].is_nan(), "{scores:?}");
    scores.sum().backward();
    let fused = [queries.grad(), keys.grad(), w.grad()].map(|g| g.unwrap().to_vec());
    // dq = dk = g·w·slope = [2, 3]; dw = relu(q + k) = [NaN, 1].
    assert_eq!(fused[0], vec![2.0, 3.0]);
    assert_eq!(fused[1], vec![2.0, 3.0]);
    assert!(fused[2][0].is_nan() && fused[2][1] == 1.0, "{:?}", fused[2]);
    for t in [&queries, &keys, &w] {
        t.zero_grad();
    }
    composed_with(&queries, &keys, &w, Activation::Relu)
        .sum()
        .backward();
    let composed =
        [queries.grad(), keys.grad(), w.grad()].map(|g| g.unwrap().to_vec());
    assert_eq!(
        format!("{fused:?}"),
        format!("{composed:?}"),
        "the composed form agrees"
    );
}

#[test]
fn an_energy_of_exactly_zero_sends_no_gradient_as_relu_s_derivative_has_it() {
    // q + k = [0, 0]: relu(0) = 0, and its slope at 0 is 0 (PyTorch's and the element-wise
    // relu's convention), so nothing reaches q, k or w.
    let queries = Tensor::from_vec(vec![0.5, -1.0], [1, 1, 2]).requires_grad_();
    let keys = Tensor::from_vec(vec![-0.5, 1.0], [1, 1, 2]).requires_grad_();
    let w = Tensor::from_vec(vec![2.0, 1.0], [2]).requires_grad_();
    let scores = queries.additive_scores_with(&keys, &w, Activation::Relu);
    assert_eq!(scores.to_vec(), vec![0.0]);
    scores.sum().backward();
    assert_eq!(queries.grad().unwrap().to_vec(), vec![0.0, 0.0]);
    assert_eq!(keys.grad().unwrap().to_vec(), vec![0.0, 0.0]);
    let composed = composed_with(&queries, &keys, &w, Activation::Relu);
    queries.zero_grad();
    composed.sum().backward();
    assert_eq!(
        queries.grad().unwrap().to_vec(),
        vec![0.0, 0.0],
        "the composed form agrees"
    );
}

#[test]
fn empty_sizes_give_empty_or_zero_results() {
    let w = Tensor::ones([4]);
    assert_eq!(
        Tensor::zeros([2, 0, 4])
            .additive_scores(&Tensor::zeros([2, 3, 4]), &w)
            .shape(),
        &[2, 0, 3]
    );
    assert_eq!(
        Tensor::zeros([2, 3, 4])
            .additive_scores(&Tensor::zeros([2, 0, 4]), &w)
            .shape(),
        &[2, 3, 0]
    );
    // h = 0: every score is an empty sum.
    let scores = Tensor::zeros([1, 2, 0])
        .additive_scores(&Tensor::zeros([1, 3, 0]), &Tensor::zeros([0]));
    assert_eq!(scores.to_vec(), vec![0.0; 6]);
}

#[test]
fn empty_sizes_have_empty_or_zero_gradients() {
    // No query, no key, or h = 0: the backward pass has nothing to add up.
    for (q, k, h) in [(0, 3, 4), (2, 0, 4), (2, 3, 0)] {
        let queries = Tensor::zeros([2, q, h]).requires_grad_();
        let keys = Tensor::ones([2, k, h]).requires_grad_();
        let w = Tensor::ones([h]).requires_grad_();
        queries.additive_scores(&keys, &w).sum().backward();
        for (t, shape) in [
            (&queries, vec![2, q, h]),
            (&keys, vec![2, k, h]),
            (&w, vec![h]),
        ] {
            let g = t.grad().unwrap();
            assert_eq!(g.shape(), &shape[..]);
            assert!(g.to_vec().iter().all(|&v| v == 0.0), "Q={q} K={k} h={h}");
        }
    }
}

#[test]
fn never_allocates_the_broadcast_tensor() {
    // [B, Q, K, h] = [2, 64, 64, 32] is 1 MiB; the fused op's forward and backward stay
    // near the size of their inputs and scores (about 64 KiB each).
    let queries = randn(&[2, 64, 32], 1).requires_grad_();
    let keys = randn(&[2, 64, 32], 2).requires_grad_();
    let w = randn(&[32], 3).requires_grad_();
    memory::reset_peak();
    let before = memory::live_bytes();
    let scores = queries.additive_scores(&keys, &w);
    scores.sum().backward();
    let used = memory::peak_bytes() - before;
    let broadcast = 2 * 64 * 64 * 32 * 4;
    assert!(
        used < broadcast / 4,
        "peak {used} bytes, the broadcast tensor alone is {broadcast}"
    );
}

#[test]
fn shape_errors_name_the_op_the_shapes_and_the_caller() {
    let message = panic_message(|| {
        Tensor::zeros([2, 3, 4])
            .additive_scores(&Tensor::zeros([2, 5, 6]), &Tensor::zeros([4]));
    });
    assert!(
        message.starts_with(
            "additive_scores: the hidden sizes differ: queries [2, 3, 4], keys [2, 5, 6], w [4]"
        ),
        "{message}"
    );
    let message = panic_message(|| {
        Tensor::zeros([2, 3, 4])
            .additive_scores(&Tensor::zeros([3, 5, 4]), &Tensor::zeros([4]));
    });
    assert!(
        message.contains("different batch sizes (2 and 3)"),
        "{message}"
    );
    let message = panic_message(|| {
        Tensor::zeros([2, 3, 4])
            .additive_scores(&Tensor::zeros([2, 5, 4]), &Tensor::zeros([1, 4]));
    });
    assert!(
        message.starts_with(
            "additive_scores: the weight w must have 1 dimensions, found shape [1, 4]"
        ),
        "{message}"
    );
    let raised = panic_at(|| {
        Tensor::zeros([3, 4])
            .additive_scores(&Tensor::zeros([2, 5, 4]), &Tensor::zeros([4]));
    });
    assert!(raised.file.ends_with("additive_scores.rs"), "{raised:?}");
}
