//! The claims of the page: the online softmax is the softmax, blocked attention is
//! full attention in memory linear in `n`, each approximation is what it claims and
//! as accurate (or not) as the page says, and the committed memory numbers are what
//! the engine counts.

use attention::{LocalWindow, LshOptions, SparsePattern};
use chapter11::accuracy::{
    ACCURACY_N, error_table, far_task, local_task, partners, positions,
    relative_error, task_error, tasks, weight_on, weight_within,
};
use chapter11::costs::{Costs, LENGTHS, full_peak_estimate, loglog_slope};
use chapter11::memory::training_peak;
use chapter11::methods::{LSH, Method, WINDOW, random_inputs, segment_means};
use chapter11::online::{
    EXAMPLE_SCORES, EXAMPLE_VALUES, Running, online_softmax, softmax,
};
use chapter11::patterns::{lsh_keep_mask, reordered, sorted_order};
use chapter11::properties::{
    exact_gap, low_rank_identity_gap, lsh_gap, lsh_one_bucket_gap, max_abs_diff,
    shared_qk_attention, sparse_gap, window_gap,
};
use chapter11::side_by_side::SideBySide;
use engine::Tensor;

#[test]
fn the_online_softmax_gives_the_plain_softmax_for_every_block_size() {
    let (scores, values) = (&EXAMPLE_SCORES, &EXAMPLE_VALUES);
    let plain = softmax(scores);
    let output: f64 = plain.iter().zip(values).map(|(p, v)| p * v).sum();
    for block in 1..=7 {
        let steps = online_softmax(scores, values, block);
        assert_eq!(steps.len(), scores.len().div_ceil(block));
        let last = steps.last().unwrap().after;
        for (a, b) in last.weights(scores).iter().zip(&plain) {
            assert!((a - b).abs() < 1e-12, "block {block}: {a} against {b}");
        }
        assert!((last.output() - output).abs() < 1e-12);
        let lse = scores.iter().map(|s| s.exp()).sum::<f64>().ln();
        assert!((last.log_sum_exp() - lse).abs() < 1e-12);
        // The first block finds nothing to rescale; a block that raises no maximum
        // rescales by exactly 1.
        assert_eq!(steps[0].rescale, 0.0);
        for s in &steps {
            assert_eq!(s.rescale == 1.0, s.max_before >= s.block_max);
        }
    }
}

#[test]
fn the_worked_example_rescales_at_the_second_block() {
    let steps = online_softmax(&EXAMPLE_SCORES, &EXAMPLE_VALUES, 2);
    // Blocks [1, 3], [0.5, 4], [2, 2.5]: the maximum goes 3, then 4, then stays.
    let maxima: Vec<f64> = steps.iter().map(|s| s.after.max).collect();
    assert_eq!(maxima, [3.0, 4.0, 4.0]);
    assert!((steps[1].rescale - (-1f64).exp()).abs() < 1e-15);
    // After the first block: l = e⁻² + e⁰, acc = 10e⁻² + 20.
    let first = steps[0].after;
    assert!((first.sum - ((-2f64).exp() + 1.0)).abs() < 1e-12);
    assert!((first.acc - (10.0 * (-2f64).exp() + 20.0)).abs() < 1e-12);
}

#[test]
fn the_online_softmax_does_not_overflow_where_a_naive_sum_would() {
    let scores = [1000.0, 999.0, 1001.0];
    let last = online_softmax(&scores, &[1.0, 2.0, 3.0], 1)
        .last()
        .unwrap()
        .after;
    assert!(
        scores
            .iter()
            .map(|s: &f64| s.exp())
            .sum::<f64>()
            .is_infinite()
    );
    let weights = last.weights(&scores);
    assert!(weights.iter().all(|w| w.is_finite()));
    assert!((weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert_eq!(Running::EMPTY.max, f64::NEG_INFINITY);
}

#[test]
fn blocked_attention_agrees_with_full_attention_outputs_and_gradients() {
    let gap = exact_gap(512);
    assert!(gap.output < 1e-5, "outputs differ by {}", gap.output);
    for (name, g) in ["dQ", "dK", "dV"].iter().zip(gap.grads) {
        assert!(g < 1e-5, "{name} differs by {g}");
    }
}

#[test]
fn doubling_n_doubles_blocked_memory_and_quadruples_full_memory() {
    let (n, long) = (512, 1024);
    let ratio =
        |m: Method| training_peak(m, long) as f64 / training_peak(m, n) as f64;
    let (blocked, full) = (ratio(Method::Blocked), ratio(Method::Full));
    assert!(
        (1.95..=2.05).contains(&blocked),
        "blocked: doubling n multiplied the peak by {blocked}"
    );
    assert!(
        (3.8..=4.05).contains(&full),
        "full: doubling n multiplied the peak by {full}"
    );
}

#[test]
fn the_estimate_of_full_attention_s_peak_is_the_engine_s_count_to_a_few_bytes() {
    for n in [256, 512] {
        let measured = training_peak(Method::Full, n);
        let estimate = full_peak_estimate(n);
        assert!(
            measured.abs_diff(estimate) <= 64,
            "n = {n}: measured {measured}, estimated {estimate}"
        );
    }
}

#[test]
fn the_committed_memory_numbers_are_what_the_engine_counts() {
    let committed = Costs::committed();
    for n in [256, 512] {
        for method in Method::ALL {
            let row = committed.get(method, n).unwrap_or_else(|| {
                panic!("no committed {} at n = {n}", method.key())
            });
            assert_eq!(
                training_peak(method, n),
                row.peak_bytes,
                "{} at n = {n}",
                method.label()
            );
        }
    }
}

#[test]
fn the_committed_run_skips_full_attention_only_past_its_limit() {
    let committed = Costs::committed();
    assert_eq!(committed.lengths(), LENGTHS);
    for n in LENGTHS {
        for method in Method::ALL {
            let row = committed.get(method, n);
            if method == Method::Full && full_peak_estimate(n) > committed.limit_bytes
            {
                assert!(row.is_none(), "full attention at n = {n} is over the limit");
            } else {
                let row =
                    row.unwrap_or_else(|| panic!("{} at n = {n}", method.key()));
                assert!(row.millis > 0.0 && row.peak_bytes > 0);
            }
        }
    }
}

#[test]
fn the_committed_slopes_read_as_the_page_reads_them() {
    let committed = Costs::committed();
    let (full_time, full_memory) = committed.slopes(Method::Full).unwrap();
    assert!((1.9..=2.1).contains(&full_memory), "{full_memory}");
    assert!(full_time >= 1.8, "{full_time}");
    let (blocked_time, blocked_memory) = committed.slopes(Method::Blocked).unwrap();
    assert!((1.7..=2.3).contains(&blocked_time), "{blocked_time}");
    assert!((0.95..=1.05).contains(&blocked_memory), "{blocked_memory}");
    for method in Method::APPROXIMATIONS {
        let (time, memory) = committed.slopes(method).unwrap();
        assert!((0.8..=1.3).contains(&time), "{}: {time}", method.label());
        assert!(
            (0.95..=1.05).contains(&memory),
            "{}: {memory}",
            method.label()
        );
    }
}

#[test]
fn the_data_file_round_trips_and_names_a_bad_line() {
    let committed = Costs::committed();
    assert_eq!(Costs::parse(&committed.to_text()).unwrap(), committed);
    let error = Costs::parse("cpu\tx\ncost\tfull\t256\tfast\t12\n").unwrap_err();
    assert!(error.starts_with("line 2: not a time"), "{error}");
    let error = Costs::parse("cost\tmystery\t256\t1.0\t12\n").unwrap_err();
    assert!(error.starts_with("line 1: unknown method"), "{error}");
}

#[test]
fn the_slope_of_a_log_log_line_is_its_power() {
    let cube: Vec<(f64, f64)> =
        [2.0, 4.0, 8.0].iter().map(|&x| (x, x * x * x)).collect();
    assert!((loglog_slope(&cube).unwrap() - 3.0).abs() < 1e-12);
    assert_eq!(loglog_slope(&[(1.0, 1.0)]), None);
}

#[test]
fn window_and_sparse_attention_are_full_attention_under_their_masks() {
    for n in [32, 45] {
        for window in [0, 3, 64] {
            let w = LocalWindow {
                window,
                ..Default::default()
            };
            assert!(window_gap(n, &w) < 1e-5, "n = {n}, w = {window}");
            let causal = LocalWindow { causal: true, ..w };
            assert!(
                window_gap(n, &causal) < 1e-5,
                "causal, n = {n}, w = {window}"
            );
        }
        for (block, global) in [(8, 0), (8, 2), (7, 3), (64, 1)] {
            let pattern = SparsePattern {
                block,
                global,
                scale: None,
            };
            assert!(sparse_gap(n, &pattern) < 1e-5, "n = {n}, {block}, {global}");
        }
    }
}

#[test]
fn low_rank_with_identity_projections_is_full_attention() {
    assert!(low_rank_identity_gap(32) < 1e-5);
}

#[test]
fn segment_means_average_stretches_of_the_sequence() {
    let e = segment_means(3, 7).to_vec();
    // Segments 0..2, 2..4, 4..7.
    #[rustfmt::skip]
    let expected = [
        0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0,
    ];
    assert_eq!(e, expected);
    let eye = segment_means(4, 4).to_vec();
    assert_eq!(eye, Tensor::ones([4, 4]).tril(0).triu(0).to_vec());
}

#[test]
fn lsh_is_shared_qk_attention_under_the_rebuilt_mask() {
    for (n, buckets, chunk) in [(32, 4, 8), (45, 4, 8), (64, 8, 16), (40, 2, 64)] {
        let options = LshOptions {
            n_buckets: buckets,
            chunk,
            ..Default::default()
        };
        assert!(lsh_gap(n, &options) < 1e-5, "n = {n}, {buckets}, {chunk}");
    }
    assert!(lsh_one_bucket_gap(32) < 1e-5);
}

#[test]
fn lsh_keeps_only_keys_of_the_query_s_bucket_and_misses_some_of_them() {
    let far = far_task(256, 13);
    let keep = lsh_keep_mask(&far.shared, &LSH).to_vec();
    let buckets = attention::lsh_buckets(&far.shared, &LSH).to_vec();
    let n = 256;
    for i in 0..n {
        assert_eq!(keep[i * n + i], 1.0, "a query is always in its own chunk");
        for j in 0..n {
            if keep[i * n + j] != 0.0 {
                assert_eq!(buckets[i], buckets[j]);
            }
        }
    }
    // In bucket order the kept entries lie near the diagonal: within two chunks.
    let order = sorted_order(&buckets);
    let sorted = reordered(&keep, &order);
    for a in 0..n {
        for b in 0..n {
            if sorted[a * n + b] != 0.0 {
                assert!(a.abs_diff(b) < 2 * LSH.chunk, "slots {a} and {b}");
            }
        }
    }
    // The exact counterpart is the same computation with every key kept.
    let all = Tensor::ones([n, n]);
    let exact = chapter11::accuracy::exact_lsh(&far.shared, &far.values);
    let by_hand = shared_qk_attention(&far.shared, &far.values, &all);
    assert!(max_abs_diff(&exact, &by_hand) < 1e-5);
}

#[test]
fn partners_are_mutual_and_far_apart() {
    let n = 64;
    let partner = partners(n, 13);
    let mut seen = vec![false; n];
    for i in 0..n {
        assert_eq!(partner[partner[i]], i);
        assert!(partner[i].abs_diff(i) > n / 4, "{i} and {}", partner[i]);
        seen[partner[i]] = true;
    }
    assert!(seen.iter().all(|&s| s), "a permutation");
    assert_ne!(partners(n, 13), partners(n, 14), "the seed matters");
}

#[test]
fn positional_vectors_are_most_alike_nearby() {
    let p = positions(256, 64);
    let gram = p.matmul_t(&p).to_vec();
    // Row 100: its own position first, its neighbours next, far positions lower.
    let row = &gram[100 * 256..101 * 256];
    assert!((row[100] - 32.0).abs() < 1e-3);
    assert!(row[99] > row[90] && row[101] > row[110] && row[90] > row[200]);
}

#[test]
fn the_tasks_put_full_attention_s_weight_where_the_page_says() {
    let n = ACCURACY_N;
    let local = local_task(n, 12);
    assert!(weight_within(&local, 16) > 0.95);
    assert!(weight_within(&local, WINDOW) > 0.98);
    assert!(
        weight_within(&local, 1) > 0.7,
        "most of it on the nearest keys"
    );
    let far = far_task(n, 13);
    let partner = partners(n, 13);
    assert!(weight_on(&far, &partner) > 0.9);
    // Nothing of the far match is near: within the window there is almost no weight.
    assert!(weight_within(&far, WINDOW) < 0.1);
}

#[test]
fn the_error_table_reads_as_the_page_reads_it() {
    let table = error_table();
    let row = |m: Method| table.iter().find(|(x, _)| *x == m).unwrap().1;
    let [random, local, far] = [0, 1, 2];
    let (window, sparse, low_rank, lsh) = (
        row(Method::Window),
        row(Method::Sparse),
        row(Method::LowRank),
        row(Method::Lsh),
    );
    // The window is accurate where what matters is near, and useless where it is far.
    assert!(window[local] < 0.05 && window[far] > 0.9, "{window:?}");
    // The sparse pattern too, a little less accurate near its blocks' edges.
    assert!(
        sparse[local] < 0.15 && sparse[local] > window[local],
        "{sparse:?}"
    );
    assert!(sparse[far] > 0.9, "{sparse:?}");
    // LSH does best on the far match, the only one well below 1 there.
    assert!(lsh[far] < 0.6, "{lsh:?}");
    for other in [window, sparse, low_rank] {
        assert!(other[far] > 0.9 && lsh[far] < 0.6 * other[far]);
    }
    // On random vectors, whose weights spread over every key, none is close.
    for errors in [window, sparse, low_rank, lsh] {
        assert!(errors[random] > 0.7, "{errors:?}");
    }
    // Untrained segment means are poor everywhere here.
    assert!(low_rank.iter().all(|&e| e > 0.5), "{low_rank:?}");
}

#[test]
fn the_exact_method_has_no_error_on_any_task() {
    for task in tasks(ACCURACY_N / 4) {
        assert!(task_error(Method::Blocked, &task) < 1e-5, "{}", task.name);
    }
    let x = Tensor::from_vec(vec![3.0, 4.0], [1, 1, 2]);
    assert_eq!(relative_error(&x, &x), 0.0);
    let half = Tensor::from_vec(vec![1.5, 2.0], [1, 1, 2]);
    assert!((relative_error(&half, &x) - 0.5).abs() < 1e-12);
}

#[test]
fn the_methods_keep_the_shapes_and_pass_gradients_back() {
    let (q, k, v) = random_inputs(300, 4);
    for method in Method::ALL {
        let leaf = |t: &Tensor| t.detach().requires_grad_();
        let (q, k, v) = (leaf(&q), leaf(&k), leaf(&v));
        let out = method.attend(&q, &k, &v);
        assert_eq!(out.shape(), &[1, 300, 64], "{}", method.label());
        out.sum().backward();
        assert!(q.grad().is_ok() && v.grad().is_ok(), "{}", method.label());
        // LSH's queries are its keys: k takes no part.
        assert_eq!(
            k.grad().is_ok(),
            method != Method::Lsh,
            "{}",
            method.label()
        );
    }
}

#[test]
fn the_side_by_side_ratios_are_the_recorded_times() {
    let run = SideBySide::committed();
    let one = run.times[0];
    assert_eq!(
        (one.threads, one.engine_median, one.torch_median),
        (1, 642.121, 808.935)
    );
    assert!(run.table().contains("0.79") && run.table().contains("0.87"));
    assert!(run.table().contains("0.82"));
    assert_eq!(run.peak_mib, [107.25, 1360.0, 146.40]);
}
