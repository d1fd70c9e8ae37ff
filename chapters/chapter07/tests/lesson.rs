//! The lesson's code: the split and the merge against hand-placed values and against the
//! library, every shape of the trace, the step-by-step module against `MultiHeadAttention`,
//! the missing permute and the tiled lengths each caught, the designed heads against
//! hand-computed weights, and the parameter counts against their formulas.

use attention::prelude::*;
use chapter07::*;
use engine::gradcheck::gradcheck;
use lesson::assert_close;

/// The running example through the step-by-step module, lengths in the given order.
fn by_hand(order: LensOrder, lens: &Tensor) -> (Attended, Trace) {
    let (ex, mha) = example();
    let by_hand =
        MultiHeadByHand::from_state_dict(&mha.state_dict(), mha.num_heads());
    let mut trace = Trace::default();
    let attended =
        by_hand.forward(&ex.queries, &ex.keys, &ex.values, lens, order, &mut trace);
    (attended, trace)
}

/// The library module's output on the running example with the given lengths.
fn library(lens: &Tensor) -> (Tensor, Tensor) {
    let (ex, mha) = example();
    let output =
        mha.forward(&ex.queries, &ex.keys, &ex.values, &Mask::valid_lens(lens));
    (output, mha.last_attention_weights().unwrap())
}

#[test]
fn split_heads_puts_head_h_of_example_b_in_row_b_times_h_plus_h() {
    // x[b, t, f] = 100 b + 10 t + f: every value says where it came from.
    let (b, t, heads, d) = (2, 3, 2, 2);
    let values: Vec<f32> = (0..b * t * heads * d)
        .map(|i| {
            let (bi, ti, f) =
                (i / (t * heads * d), (i / (heads * d)) % t, i % (heads * d));
            (100 * bi + 10 * ti + f) as f32
        })
        .collect();
    let x = Tensor::from_vec(values, [b, t, heads * d]);
    let split = split_heads(&x, heads);
    assert_eq!(split.shape(), &[b * heads, t, d]);
    let s = split.to_vec();
    for bi in 0..b {
        for h in 0..heads {
            for ti in 0..t {
                for j in 0..d {
                    let row = bi * heads + h;
                    let expected = (100 * bi + 10 * ti + h * d + j) as f32;
                    assert_eq!(
                        s[(row * t + ti) * d + j],
                        expected,
                        "row {row}, token {ti}"
                    );
                }
            }
        }
    }
}

#[test]
fn split_and_merge_match_the_library_and_undo_each_other() {
    let (_, mha) = example();
    manual_seed(3);
    let x = Tensor::randn([2, 5, 12]);
    let split = split_heads(&x, 3);
    assert_eq!(split.to_vec(), mha.transpose_qkv(&x).to_vec());
    let merged = merge_heads(&split, 3);
    assert_eq!(merged.to_vec(), mha.transpose_output(&split).to_vec());
    assert_eq!(merged.shape(), x.shape());
    assert_eq!(merged.to_vec(), x.to_vec());
}

#[test]
fn every_step_of_the_trace_has_the_documented_shape() {
    let (ex, _) = example();
    let (_, trace) = by_hand(LensOrder::Interleaved, &ex.lens);
    let expected: [(&str, &[usize]); 19] = [
        ("queries", &[2, 5, 10]),
        ("keys", &[2, 7, 8]),
        ("values", &[2, 7, 8]),
        ("q = W_q(queries)", &[2, 5, 12]),
        ("k = W_k(keys)", &[2, 7, 12]),
        ("v = W_v(values)", &[2, 7, 12]),
        ("q.reshape(B, Q, H, d)", &[2, 5, 3, 4]),
        ("q.permute(0, 2, 1, 3)", &[2, 3, 5, 4]),
        ("q.reshape(B·H, Q, d)", &[6, 5, 4]),
        ("split_heads(k)", &[6, 7, 4]),
        ("split_heads(v)", &[6, 7, 4]),
        ("lens.repeat_interleave(H, 0)", &[6]),
        ("q kᵀ / √d", &[6, 5, 7]),
        ("weights", &[6, 5, 7]),
        ("heads = weights v", &[6, 5, 4]),
        ("heads.reshape(B, H, Q, d)", &[2, 3, 5, 4]),
        ("heads.permute(0, 2, 1, 3)", &[2, 5, 3, 4]),
        ("heads.reshape(B, Q, H·d)", &[2, 5, 12]),
        ("output = W_o(heads)", &[2, 5, 12]),
    ];
    assert_eq!(trace.steps().len(), expected.len(), "{trace}");
    for (step, (name, shape)) in trace.steps().iter().zip(expected) {
        assert_eq!(step.name, name);
        assert_eq!(step.shape, shape, "{name}");
    }
}

#[test]
fn step_by_step_gives_multi_head_attention_numbers() {
    let (ex, _) = example();
    let (mine, _) = by_hand(LensOrder::Interleaved, &ex.lens);
    let (output, weights) = library(&ex.lens);
    assert_eq!(weights.shape(), &[2, 3, 5, 7]);
    assert_close(&mine.output.to_vec(), &output.to_vec(), 1e-6);
    assert_close(&mine.weights.to_vec(), &weights.to_vec(), 1e-6);
}

#[test]
fn step_by_step_is_multi_head_attention_with_biases_too() {
    manual_seed(4);
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        query_size: Some(3),
        bias: true,
        ..Default::default()
    });
    let q = Tensor::randn([2, 4, 3]);
    let kv = Tensor::randn([2, 5, 8]);
    let lens = Tensor::from_vec(vec![2.0, 5.0], [2]);
    let expected = mha.forward(&q, &kv, &kv, &Mask::valid_lens(&lens));
    let by_hand = MultiHeadByHand::from_state_dict(&mha.state_dict(), 2);
    let mine = by_hand.forward(
        &q,
        &kv,
        &kv,
        &lens,
        LensOrder::Interleaved,
        &mut Trace::default(),
    );
    assert_close(&mine.output.to_vec(), &expected.to_vec(), 1e-6);
}

#[test]
fn the_step_by_step_gradients_match_finite_differences() {
    manual_seed(5);
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    let by_hand = MultiHeadByHand::from_state_dict(&mha.state_dict(), 2);
    let lens = Tensor::from_vec(vec![3.0, 2.0], [2]);
    let q = Tensor::randn([2, 2, 4]);
    let kv = Tensor::randn([2, 3, 4]);
    gradcheck(
        |t| {
            let order = LensOrder::Interleaved;
            by_hand
                .forward(&t[0], &t[1], &t[1], &lens, order, &mut Trace::default())
                .output
        },
        &[q, kv],
    )
    .unwrap();
}

#[test]
fn reshaping_without_permute_keeps_the_shape_but_mixes_tokens_into_heads() {
    // One example, 2 tokens, 2 heads of 2: token 0 is [0, 1 | 2, 3], token 1 [4, 5 | 6, 7].
    let x = Tensor::arange(8).reshape([1, 2, 4]);
    assert_eq!(
        split_heads(&x, 2).to_vec(),
        [0., 1., 4., 5., 2., 3., 6., 7.]
    );
    let wrong = split_without_permute(&x, 2);
    assert_eq!(wrong.shape(), &[2, 2, 2]);
    assert_eq!(wrong.to_vec(), [0., 1., 2., 3., 4., 5., 6., 7.]); // row 0 is token 0's heads
    // On the running example the output has the right shape and the wrong numbers.
    let (ex, mha) = example();
    let by_hand = MultiHeadByHand::from_state_dict(&mha.state_dict(), 3);
    let run = |split: Reshaper, merge: Reshaper| {
        by_hand.forward_split_by(
            split,
            merge,
            &ex.queries,
            &ex.keys,
            &ex.values,
            &ex.lens,
        )
    };
    let (expected, _) = library(&ex.lens);
    let right = run(split_heads, merge_heads);
    assert_close(&right.to_vec(), &expected.to_vec(), 1e-6);
    let bad = run(split_without_permute, merge_without_permute);
    assert_eq!(bad.shape(), expected.shape());
    assert!(largest_difference(&bad, &expected) > 0.1);
}

#[test]
fn each_length_is_repeated_per_head_consecutively_not_tiled() {
    let lens = Tensor::from_vec(vec![7.0, 3.0], [2]);
    assert_eq!(
        LensOrder::Interleaved.repeat(&lens, 3).to_vec(),
        [7., 7., 7., 3., 3., 3.]
    );
    assert_eq!(
        LensOrder::Tiled.repeat(&lens, 3).to_vec(),
        [7., 3., 7., 3., 7., 3.]
    );
}

#[test]
fn tiled_lengths_change_the_output_when_the_examples_differ_in_length() {
    let (ex, _) = example();
    let (expected, weights) = library(&ex.lens);
    let (tiled, _) = by_hand(LensOrder::Tiled, &ex.lens);
    assert!(largest_difference(&tiled.output, &expected) > 0.1);
    // Row 1 (example 0, head 1) was given example 1's length 3: keys 3.. get no weight.
    let w = tiled.weights.to_vec();
    for q in 0..5 {
        let at = |row: usize, k: usize| w[(row * 5 + q) * 7 + k];
        assert!((3..7).all(|k| at(1, k) == 0.0), "row 1 sees 3 keys");
        // Row 4 (example 1, head 1) was given example 0's length 7: it attends to padding.
        assert!((3..7).all(|k| at(4, k) > 0.0), "row 4 sees padding");
    }
    // The library's weights for those heads: the reverse.
    let lw = weights.to_vec(); // [B, H, Q, K]
    let at =
        |b: usize, h: usize, q: usize, k: usize| lw[((b * 3 + h) * 5 + q) * 7 + k];
    assert!((0..5).all(|q| (3..7).all(|k| at(0, 1, q, k) > 0.0)));
    assert!((0..5).all(|q| (3..7).all(|k| at(1, 1, q, k) == 0.0)));
}

#[test]
fn tiled_lengths_go_unnoticed_when_every_example_has_the_same_length() {
    // Why a test with equal lengths (or a batch of one) cannot catch the wrong order.
    let equal = Tensor::from_vec(vec![5.0, 5.0], [2]);
    let (right, _) = by_hand(LensOrder::Interleaved, &equal);
    let (tiled, _) = by_hand(LensOrder::Tiled, &equal);
    assert_eq!(right.output.to_vec(), tiled.output.to_vec());
}

#[test]
fn the_designed_heads_find_the_previous_token_the_same_word_and_the_next_token() {
    let (_, weights) = sentence_heads();
    assert_eq!(weights.shape(), &[1, 3, 6, 6]);
    let w = weights.to_vec();
    let e4 = MATCH_SCORE.exp();
    let alone = e4 / (e4 + 5.0); // one key scores 4, five score 0
    let rest = 1.0 / (e4 + 5.0);
    let (pair, pair_rest) = (e4 / (2.0 * e4 + 4.0), 1.0 / (2.0 * e4 + 4.0)); // two keys score 4
    for q in 0..6usize {
        let targets: [Vec<usize>; 3] = [
            vec![q.saturating_sub(1)],
            (0..6).filter(|&k| SENTENCE[k] == SENTENCE[q]).collect(),
            vec![(q + 1).min(5)],
        ];
        for (head, target) in targets.iter().enumerate() {
            let (hit, miss) = if target.len() == 2 {
                (pair, pair_rest)
            } else {
                (alone, rest)
            };
            let row: Vec<f32> = (0..6)
                .map(|k| if target.contains(&k) { hit } else { miss })
                .collect();
            assert_close(&w[(head * 6 + q) * 6..][..6], &row, 1e-6);
        }
    }
}

#[test]
fn each_designed_head_writes_the_word_it_read_into_its_own_slice_of_the_output() {
    let (output, _) = sentence_heads();
    assert_eq!(output.shape(), &[1, 6, 27]);
    let o = output.to_vec();
    let word = |w: &str| WORDS.iter().position(|x| *x == w).unwrap();
    // "sat" (position 2): head 0 read "cat", head 1 "sat", head 2 "on", each with e⁴/(e⁴+5).
    let e4 = MATCH_SCORE.exp();
    let alone = e4 / (e4 + 5.0);
    for (head, w) in ["cat", "sat", "on"].iter().enumerate() {
        let slice = &o[2 * 27 + head * HEAD_SIZE..][..HEAD_SIZE];
        assert!(
            (slice[word(w)] - alone).abs() < 1e-6,
            "head {head}: {slice:?}"
        );
        assert!(slice[WORDS.len()..].iter().all(|&v| v == 0.0));
    }
}

#[test]
fn tiled_lengths_cut_head_1_of_the_long_sentence_to_three_keys() {
    let right = two_sentences_weights(LensOrder::Interleaved);
    let tiled = two_sentences_weights(LensOrder::Tiled);
    let (_, sentence) = sentence_heads();
    // With the right order, example 0 (length 6 of 6) is the unmasked sentence.
    let example0 = right.narrow(0, 0, 1);
    assert_close(&example0.to_vec(), &sentence.to_vec(), 1e-6);
    // Tiled, heads 0 and 2 of example 0 are unchanged and head 1 sees keys 0..3 only.
    let t = tiled.narrow(0, 0, 1).to_vec();
    let s = sentence.to_vec();
    assert_eq!(&t[..36], &s[..36]);
    assert_eq!(&t[72..], &s[72..]);
    assert!((0..6).all(|q| (3..6).all(|k| t[36 + q * 6 + k] == 0.0)));
}

#[test]
fn the_parameter_counts_match_the_hand_formulas() {
    // d2l's module with every size equal to d: 4·d², and 4·d more with biases.
    for (d, heads) in [(8, 1), (8, 2), (8, 4), (12, 3)] {
        for bias in [false, true] {
            let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
                num_hiddens: d,
                num_heads: heads,
                bias,
                ..Default::default()
            });
            let expected = 4 * d * d + if bias { 4 * d } else { 0 };
            assert_eq!(mha.num_parameters(), expected, "d = {d}, H = {heads}");
            let sizes = Sizes {
                query_size: d,
                key_size: d,
                value_size: d,
                num_hiddens: d,
                num_heads: heads,
            };
            assert_eq!(scaled_parameter_formula(sizes, bias), expected);
        }
    }
    // The running example's sizes, worked out by hand on the page.
    let both = SideBySide::new(EXAMPLE_SIZES);
    assert_eq!(both.scaled.num_parameters(), (10 + 8 + 8) * 12 + 12 * 12);
    assert_eq!(scaled_parameter_formula(EXAMPLE_SIZES, false), 456);
    // Per head (h = 4): W_q 10·4 + 4, W_k 8·4 + 4, v 4, W_o 8·8 + 8; then W_o 24·8 + 8.
    let per_head = 44 + 36 + 4 + 72;
    assert_eq!(both.additive.num_parameters(), 3 * per_head + 200);
    assert_eq!(additive_parameter_formula(EXAMPLE_SIZES), 668);
}

#[test]
fn both_multi_head_forms_take_the_same_inputs_and_hide_the_same_keys() {
    let (ex, _) = example();
    let both = SideBySide::new(EXAMPLE_SIZES);
    let query = ex.queries.narrow(1, 0, 1).squeeze(1);
    let r = both.run(&query, &ex.keys, &ex.values, &ex.lens);
    assert_eq!(r.scaled_output.shape(), &[2, 1, 12]);
    assert_eq!(r.scaled_weights.shape(), &[2, 3, 1, 7]);
    assert_eq!(r.additive_output.shape(), &[2, 8]);
    assert_eq!(r.additive_weights.shape(), &[2, 3, 7]);
    let (s, a) = (r.scaled_weights.to_vec(), r.additive_weights.to_vec());
    for head in 0..3 {
        // Example 1 has 3 real keys in both; every head's row sums to 1.
        let row = |w: &[f32]| w[(3 + head) * 7..][..7].to_vec();
        for w in [row(&s), row(&a)] {
            assert!(w[3..].iter().all(|&v| v == 0.0), "{w:?}");
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{w:?}");
        }
    }
}

#[test]
fn more_heads_keep_the_parameters_and_the_multiply_adds_but_not_the_function() {
    let rows = head_count_study(2, 6, 12, &[1, 2, 3, 4, 6, 12]);
    for r in &rows {
        assert_eq!(r.head_size * r.num_heads, 12);
        assert_eq!(r.scaled_parameters, 4 * 12 * 12);
        assert_eq!(r.weights, 2 * r.num_heads * 6 * 6);
        assert_eq!(r.score_multiply_adds, 2 * 6 * 6 * 12);
        // The additive form gives every head its own W_o: (24·12 + 3·12) + H·(2·144 + 12) + 12.
        assert_eq!(r.additive_parameters, 336 + 300 * r.num_heads);
    }
    assert_eq!(rows[0].difference_from_one_head, 0.0);
    assert!(rows[1..].iter().all(|r| r.difference_from_one_head > 0.01));
}

#[test]
fn a_width_the_heads_do_not_divide_and_a_mask_repeated_twice_are_refused() {
    let message = panic_message(|| {
        let _ = MultiHeadAttention::new(MultiHeadAttentionConfig {
            num_hiddens: 10,
            num_heads: 3,
            ..Default::default()
        });
    });
    assert!(
        message.contains("not divisible by num_heads (3)"),
        "{message}"
    );
    let (ex, mha) = example();
    let repeated = ex.lens.repeat_interleave(3, 0);
    let message = panic_message(|| {
        let _ = mha.forward(
            &ex.queries,
            &ex.keys,
            &ex.values,
            &Mask::valid_lens(&repeated),
        );
    });
    assert!(message.contains("must have shape [2]"), "{message}");
    assert!(message.contains("found [6]"), "{message}");
}

#[test]
fn the_tour_is_deterministic() {
    assert_eq!(tour(), tour());
}
