//! The chapter's figures: the patterns of three approximations, and the committed
//! costs as log-log lines.

use crate::costs::{Cost, Costs};
use crate::methods::Method;
use crate::patterns::{
    FIGURE_LSH, FIGURE_SPARSE, FIGURE_WINDOW, PATTERN_N, figure_vectors,
    lsh_keep_mask, reordered, sorted_order,
};

/// The pattern figure's file name under `book/src/figures/`.
pub const PATTERN_FIGURE: &str = "ch11-patterns.svg";
/// The time figure's file name.
pub const TIME_FIGURE: &str = "ch11-time.svg";
/// The memory figure's file name.
pub const MEMORY_FIGURE: &str = "ch11-memory.svg";
/// Whose numbers the committed figures show.
pub const COMMITTED_WHOSE: &str = "one machine's run";

/// Labels for `n` rows or columns: every eighth index, the others blank.
fn every_eighth(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            if i % 8 == 0 {
                i.to_string()
            } else {
                String::new()
            }
        })
        .collect()
}

// ANCHOR: pattern_figure
/// The keep masks of the local window, the sparse pattern and LSH at 32 positions,
/// and LSH's once more with the positions sorted by bucket, as LSH computes it.
pub fn pattern_figure() -> String {
    let n = PATTERN_N;
    let window = FIGURE_WINDOW.keep_mask(n).to_vec();
    let sparse = FIGURE_SPARSE.keep_mask(n).to_vec();
    let x = figure_vectors();
    let lsh = lsh_keep_mask(&x, &FIGURE_LSH).to_vec();
    let order = sorted_order(&attention::lsh_buckets(&x, &FIGURE_LSH).to_vec());
    let lsh_sorted = reordered(&lsh, &order);
    let labels = every_eighth(n);
    let panel = |title: &str, values| figures::Panel {
        title: title.to_string(),
        values,
        row_labels: &labels,
        col_labels: &labels,
    };
    figures::heatmap(&figures::Heatmap {
        title: "which keys each query sees, n = 32 (1: seen)",
        row_desc: "query",
        col_desc: "key",
        panels: &[
            panel("local window, w = 3", &window),
            panel("blocks of 8, 2 global", &sparse),
            panel("LSH, 4 buckets, chunks of 8", &lsh),
            panel("the same, in bucket order", &lsh_sorted),
        ],
        range: Some((0.0, 1.0)),
    })
}
// ANCHOR_END: pattern_figure

/// A log-log chart of `value` of every method in `costs` against the length.
fn cost_chart(
    costs: &Costs,
    title: &str,
    y_desc: &str,
    value: impl Fn(&Cost) -> f32,
) -> String {
    let points: Vec<Vec<(f32, f32)>> = Method::ALL
        .iter()
        .map(|&m| {
            costs
                .results
                .iter()
                .filter(|c| c.method == m)
                .map(|c| (c.n as f32, value(c)))
                .collect()
        })
        .collect();
    let series: Vec<figures::Series> = Method::ALL
        .iter()
        .zip(&points)
        .filter(|(_, p)| !p.is_empty())
        .map(|(m, points)| figures::Series {
            name: m.label(),
            points,
        })
        .collect();
    figures::line_chart(&figures::LineChart {
        title,
        x_desc: "sequence length n",
        y_desc,
        series: &series,
        log2_x: true,
        log10_y: true,
    })
}

/// The time and memory figures of `costs`, with their file names; `whose` says whose
/// machine in the titles.
pub fn cost_figures(costs: &Costs, whose: &str) -> Vec<(&'static str, String)> {
    let time = cost_chart(
        costs,
        &format!("training step, {whose}"),
        "median time (ms)",
        |c| c.millis as f32,
    );
    let memory =
        cost_chart(costs, "peak memory of a training step", "peak (MiB)", |c| {
            c.peak_bytes as f32 / (1 << 20) as f32
        });
    vec![(TIME_FIGURE, time), (MEMORY_FIGURE, memory)]
}

/// Every figure of the chapter, with its file name: the patterns, and the committed
/// costs ([`Costs::committed`]).
pub fn all() -> Vec<(&'static str, String)> {
    let mut all = vec![(PATTERN_FIGURE, pattern_figure())];
    all.extend(cost_figures(&Costs::committed(), COMMITTED_WHOSE));
    all
}
