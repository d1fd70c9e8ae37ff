//! The chapter's figures, drawn from seeded runs of the [`sweep`](crate::sweep).

use crate::sweep::{Row, gradient_rows, uniform_rows};
use crate::uniform::{History, train};

/// The seed the figures' runs use.
pub const FIGURE_SEED: u64 = 1;

/// The row of `rows` called `name`.
fn row(rows: &[Row], name: &str) -> Row {
    *rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name:?}"))
}

/// The held-out entropy against the step, as points.
fn entropy_points(history: &History) -> Vec<(f32, f32)> {
    history
        .evals
        .iter()
        .map(|e| (e.step as f32, e.alignment.entropy))
        .collect()
}

/// The norm of one group's gradient at every step, as points (steps from 1).
fn grad_points(history: &History, group: &str) -> Vec<(f32, f32)> {
    let g = history
        .groups
        .iter()
        .position(|&n| n == group)
        .expect("a known group");
    history
        .grad_norms
        .iter()
        .enumerate()
        .map(|(step, norms)| ((step + 1) as f32, norms[g]))
        .collect()
}

// ANCHOR: entropy_figure
/// The weights' entropy on the held-out batch during training, for the baseline and
/// the setups that changed it most.
pub fn entropy_figure() -> String {
    let rows = uniform_rows();
    // (the legend's name, the table's)
    let names = [
        ("baseline", "baseline (h 32, tanh, Adam)"),
        ("h = 256", "h = 256"),
        ("v too large", "v ~ normal(0, 3), too large"),
        ("lr too small", "lr 1e-4, too small"),
        ("ReLU", "ReLU energies"),
    ];
    let runs: Vec<Vec<(f32, f32)>> = names
        .iter()
        .map(|(_, n)| entropy_points(&train(&row(&rows, n).setup, FIGURE_SEED)))
        .collect();
    let series: Vec<figures::Series> = names
        .iter()
        .zip(&runs)
        .map(|((name, _), points)| figures::Series { name, points })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "how far from uniform the weights get",
        x_desc: "training step",
        y_desc: "entropy / ln(len)",
        series: &series,
        log2_x: false,
        log10_y: false,
    })
}
// ANCHOR_END: entropy_figure

/// The gradient norms of `W_q`, `W_k` and `v` at every step of the run that blows up
/// with clipping, and of `v` without clipping and with weight normalisation.
pub fn gradient_figure() -> String {
    let rows = gradient_rows();
    let clipped = train(&row(&rows, "SGD 3, ReLU, clip to 1").setup, FIGURE_SEED);
    let bare = train(&row(&rows, "SGD 3, ReLU").setup, FIGURE_SEED);
    let normalised =
        train(&row(&rows, "SGD 3, ReLU, weight norm").setup, FIGURE_SEED);
    let points = [
        grad_points(&clipped, "W_q"),
        grad_points(&clipped, "W_k"),
        grad_points(&clipped, "v"),
        grad_points(&bare, "v"),
        grad_points(&normalised, "v"),
    ];
    let names = [
        "W_q, clipped",
        "W_k, clipped",
        "v, clipped",
        "v, no clipping",
        "v, weight norm",
    ];
    let series: Vec<figures::Series> = names
        .iter()
        .zip(&points)
        .map(|(name, points)| figures::Series { name, points })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "gradient norms before clipping, SGD at 3, ReLU",
        x_desc: "training step",
        y_desc: "gradient norm",
        series: &series,
        log2_x: false,
        log10_y: true,
    })
}

/// Every figure of the chapter, with its file name.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        ("ch10-entropy.svg", entropy_figure()),
        ("ch10-gradient-norms.svg", gradient_figure()),
    ]
}
