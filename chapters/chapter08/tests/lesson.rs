//! The lesson's code: causality measured, prefill and step against the full causal
//! computation (a property test), the cache's API and memory, the work per token, the
//! tiny model's generation, the sample run's format, and each pitfall caught.

use attention::prelude::*;
use chapter08::*;
use proptest::prelude::*;

// ANCHOR: property
proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// For random weights and inputs (seed), batch sizes, head counts, head sizes,
    /// prompt lengths, numbers of decoded tokens and initial capacities: prefill,
    /// then one step per token, gives every output of the full computation with a
    /// causal mask, by an independent implementation (MultiHeadAttention with the
    /// same weights), within TOLERANCE.
    #[test]
    fn prefill_then_steps_equals_forward_with_a_causal_mask(
        seed in 0u64..10_000,
        batch in 1usize..4,
        heads in prop::sample::select(vec![1usize, 2, 4]),
        d_head in 1usize..5,
        prompt in 1usize..6,
        decoded in 0usize..8,
        capacity in 1usize..6,
    ) {
        manual_seed(seed);
        let layer = causal_layer(heads * d_head, heads);
        let x = Tensor::randn([batch, prompt + decoded, heads * d_head]);

        let mut cache = KvCache::new(capacity);
        let stepped = decode_with_cache(&layer, &x, prompt, &mut cache);
        let full =
            no_grad(|| as_multi_head(&layer).forward(&x, &x, &x, &Mask::causal()));

        prop_assert_eq!(stepped.shape(), full.shape());
        prop_assert_eq!(cache.len(), prompt + decoded);
        let diff = max_abs_diff(&stepped, &full);
        prop_assert!(diff <= TOLERANCE, "largest difference {diff}");
    }
}
// ANCHOR_END: property

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Recomputing the prefix for every token gives the same outputs as well.
    #[test]
    fn decoding_without_a_cache_equals_forward_too(
        seed in 0u64..10_000,
        prompt in 1usize..5,
        decoded in 0usize..6,
    ) {
        manual_seed(seed);
        let layer = causal_layer(8, 2);
        let x = Tensor::randn([2, prompt + decoded, 8]);
        let full = no_grad(|| layer.forward(&x, &Mask::causal()));
        let diff = max_abs_diff(&decode_without_cache(&layer, &x, prompt), &full);
        prop_assert!(diff <= TOLERANCE, "largest difference {diff}");
    }
}

#[test]
fn changing_later_tokens_leaves_earlier_outputs_exactly_unchanged() {
    let (layer, x) = heatmap_example();
    for from in 1..6 {
        manual_seed(from as u64);
        let replacement = Tensor::randn([1, 6 - from, 8]);
        let (past, future) = change_the_future(&layer, &x, from, &replacement);
        assert_eq!(past, 0.0, "outputs before {from} moved");
        assert!(
            future > 0.01,
            "outputs from {from} on did not move: {future}"
        );
    }
}

#[test]
fn without_the_causal_mask_earlier_outputs_would_move() {
    // The check above can fail: full (non-causal) attention over the same inputs lets
    // the changed tokens reach every output.
    let (layer, x) = heatmap_example();
    let mha = as_multi_head(&layer);
    manual_seed(5);
    let changed = Tensor::concat(&[x.narrow(1, 0, 3), Tensor::randn([1, 3, 8])], 1);
    let (a, b) = no_grad(|| {
        (
            mha.forward(&x, &x, &x, &Mask::none()),
            mha.forward(&changed, &changed, &changed, &Mask::none()),
        )
    });
    assert!(max_abs_diff(&a.narrow(1, 0, 3), &b.narrow(1, 0, 3)) > 0.01);
}

#[test]
fn the_layer_matches_multi_head_attention_with_a_causal_mask() {
    let (layer, x) = heatmap_example();
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let mha = no_grad(|| as_multi_head(&layer).forward(&x, &x, &x, &Mask::causal()));
    assert!(max_abs_diff(&full, &mha) <= TOLERANCE);
}

#[test]
fn the_two_ways_give_the_same_weights_and_decoding_skips_the_upper_triangle() {
    let (layer, x) = heatmap_example();
    let [full, cached] = weights_two_ways(&layer, &x, HEATMAP_PROMPT);
    let t = 6;
    for q in 0..t {
        let row: f32 = full[q * t..(q + 1) * t].iter().sum();
        assert!((row - 1.0).abs() < 1e-5, "row {q} sums to {row}");
        for k in 0..t {
            let (f, c) = (full[q * t + k], cached[q * t + k]);
            if k > q {
                assert_eq!(f, 0.0, "forward computes a zero at [{q}, {k}]");
                if k < HEATMAP_PROMPT {
                    // The prefill is a forward pass over the prompt: masked,
                    // computed.
                    assert_eq!(c, 0.0, "prefill computes a zero at [{q}, {k}]");
                } else {
                    assert!(c.is_nan(), "decoding never computes [{q}, {k}]");
                }
            } else {
                assert!((f - c).abs() < 1e-6, "[{q}, {k}]: {f} against {c}");
            }
        }
    }
}

#[test]
fn prefill_and_step_have_the_documented_shapes_and_the_cache_grows_by_one() {
    manual_seed(1);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([2, 5, 8]);
    let mut cache = KvCache::new(4);
    no_grad(|| {
        let y = layer.prefill(&x.narrow(1, 0, 3), &mut cache, &Mask::none());
        assert_eq!(y.shape(), &[2, 3, 8]);
        assert_eq!(cache.keys().shape(), &[2, 2, 3, 4]); // [B, H, len, d_head]
        assert_eq!(cache.values().shape(), &[2, 2, 3, 4]);
        assert_eq!((cache.len(), cache.capacity()), (3, 4));
        let y = layer.step(&x.narrow(1, 3, 1), &mut cache, &Mask::none());
        assert_eq!(y.shape(), &[2, 1, 8]);
        assert_eq!((cache.len(), cache.capacity()), (4, 4));
        layer.step(&x.narrow(1, 4, 1), &mut cache, &Mask::none());
        assert_eq!((cache.len(), cache.capacity()), (5, 8));
    });
}

#[test]
fn decoding_token_by_token_from_an_empty_cache_equals_prefill_then_steps() {
    manual_seed(6);
    let layer = causal_layer(8, 4);
    let x = Tensor::randn([3, 7, 8]);
    let a = decode_token_by_token(&layer, &x, &mut KvCache::new(2));
    let b = decode_with_cache(&layer, &x, 4, &mut KvCache::new(2));
    assert!(max_abs_diff(&a, &b) <= TOLERANCE);
}

#[test]
fn multiply_adds_are_hand_counted_and_recomputing_costs_t_times_more() {
    // d = 2, t = 3: 4·2² + 2·3·2 = 28 with the cache; 3 · 28 = 84 without.
    assert_eq!(multiply_adds_per_token(2, 3, true), 28);
    assert_eq!(multiply_adds_per_token(2, 3, false), 84);
    for t in [1, 7, 64, 1024] {
        assert_eq!(
            multiply_adds_per_token(64, t, false),
            t * multiply_adds_per_token(64, t, true)
        );
    }
}

#[test]
fn bytes_per_token_are_two_layers_batch_heads_d_head_four() {
    let gpt2_small = CacheShape {
        layers: 12,
        batch: 1,
        heads: 12,
        d_head: 64,
    };
    assert_eq!(gpt2_small.bytes_per_token(), 2 * 12 * 12 * 64 * 4);
    assert_eq!(gpt2_small.bytes_per_token(), 73_728); // 72 KiB
    assert_eq!(gpt2_small.bytes(1024), 72 << 20); // 72 MiB
    let one = CacheShape {
        layers: 1,
        batch: 1,
        heads: 1,
        d_head: 1,
    };
    assert_eq!(one.bytes_per_token(), 8); // one f32 key and one f32 value
}

#[test]
fn bytes_per_token_is_what_the_cache_stores() {
    for (batch, heads, d_head, tokens) in [(1, 1, 4, 3), (2, 2, 4, 5), (3, 4, 2, 9)] {
        manual_seed(7);
        let layer = causal_layer(heads * d_head, heads);
        let x = Tensor::randn([batch, tokens, heads * d_head]);
        let mut cache = KvCache::new(2);
        decode_with_cache(&layer, &x, 1, &mut cache);
        let stored =
            (cache.keys().numel() + cache.values().numel()) * size_of::<f32>();
        let shape = CacheShape {
            layers: 1,
            batch,
            heads,
            d_head,
        };
        assert_eq!(stored, shape.bytes(tokens));
        assert_eq!(stored, tokens * shape.bytes_per_token());
    }
}

#[test]
fn a_cache_reused_without_reset_is_caught_by_comparing_with_forward() {
    manual_seed(2);
    let layer = causal_layer(8, 2);
    let first = Tensor::randn([1, 6, 8]);
    let second = Tensor::randn([1, 4, 8]);
    let full = no_grad(|| layer.forward(&second, &Mask::none()));
    let (stale, len) = two_sequences(&layer, &first, &second, false);
    assert_eq!(len, 10, "the second sequence was appended to the first");
    assert!(
        max_abs_diff(&stale, &full) > 0.1,
        "the stale cache changed nothing?"
    );
    let (fresh, len) = two_sequences(&layer, &first, &second, true);
    assert_eq!(len, 4);
    assert!(max_abs_diff(&fresh, &full) <= TOLERANCE);
}

#[test]
#[should_panic(
    expected = "CausalSelfAttention::prefill: the cache already holds 3 tokens"
)]
fn prefill_refuses_a_cache_that_was_not_reset() {
    manual_seed(2);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([1, 3, 8]);
    let mut cache = KvCache::new(4);
    decode_with_cache(&layer, &x, 3, &mut cache);
    decode_with_cache(&layer, &x, 3, &mut cache);
}

#[test]
fn causal_order_aligned_to_the_first_key_is_caught() {
    manual_seed(3);
    let [q, k, v] = [(); 3].map(|()| Tensor::randn([2, 6, 4]));
    for n in 1..=3 {
        let right = error_of_new_tokens(&q, &k, &v, n, &Mask::causal());
        let offset =
            error_of_new_tokens(&q, &k, &v, n, &Mask::causal_with_offset(6 - n));
        let wrong = error_of_new_tokens(&q, &k, &v, n, &Mask::causal_with_offset(0));
        assert!(right <= 1e-6, "{n} new: {right}");
        assert!(offset <= 1e-6, "{n} new: {offset}");
        assert!(wrong > 0.1, "{n} new: the misaligned mask went unnoticed");
    }
}

#[test]
fn the_causal_masks_keep_the_hand_written_keys() {
    // Two new queries at positions 3 and 4 against 5 keys.
    let keep = |m: Mask| m.keep_for("test", &[1, 2, 5]).unwrap().to_vec();
    let last = vec![1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    assert_eq!(keep(Mask::causal()), last);
    assert_eq!(keep(Mask::causal_with_offset(3)), last);
    assert_eq!(
        keep(Mask::causal_with_offset(0)),
        vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn a_step_given_a_mask_aligned_to_the_first_key_sees_only_that_key() {
    let (layer, x) = heatmap_example();
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let last = no_grad(|| {
        let mut cache = KvCache::new(8);
        layer.prefill(&x.narrow(1, 0, 5), &mut cache, &Mask::none());
        layer.step(&x.narrow(1, 5, 1), &mut cache, &Mask::causal_with_offset(0))
    });
    let weights = layer.last_attention_weights().unwrap(); // [1, 2, 1, 6]
    assert_eq!(
        weights.to_vec(),
        vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert!(max_abs_diff(&last, &full.narrow(1, 5, 1)) > 0.1);
}

#[test]
fn past_the_initial_capacity_the_cache_doubles_and_stays_correct() {
    manual_seed(4);
    let layer = causal_layer(8, 2);
    let x = Tensor::randn([2, 9, 8]);
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let (decoded, capacities) = decode_past_the_capacity(&layer, &x, 2);
    assert_eq!(capacities, vec![2, 2, 4, 4, 8, 8, 8, 8, 16]);
    assert!(max_abs_diff(&decoded, &full) <= TOLERANCE);
    let (decoded, capacities) = decode_past_the_capacity(&layer, &x, 1);
    assert_eq!(capacities, vec![1, 2, 4, 4, 8, 8, 8, 8, 16]);
    assert!(max_abs_diff(&decoded, &full) <= TOLERANCE);
    let (_, capacities) = decode_past_the_capacity(&layer, &x, 3);
    assert_eq!(capacities, vec![3, 3, 3, 6, 6, 6, 12, 12, 12]);
}

#[test]
fn the_tiny_model_gives_the_same_logits_whole_or_token_by_token() {
    let model = tiny_lm();
    let ids = [1, 2, 3, 13, 11, 15];
    let whole = model.logits(&ids); // [1, 6, 16]
    assert_eq!(whole.shape(), &[1, 6, 16]);
    let mut cache = KvCache::new(4);
    let mut parts = vec![model.prefill(&ids[..2], &mut cache)];
    for &id in &ids[2..] {
        parts.push(model.step(id, &mut cache));
    }
    let stepped = Tensor::concat(&parts, 1);
    assert!(max_abs_diff(&whole, &stepped) <= TOLERANCE);
}

#[test]
fn greedy_generation_keeps_the_prompt_and_follows_the_largest_logit() {
    let model = tiny_lm();
    let ids = model.generate_without_cache(&[1, 2, 3], 8);
    assert_eq!(ids.len(), 11);
    assert_eq!(&ids[..3], &[1, 2, 3]);
    for n in 3..ids.len() {
        assert_eq!(ids[n], greedy_next(&model.logits(&ids[..n])));
    }
}

#[test]
fn greedy_next_takes_the_largest_logit_of_the_last_position_first_on_a_tie() {
    let logits = Tensor::from_vec(vec![9.0, 0.0, 0.0, 1.0, 3.0, 3.0], [1, 2, 3]);
    assert_eq!(greedy_next(&logits), 1);
    let logits = Tensor::from_vec(vec![0.0, 2.0, 1.0], [1, 1, 3]);
    assert_eq!(greedy_next(&logits), 1);
}

#[test]
fn the_sample_run_covers_every_position_and_reads_back_what_it_writes() {
    let run = sample_run();
    let ts: Vec<usize> = run.rows.iter().map(|r| r.t).collect();
    assert_eq!(ts, SPEED_POSITIONS);
    assert!(
        run.rows
            .iter()
            .all(|r| r.with_cache > 0.0 && r.without_cache > 0.0)
    );
    assert_eq!(SpeedRun::parse(&run.to_file()), Ok(run));
    let before = sample_run_before();
    let ts: Vec<usize> = before.rows.iter().map(|r| r.t).collect();
    assert_eq!(
        ts, SPEED_POSITIONS,
        "the earlier run covers the same positions"
    );
    assert_eq!(before.machine, sample_run().machine, "and the same machine");
}

#[test]
fn a_malformed_speed_file_is_refused_with_the_line() {
    let missing = "# machine: m\n16 1.0\n";
    assert_eq!(
        SpeedRun::parse(missing),
        Err(
            "line 2: expected `t with_cache without_cache`, found \"16 1.0\""
                .to_string()
        )
    );
    assert!(SpeedRun::parse("16 1 2\n").is_err(), "no machine line");
    assert!(SpeedRun::parse("# machine: m\n").is_err(), "no rows");
    let table = SpeedRun::parse("# machine: m\n16 200 100\n")
        .unwrap()
        .table();
    assert!(table.contains("2.0x"), "{table}");
}

#[test]
fn self_attention_is_permutation_equivariant_until_positions_are_added() {
    use chapter08::positions::{permutation_gap, sinusoidal_encoding};
    manual_seed(3);
    let layer = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        ..Default::default()
    });
    let attend = |x: &Tensor| no_grad(|| layer.forward(x, x, x, &Mask::none()));
    let x = Tensor::randn([1, 5, 8]);
    for perm in [[4, 3, 2, 1, 0], [1, 2, 3, 4, 0], [0, 2, 1, 4, 3]] {
        assert!(permutation_gap(&attend, &x, &perm) < 1e-6, "{perm:?}");
        let pe = sinusoidal_encoding(5, 8);
        let positioned = |x: &Tensor| attend(&(x + &pe));
        assert!(permutation_gap(&positioned, &x, &perm) > 1e-3, "{perm:?}");
    }
    // A causal mask also breaks the symmetry: token 0 sees only itself.
    let causal = |x: &Tensor| no_grad(|| layer.forward(x, x, x, &Mask::causal()));
    assert!(permutation_gap(&causal, &x, &[4, 3, 2, 1, 0]) > 1e-3);
}

#[test]
fn the_sinusoidal_encoding_has_its_defining_values_and_relative_dot_products() {
    use chapter08::positions::{
        expected_dot_product, frequency, relative_dot_products, sinusoidal_encoding,
    };
    let pe = sinusoidal_encoding(50, 8);
    let v = pe.to_vec();
    // Row 0: sin 0 = 0 and cos 0 = 1 in every pair.
    assert_eq!(&v[..8], &[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
    // Row 1, pair 0 has ω = 1; pair 1 has ω = 10000^(-2/8) = 0.1.
    assert!((frequency(1, 8) - 0.1).abs() < 1e-12);
    assert!((v[8] - 1f32.sin()).abs() < 1e-7 && (v[10] - 0.1f32.sin()).abs() < 1e-7);
    for k in [1, 3, 10] {
        for dot in relative_dot_products(&pe, k, &[0, 11, 30]) {
            assert!(
                (f64::from(dot) - expected_dot_product(k, 8)).abs() < 1e-5,
                "k = {k}"
            );
        }
    }
}

#[test]
fn the_layer_costs_follow_the_transformer_papers_table() {
    use chapter08::positions::LayerCost::*;
    assert_eq!(SelfAttention.multiply_adds(10, 4), 400);
    assert_eq!(Recurrent.multiply_adds(10, 4), 160);
    assert_eq!(Convolution { k: 3 }.multiply_adds(10, 4), 480);
    assert_eq!(
        [
            SelfAttention.sequential_steps(10),
            Recurrent.sequential_steps(10)
        ],
        [1, 10]
    );
    assert_eq!(Convolution { k: 3 }.path_length(10), 5); // ⌈9 / 2⌉
    assert_eq!(Convolution { k: 5 }.path_length(9), 2);
    assert_eq!(
        [SelfAttention.path_length(10), Recurrent.path_length(10)],
        [1, 9]
    );
}

/// The convolution against its definition, one output at a time:
/// `out[b, t, o] = bias[o] + Σⱼ Σᵢ x[b, t + j − k/2, i] · W[j, i, o]`, zero outside.
#[test]
fn the_sequence_convolution_is_its_definition_with_zero_padding() {
    use chapter08::convolution::SequenceConvolution;
    manual_seed(3);
    let (batch, n, d, k) = (2, 5, 3, 3);
    let conv = SequenceConvolution::new(k, d);
    let x = Tensor::randn([batch, n, d]);
    let out = conv.forward(&x);
    assert_eq!(out.shape(), &[batch, n, d]);
    let (w, bias) = conv.parameters();
    let (w, bias, xs, got) = (w.to_vec(), bias.to_vec(), x.to_vec(), out.to_vec());
    for b in 0..batch {
        for t in 0..n {
            for o in 0..d {
                let mut want = bias[o];
                for j in 0..k {
                    let Some(s) = (t + j).checked_sub(k / 2).filter(|&s| s < n)
                    else {
                        continue;
                    };
                    for i in 0..d {
                        want += xs[(b * n + s) * d + i] * w[(j * d + i) * d + o];
                    }
                }
                let have = got[(b * n + t) * d + o];
                assert!(
                    (have - want).abs() < 1e-5,
                    "b {b} t {t} o {o}: {have} vs {want}"
                );
            }
        }
    }
}

#[test]
fn the_sequence_convolution_refuses_an_even_width() {
    let message = lesson::panic_message(|| {
        chapter08::convolution::SequenceConvolution::new(4, 3);
    });
    assert_eq!(
        message,
        "SequenceConvolution::new: the width k must be odd, found 4"
    );
}
