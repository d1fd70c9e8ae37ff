//! # Chapter 13: making it fast
//!
//! The code of the thirteenth lesson (the page is `book/src/ch13-making-it-fast.md`):
//!
//! 1. The matrix-product ladder, five functions that compute the same `C = A · B` for
//!    row-major `f32` matrices, each fixing what held the one before back: [`naive`]
//!    (the definition), [`loop_order`] (unit-stride inner loop), [`blocked`] (cache
//!    blocking, [`Tiles`]), [`simd`] (packed blocks and a register-tiled SIMD
//!    micro-kernel chosen at run time, [`Kernel`], [`Blocks`]) and [`threaded`] (the
//!    rows of `C` split across threads); [`gemm`] runs rungs 4 and 5 from a [`Plan`].
//! 2. [`flops`] and [`rounding_bound`]: what a product costs, and how far two
//!    summation orders may differ.
//! 3. [`Sample`]: the ladder's GFLOP/s as a table, and the one machine's run
//!    committed with the book ([`Sample::committed`]); `cargo run --release -p
//!    chapter13 --example ladder` measures yours.
//! 4. [`fused_scores`] and [`fused_scores_backward`]: additive attention's scores
//!    without the `[B, Q, K, h]` tensor, as plain loops; [`additive_peak`] and
//!    [`scoring_peaks`]: the memory of the broadcast and the fused form, as the
//!    engine counts it.
//! 5. [`plots`]: the figures; [`tour`]: everything the page prints
//!    (`cargo run -p chapter13`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

mod fused;
mod ladder;
mod memory;
pub mod plots;
mod sample;
mod simd;

pub use fused::{ScoreDims, ScoreGrads, fused_scores, fused_scores_backward};
pub use ladder::{Product, Tiles, blocked, blocked_with, flops, loop_order, naive};
pub use memory::{
    MEMORY_BATCH, MEMORY_HIDDEN, MEMORY_LENGTHS, Pass, ScoringPeaks, additive_peak,
    pairs_bytes, scoring_peaks,
};
pub use sample::{Measurement, Rung, Sample};
pub use simd::{Blocks, Kernel, MR, NR, Plan, gemm, simd, threaded};

use engine::memory::human;

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter13: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

// ANCHOR: rounding_bound
/// For each element of `C = A · B`, how far two computations of it that sum the same
/// `k` products in different orders (or with and without fused multiply-adds) may
/// differ: `2·γₖ·Σₚ |A[i, p]|·|B[p, j]|`, with `γₖ = k·u / (1 − k·u)` and `u = 2⁻²⁴`
/// the unit roundoff of `f32`. Each computation is within `γₖ·Σ|a||b|` of the exact
/// sum (the standard bound for a sum of `k` rounded products), so two of them are
/// within twice that.
pub fn rounding_bound(
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Vec<f64> {
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = k as f64 * u / (1.0 - k as f64 * u);
    let mut bound = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let sum: f64 = (0..k)
                .map(|p| {
                    f64::from(a[i * k + p].abs()) * f64::from(b[p * n + j].abs())
                })
                .sum();
            bound[i * n + j] = 2.0 * gamma * sum;
        }
    }
    bound
}
// ANCHOR_END: rounding_bound

/// Seeded values in `[-1, 1)`, from the engine's generator
/// (`engine::manual_seed(seed)`).
pub fn seeded(len: usize, seed: u64) -> Vec<f32> {
    engine::manual_seed(seed);
    engine::Tensor::rand([len], -1.0, 1.0).to_vec()
}

/// The largest `|x − y|` over two slices of one length.
pub fn max_abs_diff(x: &[f32], y: &[f32]) -> f32 {
    assert_eq!(x.len(), y.len(), "max_abs_diff: lengths differ");
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter13` prints it,
/// and a test checks that the page quotes it exactly. It holds no timing: the GFLOP/s
/// it prints are the committed sample's ([`Sample::committed`]).
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    line("== 1. One product, five ways".into());
    // ANCHOR: tour_flops
    line(format!("flops(2, 3, 4) = {}", flops(2, 3, 4)));
    line(format!("flops(512, 512, 512) = {}", flops(512, 512, 512)));
    // ANCHOR_END: tour_flops

    // ANCHOR: tour_access
    let n = 512;
    let (line_bytes, f32_bytes) = (64, size_of::<f32>());
    line(format!(
        "n = {n}: B is {}, one row of B {}",
        human(n * n * f32_bytes),
        human(n * f32_bytes)
    ));
    line(format!(
        "rung 1 inner loop: a column of B, {n} values {} bytes apart",
        n * f32_bytes
    ));
    line(format!(
        "  {n} cache lines ({}) for {} of values",
        human(n * line_bytes),
        human(n * f32_bytes)
    ));
    line(format!(
        "rung 2 inner loop: a row of B, {n} values side by side: {} cache lines ({})",
        n * f32_bytes / line_bytes,
        human(n * f32_bytes)
    ));
    // ANCHOR_END: tour_access

    // ANCHOR: tour_blocks
    let Tiles { kc, nc } = Tiles::DEFAULT;
    line(format!(
        "rung 3 tiles: kc = {kc}, nc = {nc}: a block of B is {}",
        human(kc * nc * f32_bytes)
    ));
    line(format!(
        "  a stretch of a row of C {}",
        human(nc * f32_bytes)
    ));
    let Blocks { mc, kc, nc } = Blocks::DEFAULT;
    line(format!("rung 4 blocks: mc = {mc}, kc = {kc}, nc = {nc}"));
    line(format!(
        "  tile MR × NR = {MR} × {NR} ({} in registers)",
        human(MR * NR * f32_bytes)
    ));
    line(format!(
        "  packed strip of B {}, packed block of A {}, packed block of B {}",
        human(kc * NR * f32_bytes),
        human(mc * kc * f32_bytes),
        human(kc * nc * f32_bytes)
    ));
    line(format!(
        "  one step of the micro-kernel: {} values loaded, {} multiply-adds",
        MR + NR,
        MR * NR
    ));
    // ANCHOR_END: tour_blocks

    // ANCHOR: tour_agree
    let (m, k, n) = (65, 300, 33);
    let (a, b) = (seeded(m * k, 1), seeded(k * n, 2));
    let mut reference = vec![0.0; m * n];
    naive(&a, &b, &mut reference, m, k, n);
    let bound = rounding_bound(&a, &b, m, k, n);
    line(format!(
        "A [{m}, {k}] · B [{k}, {n}], seeded; each rung against rung 1 \
         (largest bound {:.2e}):",
        bound.iter().copied().fold(0.0, f64::max)
    ));
    let rungs: [(&str, Product); 3] = [
        ("2 loop order", loop_order),
        ("3 cache blocking", blocked),
        ("4 SIMD", simd),
    ];
    for (name, rung) in rungs {
        let mut c = vec![f32::NAN; m * n];
        rung(&a, &b, &mut c, m, k, n);
        let within = c
            .iter()
            .zip(&reference)
            .zip(&bound)
            .all(|((x, y), bound)| f64::from((x - y).abs()) <= *bound);
        let worst = max_abs_diff(&c, &reference);
        line(format!(
            "  {name:<17} max |C - C1| = {}, same bits: {}, \
             within the bound: {within}",
            if worst == 0.0 {
                "0".into()
            } else {
                format!("{worst:.2e}")
            },
            c == reference
        ));
    }
    let mut one = vec![0.0; m * n];
    simd(&a, &b, &mut one, m, k, n);
    let same = [1, 2, 3].map(|threads| {
        let mut c = vec![0.0; m * n];
        threaded(&a, &b, &mut c, m, k, n, threads);
        c == one
    });
    line(format!(
        "  5 threads         1, 2, 3 threads give rung 4's bits: {same:?}"
    ));
    // ANCHOR_END: tour_agree

    line(
        "\n== 2. One machine's sample run (committed data, not measured here)".into(),
    );
    // ANCHOR: tour_sample
    let sample = Sample::committed();
    line(format!("cpu: {}", sample.cpu));
    line(format!(
        "caches: {}; fastest of {} rounds",
        sample.caches, sample.rounds
    ));
    line(format!(
        "rungs 4 and 5: {} kernel; rung 5: {} threads; engine: {} path",
        sample.kernel, sample.threads, sample.engine_path
    ));
    line(sample.table());
    let second = Sample::second_machine();
    line(format!("a second machine: {}", second.cpu));
    line(format!(
        "caches: {}; fastest of {} rounds",
        second.caches, second.rounds
    ));
    line(format!(
        "rungs 4 and 5: {} kernel; rung 5: {} threads; engine: {} and AVX2 paths",
        second.kernel, second.threads, second.engine_path
    ));
    line(second.table());
    // ANCHOR_END: tour_sample

    line("== 3. The memory of additive attention".into());
    // ANCHOR: tour_big
    let (b, q, k, h) = (8, 1024, 1024, 256);
    line(format!(
        "B = {b}, Q = K = {q}, h = {h}: one [B, Q, K, h] tensor is {}",
        human(pairs_bytes(b, q, k, h))
    ));
    line(format!(
        "  the scores [B, Q, K] are {}",
        human(pairs_bytes(b, q, k, 1))
    ));
    line(format!(
        "forward pass, at least: broadcast 2 × [B, Q, K, h] = {}",
        human(2 * pairs_bytes(b, q, k, h))
    ));
    line(format!(
        "  fused 2 × [B, Q, K] = {}",
        human(2 * pairs_bytes(b, q, k, 1))
    ));
    // ANCHOR_END: tour_big
    line(format!(
        "peak bytes beyond inputs and parameters, B = {MEMORY_BATCH}, h = {MEMORY_HIDDEN}, \
         self-attention over n tokens:"
    ));
    line(format!(
        "{:>4} {:>11} | {:>13} {:>11} {:>6} | {:>13} {:>11} {:>6}",
        "n",
        "[B,n,n,h]",
        "broadcast fwd",
        "fused fwd",
        "ratio",
        "broadcast trn",
        "fused trn",
        "ratio"
    ));
    // ANCHOR: tour_peaks
    for p in scoring_peaks() {
        line(format!(
            "{:>4} {:>11} | {:>13} {:>11} {:>6.1} | {:>13} {:>11} {:>6.1}",
            p.n,
            human(p.pairs),
            human(p.broadcast_forward),
            human(p.fused_forward),
            p.broadcast_forward as f64 / p.fused_forward as f64,
            human(p.broadcast_training),
            human(p.fused_training),
            p.broadcast_training as f64 / p.fused_training as f64,
        ));
    }
    // ANCHOR_END: tour_peaks

    // ANCHOR: tour_fused_check
    let dims = ScoreDims {
        batch: 2,
        queries: 3,
        keys: 5,
        hidden: 8,
    };
    let (queries, keys, w) =
        (seeded(2 * 3 * 8, 3), seeded(2 * 5 * 8, 4), seeded(8, 5));
    let by_hand = fused_scores(&queries, &keys, &w, dims);
    let engine_op = engine::Tensor::from_vec(queries, [2, 3, 8]).additive_scores(
        &engine::Tensor::from_vec(keys, [2, 5, 8]),
        &engine::Tensor::from_vec(w, [8]),
    );
    line("fused_scores by hand against queries.additive_scores(&keys, &w)".into());
    line(format!(
        "  shape {:?}, agree to 1e-5: {}",
        engine_op.shape(),
        max_abs_diff(&by_hand, &engine_op.to_vec()) < 1e-5
    ));
    // ANCHOR_END: tour_fused_check

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch13-making-it-fast.md")]
struct Book;
