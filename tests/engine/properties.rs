//! Properties that must hold for every shape and value, checked on random ones: broadcasting
//! against an explicitly indexed reference, reductions against naive loops and against each
//! other, gradients of composite expressions against finite differences, and dropout's
//! statistics.

use crate::common;

use common::{away_from_zero, check, panic_message, randn, uniform};
use engine::shape::{broadcast_shapes, numel, strides};
use engine::{Tensor, manual_seed};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Few cases, so the file runs in seconds in a debug build; no regression files.
fn config() -> Config {
    Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A shape of rank `rank` with sizes 1..=`max`.
fn shape(
    rank: std::ops::RangeInclusive<usize>,
    max: usize,
) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1..=max, rank)
}

/// Two shapes that broadcast together: each is a suffix of a common result shape with some
/// of its sizes replaced by 1.
fn compatible_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape(0..=4, 3)
        .prop_flat_map(|out| {
            let r = out.len();
            (
                Just(out),
                0..=r,
                0..=r,
                prop::collection::vec(any::<bool>(), r),
                prop::collection::vec(any::<bool>(), r),
            )
        })
        .prop_map(|(out, ra, rb, ones_a, ones_b)| {
            let r = out.len();
            let make = |rank: usize, ones: &[bool]| -> Vec<usize> {
                (r - rank..r)
                    .map(|d| if ones[d] { 1 } else { out[d] })
                    .collect()
            };
            (make(ra, &ones_a), make(rb, &ones_b))
        })
}

/// Two shapes that do not broadcast: one aligned dimension has sizes 2 and 3.
fn incompatible_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape(1..=4, 3)
        .prop_flat_map(|a| {
            let r = a.len();
            (Just(a), 0..r, 0..r)
        })
        .prop_map(|(mut a, clash, drop)| {
            let mut b = a.clone();
            a[clash] = 2;
            b[clash] = 3;
            // Drop leading dimensions of b, but never the clashing one.
            let drop = drop.min(clash);
            (a, b[drop..].to_vec())
        })
}

/// The row-major index into a tensor of shape `from` that broadcasting reads for the
/// multi-index `at` of the result (`from` aligned on the right; size-1 dims always read 0).
fn broadcast_source(at: &[usize], from: &[usize]) -> usize {
    let pad = at.len() - from.len();
    let st = strides(from);
    (0..from.len())
        .map(|d| if from[d] == 1 { 0 } else { at[d + pad] * st[d] })
        .sum()
}

/// The multi-index of row-major position `flat` in `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut at = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        at[d] = flat % shape[d];
        flat /= shape[d];
    }
    at
}

/// The dimensions whose flag is set.
fn dims_subset(mask: &[bool]) -> Vec<usize> {
    (0..mask.len()).filter(|&d| mask[d]).collect()
}

proptest! {
    #![proptest_config(config())]

    // ---- broadcasting ---------------------------------------------------------------------

    #[test]
    fn broadcast_binary_ops_match_an_indexed_reference(
        (sa, sb) in compatible_shapes(),
        seed in any::<u64>(),
        which in 0usize..4,
    ) {
        let a = randn(&sa, seed);
        // Divisors are kept away from 0; the other operands are used as drawn.
        let b = if which == 3 {
            away_from_zero(&sb, 0.5, seed ^ 1)
        } else {
            randn(&sb, seed ^ 1)
        };
        let (op, f): (&str, fn(f32, f32) -> f32) = match which {
            0 => ("add", |x, y| x + y),
            1 => ("sub", |x, y| x - y),
            2 => ("mul", |x, y| x * y),
            _ => ("div", |x, y| x / y),
        };
        let c = match which {
            0 => &a + &b,
            1 => &a - &b,
            2 => &a * &b,
            _ => &a / &b,
        };
        let expected_shape = broadcast_shapes(&sa, &sb).expect("compatible by construction");
        prop_assert_eq!(c.shape(), expected_shape.as_slice(), "{} of {:?} and {:?}", op, sa, sb);
        let (av, bv, cv) = (a.to_vec(), b.to_vec(), c.to_vec());
        for (i, &got) in cv.iter().enumerate() {
            let at = unravel(i, &expected_shape);
            let want = f(av[broadcast_source(&at, &sa)], bv[broadcast_source(&at, &sb)]);
            prop_assert_eq!(got, want, "{} element {} ({:?})", op, i, at);
        }
    }

    #[test]
    fn broadcast_to_matches_an_indexed_reference(
        (sa, sb) in compatible_shapes(),
        seed in any::<u64>(),
    ) {
        let target = broadcast_shapes(&sa, &sb).expect("compatible by construction");
        let a = randn(&sa, seed);
        let out = a.broadcast_to(&target);
        prop_assert_eq!(out.shape(), target.as_slice());
        let (av, ov) = (a.to_vec(), out.to_vec());
        for (i, &got) in ov.iter().enumerate() {
            prop_assert_eq!(got, av[broadcast_source(&unravel(i, &target), &sa)]);
        }
    }

    #[test]
    fn incompatible_shapes_do_not_broadcast_and_ops_panic(
        (sa, sb) in incompatible_shapes(),
    ) {
        prop_assert_eq!(broadcast_shapes(&sa, &sb), None);
        let (a, b) = (Tensor::zeros(&sa), Tensor::zeros(&sb));
        // The panic is the shape check's, not an index error from inside a kernel.
        let add = panic_message(|| { let _ = &a + &b; });
        prop_assert!(add.starts_with(&format!("add: cannot broadcast {sa:?} with {sb:?}")), "{}", add);
        let mul = panic_message(|| { let _ = &b * &a; });
        prop_assert!(mul.starts_with(&format!("mul: cannot broadcast {sb:?} with {sa:?}")), "{}", mul);
        let to = panic_message(|| { let _ = a.broadcast_to(&sb); });
        prop_assert!(to.starts_with(&format!("broadcast_to: cannot broadcast {sa:?} to {sb:?}")), "{}", to);
    }

    // ---- reductions -----------------------------------------------------------------------

    #[test]
    fn sum_dims_matches_a_naive_reference(
        (s, reduce) in shape(1..=4, 4).prop_flat_map(|s| {
            let r = s.len();
            (Just(s), prop::collection::vec(any::<bool>(), r))
        }),
        keepdim in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let dims = dims_subset(&reduce);
        let x = randn(&s, seed);
        let got = if keepdim { x.sum_dims_keepdim(&dims) } else { x.sum_dims(&dims) };

        // Reference: add every element into the output slot its index maps to, in f64.
        let kept: Vec<usize> = s.iter().enumerate()
            .map(|(d, &n)| if reduce[d] { 1 } else { n })
            .collect();
        let mut want = vec![0.0f64; numel(&kept)];
        let mut magnitude = vec![0.0f64; numel(&kept)];
        let kept_strides = strides(&kept);
        let xv = x.to_vec();
        for (i, &v) in xv.iter().enumerate() {
            let at = unravel(i, &s);
            let slot: usize = (0..s.len())
                .map(|d| if reduce[d] { 0 } else { at[d] * kept_strides[d] })
                .sum();
            want[slot] += f64::from(v);
            magnitude[slot] += f64::from(v.abs());
        }
        let want_shape: Vec<usize> = if keepdim {
            kept
        } else {
            s.iter().enumerate().filter(|&(d, _)| !reduce[d]).map(|(_, &n)| n).collect()
        };
        prop_assert_eq!(got.shape(), want_shape.as_slice(), "dims {:?}", dims);
        // f32 rounding grows with the magnitude of the summed terms, not with the sum.
        for ((g, w), m) in got.to_vec().iter().zip(&want).zip(&magnitude) {
            prop_assert!((f64::from(*g) - w).abs() <= 1e-5 * (1.0 + m),
                "dims {:?}: {} vs {}", dims, g, w);
        }
    }

    #[test]
    fn sum_dim_then_sum_equals_sum(
        (s, dim) in shape(1..=4, 4).prop_flat_map(|s| { let r = s.len(); (Just(s), 0..r) }),
        keepdim in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        let total = x.sum().item();
        let staged = if keepdim { x.sum_dim_keepdim(dim) } else { x.sum_dim(dim) }.sum().item();
        prop_assert!((total - staged).abs() <= 1e-4 * (1.0 + x.numel() as f32).sqrt(),
            "{} vs {}", total, staged);
    }

    #[test]
    fn mean_times_numel_equals_sum(
        s in shape(0..=4, 4),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        let n = x.numel() as f32;
        let (mean, sum) = (x.mean().item(), x.sum().item());
        prop_assert!((mean * n - sum).abs() <= 1e-5 * (1.0 + sum.abs() + n), "{} · {} vs {}", mean, n, sum);
    }

    #[test]
    fn mean_dim_times_size_equals_sum_dim(
        (s, dim) in shape(1..=4, 4).prop_flat_map(|s| { let r = s.len(); (Just(s), 0..r) }),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        let scaled = (x.mean_dim(dim) * s[dim] as f32).to_vec();
        for (m, t) in scaled.iter().zip(x.sum_dim(dim).to_vec()) {
            prop_assert!((m - t).abs() <= 1e-5 * (1.0 + t.abs()), "{} vs {}", m, t);
        }
    }

    #[test]
    fn max_dim_is_at_least_every_element_and_is_attained(
        (s, dim) in shape(1..=4, 4).prop_flat_map(|s| { let r = s.len(); (Just(s), 0..r) }),
        keepdim in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        let m = if keepdim { x.max_dim_keepdim(dim) } else { x.max_dim(dim) };
        let mut kept = s.clone();
        kept[dim] = 1;
        let expected_shape: Vec<usize> = if keepdim {
            kept.clone()
        } else {
            s.iter().enumerate().filter(|&(d, _)| d != dim).map(|(_, &n)| n).collect()
        };
        prop_assert_eq!(m.shape(), expected_shape.as_slice());
        let mv = m.to_vec();
        let mut attained = vec![false; mv.len()];
        let kept_strides = strides(&kept);
        for (i, &v) in x.to_vec().iter().enumerate() {
            let at = unravel(i, &s);
            let slot: usize = (0..s.len())
                .map(|d| if d == dim { 0 } else { at[d] * kept_strides[d] })
                .sum();
            prop_assert!(v <= mv[slot], "element {:?} = {} exceeds its max {}", at, v, mv[slot]);
            attained[slot] |= v == mv[slot];
        }
        prop_assert!(attained.iter().all(|&a| a), "some maximum is not an element of its line");
    }

    #[test]
    fn max_is_at_least_every_element_and_is_attained(
        s in shape(0..=4, 4),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        let m = x.max();
        prop_assert_eq!(m.shape(), &[] as &[usize]);
        let xv = x.to_vec();
        prop_assert!(xv.iter().all(|&v| v <= m.item()));
        prop_assert!(xv.contains(&m.item()));
    }

    // ---- gradients of composite expressions -----------------------------------------------

    #[test]
    fn a_second_backward_adds_to_the_leaf_gradient(
        s in shape(0..=3, 4),
        seed in any::<u64>(),
    ) {
        // L = Σ x², so each backward adds 2x to x's gradient.
        let x = randn(&s, seed).requires_grad_();
        let loss = (&x * &x).sum();
        loss.backward();
        loss.backward();
        let grad = x.grad().expect("x requires a gradient").to_vec();
        for (g, v) in grad.iter().zip(x.to_vec()) {
            prop_assert!((g - 4.0 * v).abs() <= 1e-6 * (1.0 + v.abs()), "{} vs 4·{}", g, v);
        }
    }

    #[test]
    fn softmax_along_a_random_dim_passes_gradcheck(
        (s, dim) in shape(1..=3, 4).prop_flat_map(|s| { let r = s.len(); (Just(s), 0..r) }),
        seed in any::<u64>(),
    ) {
        let x = randn(&s, seed);
        check(&format!("softmax({dim}) of {s:?}"), |t| t[0].softmax(dim), std::slice::from_ref(&x));
        check(&format!("log_softmax({dim}) of {s:?}"), |t| t[0].log_softmax(dim), &[x]);
        // Rows of a softmax sum to 1.
        let sums = randn(&s, seed).softmax(dim).sum_dim(dim).to_vec();
        prop_assert!(sums.iter().all(|&v| (v - 1.0).abs() < 1e-5), "{:?}", sums);
    }

    #[test]
    fn broadcast_mul_then_sum_passes_gradcheck(
        (sa, sb) in compatible_shapes(),
        seed in any::<u64>(),
    ) {
        // (a ⊙ b) summed over its first dimension: both broadcasting and a reduction in the
        // backward pass.
        let f = |t: &[Tensor]| {
            let c = &t[0] * &t[1];
            if c.rank() > 0 { c.sum_dim(0) } else { c }
        };
        check(&format!("{sa:?} * {sb:?}"), f, &[randn(&sa, seed), randn(&sb, seed ^ 1)]);
    }

    #[test]
    fn matmul_of_random_compatible_shapes_passes_gradcheck(
        (ba, bb) in compatible_shapes().prop_filter("small batch", |(a, b)| a.len() <= 2 && b.len() <= 2),
        (m, k, n) in (1usize..=3, 1usize..=3, 1usize..=3),
        seed in any::<u64>(),
    ) {
        let mut sa = ba.clone();
        sa.extend([m, k]);
        let mut sb = bb.clone();
        sb.extend([k, n]);
        check(
            &format!("{sa:?} x {sb:?}"),
            |t| t[0].matmul(&t[1]),
            &[randn(&sa, seed), randn(&sb, seed ^ 1)],
        );
    }

    #[test]
    fn permute_concat_narrow_pass_gradcheck(
        (s, perm) in shape(1..=3, 3).prop_flat_map(|s| {
            let r = s.len();
            (Just(s), Just((0..r).collect::<Vec<usize>>()).prop_shuffle())
        }),
        (dim_pick, start_pick, len_pick) in (any::<usize>(), any::<usize>(), any::<usize>()),
        seed in any::<u64>(),
    ) {
        // Permute, concatenate with a second tensor along a random dim, take a random
        // stretch back out: the gradient must reach exactly the entries that survive.
        let dim = dim_pick % s.len();
        let permuted: Vec<usize> = perm.iter().map(|&p| s[p]).collect();
        let mut other = permuted.clone();
        other[dim] += 1;
        let total = permuted[dim] + other[dim];
        let start = start_pick % total;
        let len = 1 + len_pick % (total - start);
        check(
            &format!("permute {perm:?} of {s:?}, concat dim {dim}, narrow {start}+{len}"),
            |t| Tensor::concat(&[t[0].permute(&perm), t[1].clone()], dim).narrow(dim, start, len),
            &[randn(&s, seed), randn(&other, seed ^ 1)],
        );
    }
}

// ---- dropout ------------------------------------------------------------------------------

#[test]
fn dropout_in_eval_mode_is_the_identity() {
    let x = randn(&[4, 5], 1);
    for p in [0.0, 0.3, 0.9] {
        assert_eq!(x.dropout(p, false).to_vec(), x.to_vec(), "p = {p}");
    }
    // p = 0 in training keeps everything too.
    assert_eq!(x.dropout(0.0, true).to_vec(), x.to_vec());
}

#[test]
fn dropout_in_training_zeroes_about_p_and_scales_survivors() {
    manual_seed(3);
    let n = 20_000;
    // Values in [1, 2): a zero in the output can only come from the mask.
    let x = uniform(&[n], 1.0, 2.0, 2);
    for p in [0.1f32, 0.5, 0.8] {
        let y = x.dropout(p, true).to_vec();
        let dropped = y.iter().filter(|&&v| v == 0.0).count();
        let fraction = dropped as f32 / n as f32;
        // The standard deviation of the fraction is √(p(1−p)/n) ≤ 0.0036.
        assert!((fraction - p).abs() < 0.02, "p = {p}: dropped {fraction}");
        for (&out, &inp) in y.iter().zip(&x.to_vec()) {
            if out != 0.0 {
                let expected = inp / (1.0 - p);
                assert!(
                    (out - expected).abs() <= 1e-6 * expected.abs(),
                    "p = {p}: survivor {inp} became {out}, expected {expected}"
                );
            }
        }
    }
}

#[test]
fn dropout_with_the_same_seed_draws_the_same_mask() {
    let x = randn(&[8, 16], 4);
    manual_seed(42);
    let first = x.dropout(0.5, true).to_vec();
    let second_draw = x.dropout(0.5, true).to_vec();
    manual_seed(42);
    let again = x.dropout(0.5, true).to_vec();
    manual_seed(43);
    let other_seed = x.dropout(0.5, true).to_vec();
    assert_eq!(first, again, "same seed, different mask");
    assert_ne!(first, second_draw, "the generator did not advance");
    assert_ne!(first, other_seed, "a different seed gave the same mask");
}

#[test]
fn dropout_gradient_is_the_mask_times_the_scale() {
    manual_seed(9);
    let p = 0.25;
    let x = uniform(&[6, 7], 1.0, 2.0, 5).requires_grad_();
    let y = x.dropout(p, true);
    let upstream = randn(&[6, 7], 6);
    y.backward_with(&upstream);
    let grad = x.grad().expect("x requires a gradient").to_vec();
    let kept = y.to_vec().iter().filter(|&&v| v != 0.0).count();
    assert!(
        kept > 0 && kept < 42,
        "the mask should keep some and drop some"
    );
    for (i, ((&g, &out), &u)) in grad
        .iter()
        .zip(&y.to_vec())
        .zip(&upstream.to_vec())
        .enumerate()
    {
        let mask_scale = if out != 0.0 { 1.0 / (1.0 - p) } else { 0.0 };
        assert!(
            (g - u * mask_scale).abs() <= 1e-6 * (1.0 + u.abs()),
            "element {i}: gradient {g}, expected {}",
            u * mask_scale
        );
    }
}

#[test]
fn dropout_with_p_one_zeroes_everything_and_its_gradient() {
    let x = randn(&[3, 4], 7).requires_grad_();
    let y = x.dropout(1.0, true);
    assert!(y.to_vec().iter().all(|&v| v == 0.0));
    y.backward_with(&randn(&[3, 4], 8));
    assert!(x.grad().unwrap().to_vec().iter().all(|&v| v == 0.0));
}
