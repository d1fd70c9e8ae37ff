//! Everything the page prints, section by section: `cargo run -p chapter11`.

use std::fmt::Write;

use engine::memory::human;
use lesson::{COLUMNS, wrap};

use crate::accuracy::{
    ACCURACY_N, error_table, far_task, local_task, partners, weight_on, weight_within,
};
use crate::costs::{
    ARTICLE_SPEEDUP, Costs, FULL_SQUARES, SLOPE_FROM, full_peak_estimate,
};
use crate::memory::training_peak;
use crate::methods::{FEATURES, LOW_RANK, LSH, Method, SPARSE, WINDOW};
use crate::online::{EXAMPLE_SCORES, EXAMPLE_VALUES, online_softmax, softmax};
use crate::patterns::{
    FIGURE_LSH, FIGURE_SPARSE, FIGURE_WINDOW, PATTERN_N, density, figure_vectors,
    lsh_keep_mask,
};
use crate::properties::{
    exact_gap, low_rank_identity_gap, lsh_gap, lsh_one_bucket_gap, sparse_gap,
    window_gap,
};
use crate::side_by_side::SideBySide;

/// Adds `text` to `out`, wrapped to the book's column.
fn line(out: &mut String, text: &str) {
    writeln!(out, "{}", wrap(text, COLUMNS)).expect("writing to a string");
}

/// A number as the worked example prints it: `-inf`, or four decimals.
fn four(x: f64) -> String {
    if x == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{x:.4}")
    }
}

/// Numbers as Rust's `Display` writes them (`1`, `0.5`), separated by commas.
fn list(xs: &[f64]) -> String {
    xs.iter().map(f64::to_string).collect::<Vec<_>>().join(", ")
}

/// Section 1: what full attention's `[n, n]` tensors cost as `n` grows.
pub fn wall_section() -> String {
    let mut out = String::from("== 1. The quadratic wall\n");
    line(
        &mut out,
        &format!(
            "one head, B = 1, {FEATURES} features: one [n, n] tensor of f32, and the \
             peak of a training step of full attention ({FULL_SQUARES} of them, \
             full_peak_estimate):"
        ),
    );
    line(&mut out, "      n    one [n, n]   training step");
    // ANCHOR: tour_wall
    for n in [1024, 4096, 16384, 65536, 262144] {
        let square = n * n * size_of::<f32>();
        line(
            &mut out,
            &format!(
                "{n:>7} {:>13} {:>15}",
                human(square),
                human(full_peak_estimate(n))
            ),
        );
    }
    let n = 1024;
    let measured = training_peak(Method::Full, n);
    // ANCHOR_END: tour_wall
    line(
        &mut out,
        &format!(
            "measured at n = {n}: {measured} bytes; the estimate: {} bytes",
            full_peak_estimate(n)
        ),
    );
    out
}

/// Section 2: the online softmax of one row, block by block.
pub fn online_section() -> String {
    let mut out = String::from("== 2. The online softmax, by hand\n");
    let (scores, values) = (&EXAMPLE_SCORES, &EXAMPLE_VALUES);
    line(
        &mut out,
        &format!(
            "scores s = [{}], values v = [{}], blocks of 2:",
            list(scores),
            list(values)
        ),
    );
    line(
        &mut out,
        "block  keys  block max  m before  m after  exp(m - m')  l (sum)   acc",
    );
    let steps = online_softmax(scores, values, 2);
    for (b, step) in steps.iter().enumerate() {
        line(
            &mut out,
            &format!(
                "{:>5}  {}-{}  {:>9}  {:>8}  {:>7}  {:>11}  {:>7}  {:>8}",
                b + 1,
                step.first,
                step.first + step.len - 1,
                four(step.block_max),
                four(step.max_before),
                four(step.after.max),
                four(step.rescale),
                four(step.after.sum),
                four(step.after.acc),
            ),
        );
    }
    let last = steps.last().expect("at least one block").after;
    let plain = softmax(scores);
    let plain_output: f64 = plain.iter().zip(values).map(|(p, v)| p * v).sum();
    let show = |w: &[f64]| {
        w.iter()
            .map(|x| format!("{x:.4}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    line(
        &mut out,
        &format!(
            "output acc / l = {:.4}; the plain softmax's Σ p·v = {plain_output:.4}",
            last.output()
        ),
    );
    line(
        &mut out,
        &format!("weights exp(s - m) / l: [{}]", show(&last.weights(scores))),
    );
    line(
        &mut out,
        &format!("plain softmax:          [{}]", show(&plain)),
    );
    let plain_lse = scores.iter().map(|s| s.exp()).sum::<f64>().ln();
    line(
        &mut out,
        &format!(
            "log-sum-exp m + ln l = {:.4}; ln Σ exp(s) = {plain_lse:.4}",
            last.log_sum_exp()
        ),
    );
    let agree = [1, 2, 3, 4, 6].map(|block| {
        let state = online_softmax(scores, values, block)
            .last()
            .expect("a block")
            .after;
        let weights = state.weights(scores);
        (state.output() - plain_output).abs() < 1e-12
            && weights
                .iter()
                .zip(&plain)
                .all(|(a, b)| (a - b).abs() < 1e-12)
    });
    line(
        &mut out,
        &format!(
            "blocks of 1, 2, 3, 4 and 6 give the plain softmax's weights and output \
             to 1e-12: {agree:?}"
        ),
    );
    out
}

/// Section 3: the engine's blocked attention against full attention, and their
/// memory.
pub fn blocked_section() -> String {
    let mut out = String::from("== 3. Exact attention in blocks\n");
    let n = 1024;
    // ANCHOR: tour_exact
    let gap = exact_gap(n);
    // ANCHOR_END: tour_exact
    line(
        &mut out,
        &format!(
            "n = {n}, {FEATURES} features: full attention and blocked attention \
             (blocks of {} keys), forward and backward, seeded inputs",
            engine::DEFAULT_ATTENTION_BLOCK
        ),
    );
    line(
        &mut out,
        &format!(
            "  largest |difference|: output {:.1e}, dQ {:.1e}, dK {:.1e}, dV {:.1e}",
            gap.output, gap.grads[0], gap.grads[1], gap.grads[2]
        ),
    );
    line(&mut out, "peak bytes of a training step (engine::memory):");
    line(&mut out, "      n          full     blocked");
    let lengths = [512, 1024, 2048];
    let peaks: Vec<(usize, usize)> = lengths
        .iter()
        .map(|&n| {
            (
                training_peak(Method::Full, n),
                training_peak(Method::Blocked, n),
            )
        })
        .collect();
    for (n, (full, blocked)) in lengths.iter().zip(&peaks) {
        line(
            &mut out,
            &format!("{n:>7} {:>13} {:>11}", human(*full), human(*blocked)),
        );
    }
    for w in 0..2 {
        let ratio = |f: fn(&(usize, usize)) -> usize| {
            f(&peaks[w + 1]) as f64 / f(&peaks[w]) as f64
        };
        line(
            &mut out,
            &format!(
                "  n {} → {}: full × {:.2}, blocked × {:.2}",
                lengths[w],
                lengths[w + 1],
                ratio(|p| p.0),
                ratio(|p| p.1)
            ),
        );
    }
    let (full, blocked) = peaks[1];
    line(
        &mut out,
        &format!(
            "at n = 1024: full holds {:.2} floats per score (n² of them), blocked \
             {:.2} floats per position",
            full as f64 / 4.0 / (1024.0 * 1024.0),
            blocked as f64 / 4.0 / 1024.0
        ),
    );
    out
}

/// Section 4: the settings, the patterns of the figure, and each method's defining
/// property checked.
pub fn patterns_section() -> String {
    let mut out = String::from("== 4. Four approximations\n");
    line(
        &mut out,
        "the chapter's settings (src/methods.rs) and what one query sees:",
    );
    let rows = [
        (
            "window",
            format!("w = {WINDOW} on each side"),
            format!("{} keys", 2 * WINDOW + 1),
        ),
        (
            "sparse",
            format!("blocks of {}, {} global", SPARSE.block, SPARSE.global),
            format!(
                "{} keys (a global query: all n)",
                SPARSE.block + SPARSE.global
            ),
        ),
        (
            "low-rank",
            format!("k = {LOW_RANK} segment means"),
            format!("{LOW_RANK} mixtures of keys"),
        ),
        (
            "LSH",
            format!("{} buckets, chunks of {}", LSH.n_buckets, LSH.chunk),
            format!("at most {} keys, its bucket only", 2 * LSH.chunk),
        ),
    ];
    for (name, settings, sees) in rows {
        line(&mut out, &format!("  {name:<9} {settings:<28} {sees}"));
    }
    let n = PATTERN_N;
    let lsh = lsh_keep_mask(&figure_vectors(), &FIGURE_LSH).to_vec();
    line(
        &mut out,
        &format!(
            "the figure's patterns at n = {n}, entries kept of {}:",
            n * n
        ),
    );
    let kept = [
        ("window, w = 3", FIGURE_WINDOW.keep_mask(n).to_vec()),
        ("blocks of 8, 2 global", FIGURE_SPARSE.keep_mask(n).to_vec()),
        ("LSH, 4 buckets, chunks of 8", lsh),
    ];
    for (name, mask) in kept {
        let count = mask.iter().filter(|&&m| m != 0.0).count();
        line(
            &mut out,
            &format!("  {name:<28} {count:>4} ({:.1}%)", 100.0 * density(&mask)),
        );
    }
    line(
        &mut out,
        &format!(
            "each is what it claims to be (largest |difference|, random inputs, n = \
             {n}, d = 8):"
        ),
    );
    // ANCHOR: tour_properties
    let checks = [
        (
            "window = full attention under its mask",
            window_gap(n, &FIGURE_WINDOW),
        ),
        (
            "sparse = full attention under its mask",
            sparse_gap(n, &FIGURE_SPARSE),
        ),
        (
            "low-rank, k = n, E = F = I = full attention",
            low_rank_identity_gap(n),
        ),
        (
            "LSH = shared-QK attention under its mask",
            lsh_gap(n, &FIGURE_LSH),
        ),
        (
            "LSH, 1 bucket, 1 chunk = shared-QK attention",
            lsh_one_bucket_gap(n),
        ),
    ];
    // ANCHOR_END: tour_properties
    for (claim, gap) in checks {
        let gap = if gap == 0.0 {
            "0".to_string()
        } else {
            format!("{gap:.1e}")
        };
        line(&mut out, &format!("  {claim:<46} {gap}"));
    }
    out
}

/// Section 5: the committed costs, their slopes and the speed-ups over full
/// attention.
pub fn costs_section() -> String {
    let mut out =
        String::from("== 5. One machine's run (committed data, not measured here)\n");
    let costs = Costs::committed();
    line(
        &mut out,
        &format!(
            "cpu: {}; engine: {} path, {} thread{}",
            costs.cpu,
            costs.engine_path,
            costs.threads,
            if costs.threads == 1 { "" } else { "s" }
        ),
    );
    line(
        &mut out,
        &format!(
            "median time of a training step (forward and backward), ms, at least {} \
             runs, the fastest of {} rounds:",
            costs.runs, costs.rounds
        ),
    );
    out.push_str(&costs.time_table());
    line(
        &mut out,
        "peak memory of a training step (exact: the same on every machine):",
    );
    out.push_str(&costs.memory_table());
    let last = costs.lengths().last().copied().unwrap_or(0);
    line(
        &mut out,
        &format!(
            "slopes of log cost against log n, fitted over n = {SLOPE_FROM} to \
             {last}:"
        ),
    );
    line(&mut out, "             time  memory");
    for m in Method::ALL {
        if let Some((time, memory)) = costs.slopes(m) {
            line(
                &mut out,
                &format!("  {:<9} {time:>6.2}  {memory:>6.2}", m.label()),
            );
        }
    }
    line(
        &mut out,
        "speed-up over full attention (full attention's time / the method's):",
    );
    line(&mut out, "      n   window   sparse  low-rank     LSH");
    let speedups = Method::APPROXIMATIONS.map(|m| costs.speedups(m));
    for (i, &(n, _)) in speedups[0].iter().enumerate() {
        let cells: Vec<String> =
            speedups.iter().map(|s| format!("{:.2}", s[i].1)).collect();
        line(
            &mut out,
            &format!(
                "{n:>7} {:>8} {:>8} {:>9} {:>7}",
                cells[0], cells[1], cells[2], cells[3]
            ),
        );
    }
    // ANCHOR: tour_claim
    for (m, s) in [Method::Window, Method::Sparse].iter().zip(&speedups) {
        let reached = s.iter().find(|(_, x)| *x >= ARTICLE_SPEEDUP);
        let best = s
            .iter()
            .copied()
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let verdict = match reached {
            Some(&(n, x)) => {
                let blocked = costs.get(Method::Blocked, n).map_or(0.0, |b| b.millis);
                let own = costs.get(*m, n).map_or(1.0, |c| c.millis);
                format!(
                    "reaches {ARTICLE_SPEEDUP}× at n = {n}: {x:.2}× over full, \
                     {:.2}× over blocked",
                    blocked / own
                )
            }
            None => {
                format!("never reaches it: at most {:.2}× (n = {})", best.1, best.0)
            }
        };
        line(
            &mut out,
            &format!("the article's 8×: {} {verdict}", m.label()),
        );
    }
    // ANCHOR_END: tour_claim
    out
}

/// Section 6: the relative error of each approximation on three tasks, and why LSH
/// misses some of the far matches.
pub fn accuracy_section() -> String {
    let mut out = String::from("== 6. How far from exact\n");
    line(
        &mut out,
        &format!(
            "relative error ‖approx - exact‖ / ‖exact‖ of the output, n = \
             {ACCURACY_N}, {FEATURES} features; exact is full attention, and for LSH \
             its own exact counterpart (one bucket, one chunk):"
        ),
    );
    line(&mut out, "             random     local  far match");
    // ANCHOR: tour_errors
    for (method, errors) in error_table() {
        line(
            &mut out,
            &format!(
                "  {:<9} {:>7.4} {:>9.4} {:>10.4}",
                method.label(),
                errors[0],
                errors[1],
                errors[2]
            ),
        );
    }
    // ANCHOR_END: tour_errors
    let n = ACCURACY_N;
    let far = far_task(n, 13);
    let partner = partners(n, 13);
    let local = local_task(n, 12);
    line(
        &mut out,
        &format!(
            "full attention's weight, mean over the queries: local, within 16 \
             positions {:.4}, within {WINDOW} {:.4}; far match, on the partner {:.4}",
            weight_within(&local, 16),
            weight_within(&local, WINDOW),
            weight_on(&far, &partner)
        ),
    );
    let buckets = attention::lsh_buckets(&far.shared, &LSH).to_vec();
    let keep = lsh_keep_mask(&far.shared, &LSH).to_vec();
    let same = (0..n)
        .filter(|&i| buckets[i] == buckets[partner[i]])
        .count();
    let seen = (0..n).filter(|&i| keep[i * n + partner[i]] != 0.0).count();
    line(
        &mut out,
        &format!(
            "far match, LSH: the partner is in the query's bucket for {same} of {n} \
             queries, and in a chunk the query sees for {seen}"
        ),
    );
    let buckets = attention::lsh_buckets(&local.shared, &LSH).to_vec();
    let next = (0..n - 1).filter(|&i| buckets[i] == buckets[i + 1]).count();
    line(
        &mut out,
        &format!(
            "local, LSH: positions i and i + 1 share a bucket for {next} of {} pairs",
            n - 1
        ),
    );
    out
}

/// Section 7: multi-head attention beside PyTorch's fused kernel (committed data).
pub fn production_section() -> String {
    let mut out = String::from(
        "== 7. Beside PyTorch's fused attention (committed data, not measured \
         here)\n",
    );
    out.push_str(&SideBySide::committed().table());
    out
}

/// Everything the page prints from the tour.
pub fn tour() -> String {
    [
        wall_section(),
        online_section(),
        blocked_section(),
        patterns_section(),
        costs_section(),
        accuracy_section(),
        production_section(),
    ]
    .join("\n")
}
