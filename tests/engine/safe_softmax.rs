//! `safe_softmax` against its definition, `safe_softmax_composed` (the same formula in the
//! engine's own ops, with causal order written out as a `tril` mask): the same bits,
//! forward and backward, over random shapes, broadcast keep masks, causal offsets and
//! scores that reach the edges (`f32::MIN`, infinities, NaN, rows with nothing visible);
//! and its refusals.

use crate::common::panic_message;

use engine::{SafeSoftmaxMask, Tensor};
use proptest::prelude::*;

/// The bits of `t`, every NaN counted as one value (its sign and payload are the CPU's).
fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec()
        .iter()
        .map(|v| {
            if v.is_nan() {
                f32::NAN.to_bits()
            } else {
                v.to_bits()
            }
        })
        .collect()
}

/// The keep mask of the composed form: `mask.keep` times the causal `tril`.
fn full_keep(shape: &[usize], mask: &SafeSoftmaxMask) -> Tensor {
    let rank = shape.len();
    let keep = mask
        .keep
        .clone()
        .unwrap_or_else(|| Tensor::ones(vec![1; rank]));
    match mask.causal_offset {
        None => keep,
        Some(offset) => {
            let (q, k) = (shape[rank - 2], shape[rank - 1]);
            &keep
                * &Tensor::ones([q, k])
                    .tril(i64::try_from(offset).unwrap_or(i64::MAX))
        }
    }
}

/// The output and the gradient of the scores under `upstream`, fused and composed.
fn both(scores: &[f32], shape: &[usize], mask: &SafeSoftmaxMask, upstream: &[f32]) {
    let run = |f: &dyn Fn(&Tensor) -> Tensor| {
        let x = Tensor::from_vec(scores.to_vec(), shape).requires_grad_();
        let out = f(&x);
        out.backward_with(&Tensor::from_vec(upstream.to_vec(), shape));
        (bits(&out), bits(&x.grad().expect("the scores take part")))
    };
    let fused = run(&|x| x.safe_softmax(mask));
    let keep = full_keep(shape, mask);
    let composed = run(&|x| x.safe_softmax_composed(&keep));
    assert_eq!(fused.0, composed.0, "the weights, {shape:?}, {mask:?}");
    assert_eq!(fused.1, composed.1, "the gradient, {shape:?}, {mask:?}");
}

/// A score: mostly ordinary values, sometimes an edge.
fn score() -> impl Strategy<Value = f32> {
    prop_oneof![
        12 => -30.0f32..30.0,
        1 => Just(f32::MIN),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NAN),
        1 => Just(1e30f32),
    ]
}

/// A gradient from above: mostly ordinary values, now and then an infinity.
fn upstream() -> impl Strategy<Value = f32> {
    prop_oneof![20 => -3.0f32..3.0, 1 => Just(f32::INFINITY)]
}

/// A case: scores `[B, H, Q, K]`, a keep mask of one of the shapes attention uses (or
/// none), a causal offset (or none), and the gradient from above.
fn cases() -> impl Strategy<Value = (Vec<usize>, Vec<f32>, SafeSoftmaxMask, Vec<f32>)>
{
    (1usize..3, 1usize..3, 1usize..7, 1usize..12).prop_flat_map(|(b, h, q, k)| {
        let shape = vec![b, h, q, k];
        let n = b * h * q * k;
        let keep_shapes = vec![
            vec![b, h, q, k],
            vec![b, 1, 1, k],
            vec![b, 1, q, k],
            vec![q, k],
            vec![b, 1, q, 1],
            vec![k],
        ];
        let keep = proptest::option::of(
            proptest::sample::select(keep_shapes).prop_flat_map(|keep_shape| {
                let len = keep_shape.iter().product::<usize>();
                proptest::collection::vec(
                    prop_oneof![1 => Just(0.0f32), 3 => Just(1.0f32)],
                    len,
                )
                .prop_map(move |values| Tensor::from_vec(values, keep_shape.clone()))
            }),
        );
        let causal = proptest::option::of(prop_oneof![
            4 => 0usize..(k + 2),
            1 => Just(usize::MAX),
        ]);
        (
            Just(shape),
            proptest::collection::vec(score(), n),
            (keep, causal).prop_map(|(keep, causal_offset)| SafeSoftmaxMask {
                keep,
                causal_offset,
            }),
            proptest::collection::vec(upstream(), n),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_fused_op_gives_the_bits_of_its_composed_definition(
        (shape, scores, mask, upstream) in cases()
    ) {
        both(&scores, &shape, &mask, &upstream);
    }
}

#[test]
fn the_edges_written_out() {
    // A row with nothing visible, a row whose visible scores are all -inf, a row with
    // f32::MIN beside a masked +inf, and a row with a NaN visible.
    let scores = [
        1.0,
        2.0,
        3.0,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        5.0,
        f32::MIN,
        0.0,
        f32::INFINITY,
        f32::NAN,
        1.0,
        2.0,
    ];
    let keep = Tensor::from_vec(
        vec![0., 0., 0., 1., 1., 0., 1., 1., 0., 1., 1., 1.],
        [4, 3],
    );
    let mask = SafeSoftmaxMask {
        keep: Some(keep),
        causal_offset: None,
    };
    let upstream = [1.0, -2.0, 0.5, 3.0, 1.0, 1.0, 2.0, -1.0, 4.0, 1.0, 1.0, 1.0];
    both(&scores, &[4, 3], &mask, &upstream);
    let out = Tensor::from_vec(scores.to_vec(), [4, 3])
        .safe_softmax(&mask)
        .to_vec();
    assert_eq!(&out[..6], &[0.0; 6], "nothing visible, only -inf visible");
    assert_eq!(
        &out[6..9],
        &[0.0, 1.0, 0.0],
        "f32::MIN beside 0, the +inf masked"
    );
    assert!(
        out[9..].iter().all(|v| v.is_nan()),
        "a visible NaN: {:?}",
        &out[9..]
    );
    // As softmax gives it.
    let plain = Tensor::from_vec(vec![f32::NAN, 1.0, 2.0], [3])
        .softmax(-1)
        .to_vec();
    assert!(plain.iter().all(|v| v.is_nan()), "{plain:?}");
}

/// Seeded scores and gradients from above for `shape`.
fn seeded(shape: &[usize], seed: u64) -> (Vec<f32>, Vec<f32>) {
    let n: usize = shape.iter().product();
    let mut rng = engine::random::rng_from_seed(seed);
    let x = Tensor::normal_with([n], 0.0, 3.0, &mut rng).to_vec();
    let g = Tensor::normal_with([n], 0.0, 1.0, &mut rng).to_vec();
    (x, g)
}

#[test]
fn scores_of_rank_two_three_and_five_read_their_query_positions_right() {
    // Causal order reads each row's query position along the second-to-last dimension,
    // whatever the rank: [5, 3] has more queries than keys, [1, 2, 3, 4, 5] puts the queries
    // at dimension 3.
    for (shape, keep_shape) in [
        (vec![5, 3], vec![1, 3]),
        (vec![2, 5, 3], vec![2, 1, 3]),
        (vec![1, 2, 3, 4, 5], vec![1, 1, 1, 1, 5]),
    ] {
        let (x, g) = seeded(&shape, 3);
        let keys = keep_shape.iter().product();
        let keep: Vec<f32> = (0..keys).map(|j| f32::from(j % 3 != 1)).collect();
        for offset in [0, 1] {
            let mask = SafeSoftmaxMask {
                keep: Some(Tensor::from_vec(keep.clone(), keep_shape.clone())),
                causal_offset: Some(offset),
            };
            both(&x, &shape, &mask, &g);
        }
    }
}

#[test]
fn rows_split_between_threads_give_the_same_bits() {
    // Over a million scores: the kernels split the rows between threads.
    let previous = engine::threads::num_threads();
    engine::threads::set_num_threads(3);
    let shape = [1100, 1000];
    assert!(shape[0] * shape[1] >= engine::threads::PARALLEL_MIN);
    let (x, g) = seeded(&shape, 4);
    let mask = SafeSoftmaxMask {
        keep: None,
        causal_offset: Some(100),
    };
    both(&x, &shape, &mask, &g);
    engine::threads::set_num_threads(previous);
}

#[test]
fn causal_order_from_an_offset_is_the_lower_triangle() {
    let scores = Tensor::zeros([3, 4]);
    let weights = |offset| {
        let mask = SafeSoftmaxMask {
            causal_offset: Some(offset),
            ..Default::default()
        };
        scores.safe_softmax(&mask).to_vec()
    };
    #[rustfmt::skip]
    assert_eq!(weights(1), vec![
        0.5, 0.5, 0.0, 0.0,
        1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0,
        0.25, 0.25, 0.25, 0.25,
    ]);
    assert_eq!(weights(usize::MAX), vec![0.25; 12]);
    // No keys: empty weights.
    let empty = Tensor::zeros([3, 0]).safe_softmax(&SafeSoftmaxMask {
        causal_offset: Some(0),
        ..Default::default()
    });
    assert_eq!(empty.shape(), [3, 0]);
    let keep = SafeSoftmaxMask {
        keep: Some(Tensor::ones([2, 3, 0])),
        causal_offset: Some(0),
    };
    let empty = Tensor::zeros([2, 3, 0]).safe_softmax(&keep);
    assert_eq!(empty.shape(), [2, 3, 0]);
}

#[test]
fn bad_masks_are_refused_with_the_shapes() {
    let scores = Tensor::zeros([2, 3, 4]);
    let widen = SafeSoftmaxMask {
        keep: Some(Tensor::ones([5, 1, 1, 4])),
        ..Default::default()
    };
    let message = panic_message(|| {
        scores.safe_softmax(&widen);
    });
    assert!(
        message.contains("safe_softmax: the keep mask [5, 1, 1, 4] must broadcast to the scores [2, 3, 4]"),
        "{message}"
    );
    let half = SafeSoftmaxMask {
        keep: Some(Tensor::full([4], 0.5)),
        ..Default::default()
    };
    let message = panic_message(|| {
        scores.safe_softmax(&half);
    });
    assert!(
        message.contains("safe_softmax") && message.contains("0.5"),
        "{message}"
    );
    let causal = SafeSoftmaxMask {
        causal_offset: Some(0),
        ..Default::default()
    };
    let message = panic_message(|| {
        Tensor::zeros([4]).safe_softmax(&causal);
    });
    assert!(
        message.contains(
            "safe_softmax: causal order needs scores [..., Q, K], found [4]"
        ),
        "{message}"
    );
}
