//! `blocked_attention` against full attention (`Q Kᵀ`, a masked softmax with the safe fill,
//! then `· V`, through the attention library): the output and the three gradients over
//! random shapes, masks and block sizes (including blocks that do not divide the number of
//! keys), finite differences, rows that see no key, NaN, memory that grows linearly, and
//! its error messages.

use crate::common;

use attention::{Fill, Mask, masked_softmax};
use common::{check, panic_message, randn};
use engine::{BlockedAttentionOptions, Tensor, memory};
use proptest::prelude::*;

/// The masks of one case, as the kernel takes them and as a full `[..., Q, K]` keep mask.
#[derive(Clone, Debug)]
struct Masks {
    causal_offset: Option<usize>,
    /// Lengths `[N]` (`per_query` false) or `[N, Q]`.
    lengths: Option<(Vec<f32>, bool)>,
    /// Keep mask `[N, 1, K]` (`per_query` false) or `[N, Q, K]`.
    keep: Option<(Vec<f32>, bool)>,
}

impl Masks {
    const NONE: Masks = Masks {
        causal_offset: None,
        lengths: None,
        keep: None,
    };

    /// The options for leading dimensions `[N]`.
    fn options(
        &self,
        n: usize,
        q: usize,
        k: usize,
        block: usize,
    ) -> BlockedAttentionOptions {
        BlockedAttentionOptions {
            block,
            causal_offset: self.causal_offset,
            lengths: self.lengths.as_ref().map(|(l, per_query)| {
                let shape = if *per_query { vec![n, q] } else { vec![n] };
                Tensor::from_vec(l.clone(), shape)
            }),
            keep: self.keep.as_ref().map(|(m, per_query)| {
                let rows = if *per_query { q } else { 1 };
                Tensor::from_vec(m.clone(), [n, rows, k])
            }),
            ..Default::default()
        }
    }

    /// The full keep mask `[N, Q, K]`, written out with plain loops.
    fn full(&self, n: usize, q: usize, k: usize) -> Tensor {
        let mut keep = vec![1.0; n * q * k];
        for b in 0..n {
            for i in 0..q {
                for j in 0..k {
                    let mut sees = true;
                    if let Some(offset) = self.causal_offset {
                        sees &= j <= i + offset;
                    }
                    if let Some((l, per_query)) = &self.lengths {
                        sees &=
                            (j as f32) < l[if *per_query { b * q + i } else { b }];
                    }
                    if let Some((m, per_query)) = &self.keep {
                        let row = if *per_query { b * q + i } else { b };
                        sees &= m[row * k + j] == 1.0;
                    }
                    if !sees {
                        keep[(b * q + i) * k + j] = 0.0;
                    }
                }
            }
        }
        Tensor::from_vec(keep, [n, q, k])
    }
}

/// Full attention with the safe fill: what `blocked_attention` must equal.
fn full_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: f32,
    keep: &Tensor,
) -> Tensor {
    let scores = q.matmul_t(k) * scale;
    masked_softmax(&scores, &Mask::keep(keep), Fill::Safe).matmul(v)
}

/// The output and the gradients of queries, keys and values under `upstream`.
fn run(
    f: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
    inputs: [&Tensor; 3],
    upstream: &Tensor,
) -> Vec<Tensor> {
    let [q, k, v] = inputs.map(|t| t.detach().requires_grad_());
    let out = f(&q, &k, &v);
    out.backward_with(upstream);
    vec![
        out.detach(),
        q.grad().unwrap(),
        k.grad().unwrap(),
        v.grad().unwrap(),
    ]
}

/// The largest difference between two tensors, each element measured against
/// `max(1, |expected|)`.
fn worst(got: &Tensor, want: &Tensor) -> f32 {
    assert_eq!(got.shape(), want.shape());
    got.to_vec()
        .iter()
        .zip(want.to_vec())
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(0.0, f32::max)
}

/// Compares blocked and full attention on one case: output and every gradient to 1e-5.
fn compare(
    dims: (usize, usize, usize, usize, usize),
    block: usize,
    masks: &Masks,
    seed: u64,
) {
    let (n, q, k, d, dv) = dims;
    let (queries, keys, values) = (
        randn(&[n, q, d], seed),
        randn(&[n, k, d], seed + 1),
        randn(&[n, k, dv], seed + 2),
    );
    let upstream = randn(&[n, q, dv], seed + 3);
    let options = masks.options(n, q, k, block);
    let scale = 1.0 / (d as f32).sqrt();
    let keep = masks.full(n, q, k);
    let blocked = run(
        |a, b, c| a.blocked_attention(b, c, &options),
        [&queries, &keys, &values],
        &upstream,
    );
    let full = run(
        |a, b, c| full_attention(a, b, c, scale, &keep),
        [&queries, &keys, &values],
        &upstream,
    );
    for (name, (got, want)) in ["output", "dQ", "dK", "dV"]
        .iter()
        .zip(blocked.iter().zip(&full))
    {
        let w = worst(got, want);
        assert!(
            w <= 1e-5,
            "{name}: largest difference {w:e}; dims {dims:?}, block {block}, {masks:?}"
        );
    }
}

/// A strategy for one case: sizes, a block size from 1 to past `K`, and any combination
/// of the three masks.
fn cases()
-> impl Strategy<Value = ((usize, usize, usize, usize, usize), usize, Masks, u64)> {
    (1usize..4, 1usize..40, 0usize..70, 1usize..9, 1usize..7).prop_flat_map(|dims| {
        let (n, q, k, _, _) = dims;
        let causal = proptest::option::of(0usize..(k + 3));
        let lengths =
            proptest::option::of(any::<bool>().prop_flat_map(move |per_query| {
                let count = if per_query { n * q } else { n };
                proptest::collection::vec(0usize..(k + 3), count).prop_map(move |l| {
                    (l.into_iter().map(|x| x as f32).collect(), per_query)
                })
            }));
        let keep =
            proptest::option::of(any::<bool>().prop_flat_map(move |per_query| {
                let count = if per_query { n * q * k } else { n * k };
                proptest::collection::vec(
                    prop_oneof![1 => Just(0.0f32), 3 => Just(1.0f32)],
                    count,
                )
                .prop_map(move |m| (m, per_query))
            }));
        (
            Just(dims),
            1usize..(k + 6),
            (causal, lengths, keep).prop_map(|(causal_offset, lengths, keep)| {
                Masks {
                    causal_offset,
                    lengths,
                    keep,
                }
            }),
            any::<u64>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn blocked_attention_equals_full_attention_with_any_masks_and_blocks(
        (dims, block, masks, seed) in cases()
    ) {
        compare(dims, block, &masks, seed);
    }
}

#[test]
fn blocks_that_do_not_divide_the_keys_and_long_rows() {
    // 300 keys in blocks of 64 (the last holds 44), causal with padding, several runs of
    // queries; and one block larger than all keys.
    let masks = Masks {
        causal_offset: Some(0),
        lengths: Some((vec![300.0, 170.0], false)),
        keep: None,
    };
    compare((2, 300, 300, 16, 8), 64, &masks, 7);
    compare((1, 130, 300, 8, 8), 1000, &Masks::NONE, 8);
    compare((1, 70, 257, 8, 3), 256, &Masks::NONE, 9);
}

#[test]
fn leading_dimensions_of_batch_and_heads_and_broadcast_masks() {
    // [B, H, Q, d] with lengths [B, 1] (one per batch element, shared by the heads) and a
    // padding mask [B, 1, 1, K].
    let (b, h, q, k, d) = (2, 3, 5, 7, 4);
    let queries = randn(&[b, h, q, d], 1);
    let keys = randn(&[b, h, k, d], 2);
    let values = randn(&[b, h, k, d], 3);
    let lengths = Tensor::from_vec(vec![4.0, 7.0], [b, 1]);
    let pad = Tensor::from_vec(
        vec![1., 1., 0., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 0.],
        [b, 1, 1, k],
    );
    let options = BlockedAttentionOptions {
        block: 3,
        lengths: Some(lengths),
        keep: Some(pad.clone()),
        ..Default::default()
    };
    let blocked = queries.blocked_attention(&keys, &values, &options);
    let mut keep = vec![0.0; b * q * k];
    for bi in 0..b {
        for i in 0..q {
            for j in 0..k {
                let len = [4, 7][bi];
                keep[(bi * q + i) * k + j] =
                    f32::from(j < len && pad.to_vec()[bi * k + j] == 1.0);
            }
        }
    }
    let keep = Tensor::from_vec(keep, [b, 1, q, k]);
    let full = full_attention(&queries, &keys, &values, 0.5, &keep);
    assert!(worst(&blocked, &full) <= 1e-5);
}

#[test]
fn a_per_query_keep_mask_broadcast_over_three_leading_dimensions() {
    // [2, 2, 3, Q, d] queries and a per-query keep mask [2, 1, 1, Q, K]: whether the mask
    // is per query is read from its second-to-last dimension (Q = 4), not from the middle
    // one (1).
    let (q, k, d) = (4, 6, 3);
    let queries = randn(&[2, 2, 3, q, d], 11);
    let keys = randn(&[2, 2, 3, k, d], 12);
    let values = randn(&[2, 2, 3, k, d], 13);
    // Query i of batch element b sees the keys j with (i + j + b) % 3 != 0: another set
    // for each query, and at least four keys each.
    let keep: Vec<f32> = (0..2 * q * k)
        .map(|at| {
            let (b, i, j) = (at / (q * k), at / k % q, at % k);
            f32::from((i + j + b) % 3 != 0)
        })
        .collect();
    let keep = Tensor::from_vec(keep, [2, 1, 1, q, k]);
    let options = BlockedAttentionOptions {
        block: 4,
        keep: Some(keep.clone()),
        ..Default::default()
    };
    let blocked = queries.blocked_attention(&keys, &values, &options);
    let full =
        full_attention(&queries, &keys, &values, 1.0 / (d as f32).sqrt(), &keep);
    assert_eq!(blocked.shape(), [2, 2, 3, q, d]);
    assert!(worst(&blocked, &full) <= 1e-5);
}

#[test]
fn gradients_agree_with_finite_differences() {
    let masks = Masks {
        causal_offset: Some(1),
        lengths: Some((vec![5.0, 3.0], false)),
        keep: None,
    };
    let options = masks.options(2, 4, 6, 4);
    check(
        "blocked_attention, causal and lengths, blocks of 4 over 6 keys",
        |x| x[0].blocked_attention(&x[1], &x[2], &options),
        &[
            randn(&[2, 4, 3], 1),
            randn(&[2, 6, 3], 2),
            randn(&[2, 6, 2], 3),
        ],
    );
    let options = BlockedAttentionOptions {
        block: 2,
        scale: Some(0.7),
        ..Default::default()
    };
    check(
        "blocked_attention, scale 0.7, blocks of 2 over 5 keys",
        |x| x[0].blocked_attention(&x[1], &x[2], &options),
        &[
            randn(&[1, 3, 2], 4),
            randn(&[1, 5, 2], 5),
            randn(&[1, 5, 3], 6),
        ],
    );
}

#[test]
fn a_query_that_sees_no_key_gets_zeros_and_zero_gradients() {
    let (q, k, v) = (
        randn(&[1, 3, 2], 1),
        randn(&[1, 4, 2], 2),
        randn(&[1, 4, 2], 3),
    );
    // Query 1 sees nothing: a per-query length of 0.
    let options = BlockedAttentionOptions {
        block: 3,
        lengths: Some(Tensor::from_vec(vec![4.0, 0.0, 2.0], [1, 3])),
        ..Default::default()
    };
    let grads = run(
        |a, b, c| a.blocked_attention(b, c, &options),
        [&q, &k, &v],
        &Tensor::ones([1, 3, 2]),
    );
    assert_eq!(&grads[0].to_vec()[2..4], &[0.0, 0.0]);
    assert_eq!(&grads[1].to_vec()[2..4], &[0.0, 0.0]);
    // Keys 2 and 3 are seen by query 0 only.
    assert!(grads[2].to_vec().iter().all(|g| g.is_finite()));
    // With no key at all, every output is 0.
    let none = q.blocked_attention(
        &Tensor::zeros([1, 0, 2]),
        &Tensor::zeros([1, 0, 2]),
        &Default::default(),
    );
    assert_eq!(none.to_vec(), vec![0.0; 6]);
}

#[test]
fn no_queries_or_no_keys_give_empty_or_zero_outputs_and_zero_gradients() {
    // (Q, K): no query at all, then queries that have no key to see.
    for (q_len, k_len) in [(0, 4), (3, 0)] {
        let grads = run(
            |a, b, c| a.blocked_attention(b, c, &Default::default()),
            [
                &randn(&[2, q_len, 3], 1),
                &randn(&[2, k_len, 3], 2),
                &randn(&[2, k_len, 5], 3),
            ],
            &Tensor::ones([2, q_len, 5]),
        );
        assert_eq!(grads[0].shape(), [2, q_len, 5], "the output");
        assert!(grads[0].to_vec().iter().all(|&x| x == 0.0));
        for (grad, shape) in
            grads[1..]
                .iter()
                .zip([[2, q_len, 3], [2, k_len, 3], [2, k_len, 5]])
        {
            assert_eq!(grad.shape(), shape);
            assert!(
                grad.to_vec().iter().all(|&g| g == 0.0),
                "Q = {q_len}, K = {k_len}"
            );
        }
    }
}

#[test]
fn a_nan_score_makes_its_row_nan_as_the_full_softmax_does() {
    let mut values = randn(&[1, 2, 2], 1).to_vec();
    values[0] = f32::NAN;
    let q = Tensor::from_vec(values, [1, 2, 2]);
    let (k, v) = (randn(&[1, 5, 2], 2), randn(&[1, 5, 2], 3));
    let out = q
        .blocked_attention(
            &k,
            &v,
            &BlockedAttentionOptions {
                block: 2,
                ..Default::default()
            },
        )
        .to_vec();
    assert!(out[0].is_nan() && out[1].is_nan(), "{out:?}");
    assert!(out[2].is_finite() && out[3].is_finite(), "{out:?}");
}

/// The peak of tensor bytes during a forward and backward pass of `f`, beyond its inputs.
fn peak_of(n: usize, f: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor) -> usize {
    let q = randn(&[2, n, 16], 1).requires_grad_();
    let k = randn(&[2, n, 16], 2).requires_grad_();
    let v = randn(&[2, n, 16], 3).requires_grad_();
    let before = memory::live_bytes();
    memory::reset_peak();
    f(&q, &k, &v).sum().backward();
    memory::peak_bytes() - before
}

#[test]
fn memory_grows_linearly_with_length_where_full_attention_grows_quadratically() {
    let blocked = |q: &Tensor, k: &Tensor, v: &Tensor| {
        q.blocked_attention(k, v, &Default::default())
    };
    let full = |q: &Tensor, k: &Tensor, v: &Tensor| {
        let keep = Tensor::ones([1, 1, 1]);
        full_attention(q, k, v, 0.25, &keep)
    };
    let (short, long) = (512, 1024);
    let blocked_ratio =
        peak_of(long, blocked) as f64 / peak_of(short, blocked) as f64;
    let full_ratio = peak_of(long, full) as f64 / peak_of(short, full) as f64;
    assert!(
        blocked_ratio <= 2.05,
        "blocked: doubling n multiplied the peak by {blocked_ratio}"
    );
    assert!(
        full_ratio >= 3.5,
        "full: doubling n multiplied the peak by {full_ratio}"
    );
    // And at n = 1024 blocked attention holds less than a tenth of full attention's peak.
    assert!(peak_of(long, blocked) * 10 < peak_of(long, full));
}

#[test]
fn mistakes_are_named() {
    let (q, k, v) = (
        Tensor::zeros([2, 3, 4]),
        Tensor::zeros([2, 5, 4]),
        Tensor::zeros([2, 5, 6]),
    );
    let message = panic_message(|| {
        q.blocked_attention(&Tensor::zeros([1, 5, 4]), &v, &Default::default());
    });
    assert!(
        message.contains("blocked_attention")
            && message.contains("leading dimensions")
            && message.contains("[1, 5, 4]"),
        "{message}"
    );
    let message = panic_message(|| {
        q.blocked_attention(&Tensor::zeros([2, 5, 3]), &v, &Default::default());
    });
    assert!(message.contains("same number of features"), "{message}");
    let message = panic_message(|| {
        q.blocked_attention(&k, &Tensor::zeros([2, 4, 6]), &Default::default());
    });
    assert!(message.contains("one value per key"), "{message}");
    let message = panic_message(|| {
        q.blocked_attention(
            &k,
            &v,
            &BlockedAttentionOptions {
                block: 0,
                ..Default::default()
            },
        );
    });
    assert!(
        message.contains("block size") && message.contains("at least 1"),
        "{message}"
    );
    let message = panic_message(|| {
        let lengths = Some(Tensor::from_vec(vec![1.5, 2.0], [2]));
        q.blocked_attention(
            &k,
            &v,
            &BlockedAttentionOptions {
                lengths,
                ..Default::default()
            },
        );
    });
    assert!(
        message.contains("whole numbers") && message.contains("1.5"),
        "{message}"
    );
    let message = panic_message(|| {
        let keep = Some(Tensor::from_vec(vec![0.5; 10], [2, 1, 5]));
        q.blocked_attention(
            &k,
            &v,
            &BlockedAttentionOptions {
                keep,
                ..Default::default()
            },
        );
    });
    assert!(
        message.contains("keep mask") && message.contains("0.5"),
        "{message}"
    );
    let message = panic_message(|| {
        let keep = Some(Tensor::ones([2, 5]));
        q.blocked_attention(
            &k,
            &v,
            &BlockedAttentionOptions {
                keep,
                ..Default::default()
            },
        );
    });
    assert!(message.contains("rank 3"), "{message}");
}

#[test]
fn plain_matrices_take_lengths_with_no_leading_dimension() {
    // Rank 2: no batch at all, so the lengths have no dimension ([] one for all the
    // queries, [Q] one per query), as the leading dimensions of the queries are [].
    let (q, k, v) = (randn(&[3, 4], 41), randn(&[5, 4], 42), randn(&[5, 2], 43));
    let scale = 0.5;
    for (lengths, keep) in [
        (Tensor::scalar(2.0), [1.0, 1.0, 0.0, 0.0, 0.0].repeat(3)),
        (
            Tensor::from_vec(vec![1.0, 3.0, 5.0], [3]),
            [
                [1.0, 0.0, 0.0, 0.0, 0.0],
                [1.0, 1.0, 1.0, 0.0, 0.0],
                [1.0; 5],
            ]
            .concat(),
        ),
    ] {
        let options = BlockedAttentionOptions {
            scale: Some(scale),
            lengths: Some(lengths.clone()),
            block: 2,
            ..Default::default()
        };
        let got = q.blocked_attention(&k, &v, &options);
        let want = full_attention(&q, &k, &v, scale, &Tensor::from_vec(keep, [3, 5]));
        assert_eq!(got.shape(), &[3, 2]);
        assert!(worst(&got, &want) < 1e-6, "lengths {lengths:?}");
    }
    // And keep masks of rank 2: [1, K] for every query, or [Q, K].
    let shared = vec![1.0, 0.0, 1.0, 0.0, 1.0];
    let per_query = [
        [0.0, 1.0, 0.0, 0.0, 0.0],
        [1.0; 5],
        [0.0, 0.0, 0.0, 1.0, 1.0],
    ]
    .concat();
    for (keep, full) in [
        (Tensor::from_vec(shared.clone(), [1, 5]), shared.repeat(3)),
        (Tensor::from_vec(per_query.clone(), [3, 5]), per_query),
    ] {
        let options = BlockedAttentionOptions {
            scale: Some(scale),
            keep: Some(keep.clone()),
            block: 2,
            ..Default::default()
        };
        let got = q.blocked_attention(&k, &v, &options);
        let want = full_attention(&q, &k, &v, scale, &Tensor::from_vec(full, [3, 5]));
        assert!(worst(&got, &want) < 1e-6, "keep {keep:?}");
    }
}

#[test]
fn a_scale_that_is_not_finite_and_positive_and_a_rank_below_two_are_refused() {
    let (q, k, v) = (
        randn(&[1, 3, 4], 44),
        randn(&[1, 5, 4], 45),
        randn(&[1, 5, 2], 46),
    );
    for scale in [f32::INFINITY, 0.0, -1.0, f32::NAN] {
        let message = panic_message(|| {
            let options = BlockedAttentionOptions {
                scale: Some(scale),
                ..Default::default()
            };
            q.blocked_attention(&k, &v, &options);
        });
        assert_eq!(
            message,
            format!(
                "blocked_attention: the scale must be finite and greater than 0, found {scale}"
            )
        );
    }
    let message = panic_message(|| {
        q.blocked_attention(&k, &Tensor::zeros([2, 5, 2]), &Default::default());
    });
    assert!(
        message.contains("leading dimensions") && message.contains("([1], [1], [2])"),
        "values alone with other leading dimensions: {message}"
    );
    let message = panic_message(|| {
        let (q, k) = (Tensor::zeros([1, 3, 0]), Tensor::zeros([1, 5, 0]));
        q.blocked_attention(&k, &v, &Default::default());
    });
    assert!(
        message.contains("the same number of features d ≥ 1")
            && message.contains("found 0 and 0"),
        "no features: {message}"
    );
    let message = panic_message(|| {
        q.blocked_attention(&k, &Tensor::zeros([1, 5, 0]), &Default::default());
    });
    assert_eq!(
        message,
        "blocked_attention: values [1, 5, 0] have no features (dv = 0)"
    );
    let vector = Tensor::ones([4]);
    for (i, inputs) in [[&vector, &k, &v], [&q, &vector, &v], [&q, &k, &vector]]
        .into_iter()
        .enumerate()
    {
        let message = panic_message(|| {
            inputs[0].blocked_attention(inputs[1], inputs[2], &Default::default());
        });
        assert!(
            message.starts_with(
                "blocked_attention: queries, keys and values need shape [..., entries, features]"
            ),
            "input {i} of rank 1: {message}"
        );
    }
}
