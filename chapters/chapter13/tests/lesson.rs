//! The lesson's code: every rung of the ladder against the definition on sizes that hit
//! the edges of every tile, the threaded result's independence of the thread count, the
//! SIMD and portable kernels, the FLOP count, the sample's file format and table, and the
//! fused additive scores against the broadcast form, in values, gradients and memory.

use chapter13::{
    Blocks, Kernel, Measurement, Plan, Rung, Sample, ScoreDims, Tiles, blocked,
    blocked_with, flops, fused_scores, fused_scores_backward, gemm, loop_order,
    naive, pairs_bytes, rounding_bound, seeded, simd, threaded,
};
use engine::Tensor;
use lesson::panic_message;

/// Sizes `(m, k, n)` that are not multiples of any tile (1, 3, 17, 33, 65), non-square
/// ones, empty ones, and a long sum that spans several blocks of `k`.
const SIZES: [(usize, usize, usize); 12] = [
    (1, 1, 1),
    (3, 3, 3),
    (17, 17, 17),
    (33, 33, 33),
    (65, 65, 65),
    (17, 33, 65),
    (65, 3, 17),
    (3, 0, 5),
    (0, 4, 2),
    (2, 4, 0),
    (7, 300, 19),
    (13, 1, 40),
];

/// Small blocks, so that even these small sizes cross many block edges.
const SMALL_TILES: Tiles = Tiles { kc: 5, nc: 7 };
const SMALL_BLOCKS: Blocks = Blocks {
    mc: 8,
    kc: 5,
    nc: 20,
};

fn inputs(m: usize, k: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    (
        seeded(m * k, (m * 1000 + k) as u64),
        seeded(k * n, (k * 1000 + n) as u64),
    )
}

fn product(
    rung: impl Fn(&[f32], &[f32], &mut [f32], usize, usize, usize),
    (a, b): (&[f32], &[f32]),
    (m, k, n): (usize, usize, usize),
) -> Vec<f32> {
    let mut c = vec![f32::NAN; m * n]; // every element must be written
    rung(a, b, &mut c, m, k, n);
    c
}

#[track_caller]
fn assert_within_bound(what: &str, c: &[f32], reference: &[f32], bound: &[f64]) {
    for (i, ((x, y), bound)) in c.iter().zip(reference).zip(bound).enumerate() {
        assert!(
            f64::from((x - y).abs()) <= *bound,
            "{what}: element {i} is {x}, the definition gives {y}, allowed {bound:e}"
        );
    }
}

#[test]
fn every_rung_computes_a_hand_checked_product() {
    // [[1, 2, 3], [4, 5, 6]] · [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let expected = vec![4.0, 5.0, 10.0, 11.0];
    let rungs: [(&str, chapter13::Product); 4] = [
        ("naive", naive),
        ("loop_order", loop_order),
        ("blocked", blocked),
        ("simd", simd),
    ];
    for (name, rung) in rungs {
        assert_eq!(product(rung, (&a, &b), (2, 3, 2)), expected, "{name}");
    }
    let mut c = vec![0.0; 4];
    threaded(&a, &b, &mut c, 2, 3, 2, 2);
    assert_eq!(c, expected, "threaded");
}

#[test]
fn rungs_2_and_3_give_the_definitions_bits_on_awkward_sizes() {
    // Each C[i, j] receives its products in the order p = 0, 1, …, k − 1, one rounding per
    // multiplication and one per addition, as in the definition: the same bits.
    for (m, k, n) in SIZES {
        let (a, b) = inputs(m, k, n);
        let reference = product(naive, (&a, &b), (m, k, n));
        let small = |a: &[f32], b: &[f32], c: &mut [f32], m, k, n| {
            blocked_with(SMALL_TILES, a, b, c, m, k, n)
        };
        for (name, c) in [
            ("loop_order", product(loop_order, (&a, &b), (m, k, n))),
            ("blocked", product(blocked, (&a, &b), (m, k, n))),
            ("blocked, small tiles", product(small, (&a, &b), (m, k, n))),
        ] {
            assert_eq!(c, reference, "{name} at [{m}, {k}] · [{k}, {n}]");
        }
    }
}

#[test]
fn rungs_4_5_and_the_engine_stay_within_the_rounding_bound_on_awkward_sizes() {
    // They sum in another order (blocks of k) or with fused multiply-adds (one rounding for
    // both), so bits may differ, by at most 2·γₖ·Σ|a||b| per element (see rounding_bound).
    for (m, k, n) in SIZES {
        let (a, b) = inputs(m, k, n);
        let reference = product(naive, (&a, &b), (m, k, n));
        let bound = rounding_bound(&a, &b, m, k, n);
        let what = |name: &str| format!("{name} at [{m}, {k}] · [{k}, {n}]");
        for kernel in [Kernel::detect(), Kernel::Portable] {
            for blocks in [Blocks::DEFAULT, SMALL_BLOCKS] {
                let plan = Plan {
                    kernel,
                    blocks,
                    threads: 1,
                };
                let run = |a: &[f32], b: &[f32], c: &mut [f32], m, k, n| {
                    gemm(&plan, a, b, c, m, k, n)
                };
                let c = product(run, (&a, &b), (m, k, n));
                assert_within_bound(
                    &what(&format!("{plan:?}")),
                    &c,
                    &reference,
                    &bound,
                );
            }
        }
        let c = product(simd, (&a, &b), (m, k, n));
        assert_within_bound(&what("simd"), &c, &reference, &bound);
        let engine = Tensor::from_vec(a.clone(), [m, k])
            .matmul(&Tensor::from_vec(b.clone(), [k, n]));
        assert_within_bound(&what("engine"), &engine.to_vec(), &reference, &bound);
    }
}

#[test]
fn the_rounding_bound_is_needed_and_still_catches_a_wrong_product() {
    let (m, k, n) = (33, 200, 17);
    let (a, b) = inputs(m, k, n);
    let reference = product(naive, (&a, &b), (m, k, n));
    let bound = rounding_bound(&a, &b, m, k, n);
    // Fused multiply-adds round differently: comparing bits would reject a correct rung 4.
    let c = product(simd, (&a, &b), (m, k, n));
    assert_ne!(c, reference);
    assert_within_bound("simd", &c, &reference, &bound);
    // A product that forgets the last term of each sum (a classic off-by-one) is caught in
    // almost every element: one product |a·b| is far larger than the rounding bound.
    let a_short: Vec<f32> =
        a.chunks(k).flat_map(|row| row[..k - 1].to_vec()).collect();
    let wrong = product(naive, (&a_short, &b[..(k - 1) * n]), (m, k - 1, n));
    let caught = wrong
        .iter()
        .zip(&reference)
        .zip(&bound)
        .filter(|((x, y), bound)| f64::from((*x - *y).abs()) > **bound)
        .count();
    assert!(
        caught * 10 >= 9 * m * n,
        "only {caught} of {} elements caught",
        m * n
    );
    assert_eq!(
        rounding_bound(&[], &[], 2, 0, 3),
        vec![0.0; 6],
        "k = 0: an exact 0"
    );
}

#[test]
fn threads_do_not_change_a_single_bit() {
    for (m, k, n) in SIZES
        .into_iter()
        .chain([(1, 9, 9), (64, 40, 33), (100, 7, 3)])
    {
        let (a, b) = inputs(m, k, n);
        for blocks in [Blocks::DEFAULT, SMALL_BLOCKS] {
            let run = |threads| {
                let mut c = vec![f32::NAN; m * n];
                let plan = Plan {
                    kernel: Kernel::detect(),
                    blocks,
                    threads,
                };
                gemm(&plan, &a, &b, &mut c, m, k, n);
                c
            };
            let one = run(1);
            for threads in [2, 3, 8] {
                assert_eq!(
                    run(threads),
                    one,
                    "{threads} threads at [{m}, {k}] · [{k}, {n}], {blocks:?}"
                );
            }
        }
        let mut c = vec![0.0; m * n];
        threaded(&a, &b, &mut c, m, k, n, 3);
        assert_eq!(
            c,
            product(simd, (&a, &b), (m, k, n)),
            "threaded against simd"
        );
    }
}

#[test]
fn the_simd_kernel_and_the_portable_kernel_give_the_same_bits() {
    // Both do the same fused multiply-adds in the same order (`mul_add` rounds once, like
    // the FMA instruction).
    let detected = Kernel::detect();
    if !detected.is_available() || detected == Kernel::Portable {
        // A CPU without AVX2 and FMA (or not x86-64): only the portable kernel exists.
        assert_eq!(detected, Kernel::Portable);
        return;
    }
    for (m, k, n) in SIZES {
        let (a, b) = inputs(m, k, n);
        for blocks in [Blocks::DEFAULT, SMALL_BLOCKS] {
            let run = |kernel| {
                let mut c = vec![f32::NAN; m * n];
                gemm(
                    &Plan {
                        kernel,
                        blocks,
                        threads: 1,
                    },
                    &a,
                    &b,
                    &mut c,
                    m,
                    k,
                    n,
                );
                c
            };
            assert_eq!(
                run(detected),
                run(Kernel::Portable),
                "[{m}, {k}] · [{k}, {n}], {blocks:?}"
            );
        }
    }
}

#[test]
fn flops_counts_every_multiplication_and_every_addition() {
    assert_eq!(flops(2, 3, 4), 48);
    assert_eq!(flops(5, 0, 3), 0);
    assert_eq!(flops(512, 512, 512), 268_435_456);
    // Count the operations of the definition's loops, one by one.
    for (m, k, n) in [(1, 1, 1), (2, 3, 4), (7, 5, 3), (4, 0, 2)] {
        let mut operations = 0u64;
        for _i in 0..m {
            for _j in 0..n {
                for _p in 0..k {
                    operations += 2; // sum += a · b: one multiplication, one addition
                }
            }
        }
        assert_eq!(flops(m, k, n), operations, "[{m}, {k}] · [{k}, {n}]");
    }
}

#[test]
fn a_slice_of_the_wrong_length_is_named_with_the_sizes_it_needs() {
    let message =
        panic_message(|| naive(&[0.0; 6], &[0.0; 5], &mut [0.0; 4], 2, 3, 2));
    assert!(
        message.starts_with("naive: b holds 5 values, but [3, 2] needs 6"),
        "{message}"
    );
    let message =
        panic_message(|| threaded(&[0.0; 6], &[0.0; 6], &mut [0.0; 3], 2, 3, 2, 2));
    assert!(
        message.starts_with("gemm: c holds 3 values, but [2, 2] needs 4"),
        "{message}"
    );
    let message = panic_message(|| {
        let plan = Plan {
            threads: 0,
            ..Plan::detect(1)
        };
        gemm(&plan, &[0.0; 4], &[0.0; 4], &mut [0.0; 4], 2, 2, 2);
    });
    assert!(message.contains("must be positive"), "{message}");
}

#[test]
fn the_committed_samples_read_back_exactly_and_cover_every_rung() {
    let n = chapter13::plots::FIGURE_SIZE;
    // The book's sample predates the engine's AVX2 path; the second machine has every rung.
    for (sample, rungs) in [
        (Sample::committed(), &Rung::ALL[..6]),
        (Sample::second_machine(), &Rung::ALL[..]),
    ] {
        assert_eq!(Sample::parse(&sample.to_text()), Ok(sample.clone()));
        assert!(!sample.cpu.is_empty() && sample.threads > 0);
        assert_eq!(sample.engine_path, "avx512", "{}", sample.cpu);
        assert_eq!(sample.rungs(), rungs, "{}", sample.cpu);
        for &rung in rungs {
            let g = sample
                .gflops(rung, n)
                .unwrap_or_else(|| panic!("{rung:?} at n = {n}"));
            assert!(g > 0.0, "{rung:?}: {g}");
        }
    }
}

#[test]
fn a_bad_line_in_the_sample_is_reported_with_its_number() {
    let error =
        Sample::parse("# comment\ncpu\tx\ngflops\tquick\t256\t1.0\n").unwrap_err();
    assert_eq!(
        error,
        "line 3: unknown rung: \"gflops\\tquick\\t256\\t1.0\""
    );
    let error = Sample::parse("threads\ttwo\n").unwrap_err();
    assert!(error.starts_with("line 1: not a count"), "{error}");
}

#[test]
fn the_table_shows_each_rung_its_speed_up_and_a_dash_where_it_did_not_run() {
    let results = [
        (Rung::Naive, 256, 1.0),
        (Rung::LoopOrder, 256, 8.0),
        (Rung::Blocked, 256, 12.0),
        (Rung::Simd, 256, 48.0),
        (Rung::Threads, 256, 90.0),
        (Rung::Engine, 256, 96.0),
        (Rung::EngineAvx2, 256, 84.0),
        (Rung::LoopOrder, 1024, 4.0),
    ];
    let sample = Sample {
        cpu: "test".into(),
        caches: "L1 1 KiB".into(),
        kernel: "portable".into(),
        engine_path: "portable".into(),
        threads: 2,
        rounds: 1,
        results: results
            .iter()
            .map(|&(rung, n, gflops)| Measurement { rung, n, gflops })
            .collect(),
    };
    let table = sample.table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 8, "{table}");
    assert!(lines[0].ends_with("speed-up at n = 256"), "{table}");
    // Speed-ups over the rung each improves on: 8/1, 12/8, 48/12, 90/48, and 96/48 and
    // 84/48 for the engine's two paths against rung 4.
    let tails = [
        "",
        "8.0× 1 naive",
        "1.5× 2 i-k-j",
        "4.0× 3 blocked",
        "1.9× 4 SIMD",
        "2.0× 4 SIMD",
        "1.8× 4 SIMD",
    ];
    for (line, tail) in lines[1..].iter().zip(tails) {
        assert!(
            line.trim_end().ends_with(tail),
            "{line:?} should end with {tail:?}"
        );
    }
    assert!(
        lines[1].contains("1.00") && lines[1].contains(" -"),
        "{}",
        lines[1]
    );
    assert!(lines[5].starts_with("5 threads (2)"), "{}", lines[5]);
    assert!(
        lines[6].starts_with("engine, portable path"),
        "{}",
        lines[6]
    );
    assert!(lines[7].starts_with("engine, AVX2 path"), "{}", lines[7]);
    // Where the engine's best path is AVX2 its AVX2 row is not measured: no row, and the
    // speed-ups are still shown.
    let mut without = sample.clone();
    without.results.retain(|m| m.rung != Rung::EngineAvx2);
    let table = without.table();
    assert_eq!(table.lines().count(), 7, "{table}");
    assert!(!table.contains("AVX2 path"), "{table}");
    assert!(
        table.lines().nth(6).unwrap().ends_with("2.0× 4 SIMD"),
        "{table}"
    );
}

/// The broadcast form, with the engine's ops: builds `[B, Q, K, h]`.
fn broadcast_scores(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    (queries.unsqueeze(2) + keys.unsqueeze(1))
        .tanh()
        .matmul(&w.unsqueeze(1))
        .squeeze(-1)
}

#[test]
fn the_fused_loops_give_the_broadcast_forms_scores_and_gradients() {
    let dims = ScoreDims {
        batch: 2,
        queries: 3,
        keys: 4,
        hidden: 5,
    };
    let (q, k, w, g) = (
        seeded(30, 11),
        seeded(40, 12),
        seeded(5, 13),
        seeded(24, 14),
    );
    let queries = Tensor::from_vec(q.clone(), [2, 3, 5]).requires_grad_();
    let keys = Tensor::from_vec(k.clone(), [2, 4, 5]).requires_grad_();
    let weight = Tensor::from_vec(w.clone(), [5]).requires_grad_();
    let scores = broadcast_scores(&queries, &keys, &weight);
    scores.backward_with(&Tensor::from_vec(g.clone(), [2, 3, 4]));

    let close = |what: &str, by_hand: &[f32], engine: &Tensor| {
        assert_eq!(by_hand.len(), engine.numel(), "{what}");
        let worst = chapter13::max_abs_diff(by_hand, &engine.to_vec());
        assert!(worst < 1e-5, "{what}: differs by {worst:e}");
    };
    close("scores", &fused_scores(&q, &k, &w, dims), &scores);
    let grads = fused_scores_backward(&q, &k, &w, &g, dims);
    close("∂/∂queries", &grads.queries, &queries.grad().unwrap());
    close("∂/∂keys", &grads.keys, &keys.grad().unwrap());
    close("∂/∂w", &grads.w, &weight.grad().unwrap());
    // And the engine's fused op gives the same scores.
    let op = Tensor::from_vec(q, [2, 3, 5])
        .additive_scores(&Tensor::from_vec(k, [2, 4, 5]), &Tensor::from_vec(w, [5]));
    close("additive_scores", &scores.to_vec(), &op);
}

#[test]
fn one_pair_of_the_fused_scores_by_hand() {
    // One query [0.5, -1], keys [0, 1] and [1, 2], w = [2, 1]:
    // key 0: 2·tanh(0.5) + tanh(0) ; key 1: 2·tanh(1.5) + tanh(1).
    let dims = ScoreDims {
        batch: 1,
        queries: 1,
        keys: 2,
        hidden: 2,
    };
    let s = fused_scores(&[0.5, -1.0], &[0.0, 1.0, 1.0, 2.0], &[2.0, 1.0], dims);
    assert_eq!(
        s,
        vec![2.0 * 0.5f32.tanh(), 2.0 * 1.5f32.tanh() + 1.0f32.tanh()]
    );
}

#[test]
fn the_fused_form_never_holds_a_b_q_k_h_tensor_and_the_broadcast_form_holds_several()
{
    use attention::AdditiveScoring::{Broadcast, Fused};
    use chapter13::{Pass, additive_peak};
    let (b, n, h) = (2, 48, 32);
    let pairs = pairs_bytes(b, n, n, h);
    assert_eq!(pairs, 2 * 48 * 48 * 32 * 4);
    // The broadcast forward pass holds the sum and its tanh at once; training keeps the
    // tanh for the backward pass and builds gradients of the same shape.
    assert!(additive_peak(Broadcast, Pass::Forward, b, n, h) >= 2 * pairs);
    assert!(additive_peak(Broadcast, Pass::Training, b, n, h) >= 3 * pairs);
    // The fused form holds [B, n, n] scores and weights and [B, n, h] projections: far less
    // than one [B, n, n, h] tensor.
    assert!(additive_peak(Fused, Pass::Forward, b, n, h) < pairs / 4);
    assert!(additive_peak(Fused, Pass::Training, b, n, h) < pairs / 2);
}

#[test]
fn the_measured_peaks_grow_apart_with_the_sequence_length() {
    let peaks = chapter13::scoring_peaks();
    assert_eq!(peaks.len(), chapter13::MEMORY_LENGTHS.len());
    let ratio = |p: &chapter13::ScoringPeaks| {
        p.broadcast_forward as f64 / p.fused_forward as f64
    };
    for pair in peaks.windows(2) {
        assert!(ratio(&pair[1]) > ratio(&pair[0]), "{pair:?}");
        assert!(pair[1].broadcast_training > pair[0].broadcast_training);
    }
}
