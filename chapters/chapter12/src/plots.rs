//! The chapter's figures, drawn from the recorded comparison (`data/compare.tsv`), so
//! that the figures test redraws them in a moment.

use crate::complexity::Variant;
use crate::record::Record;
use crate::scorings::Scoring;

/// The steps averaged into each point of the learning curves.
pub const SMOOTHING: usize = 20;

// ANCHOR: learning_curves
/// The training loss of each scoring against the step: the mean over the seeds, then
/// the moving mean of the last [`SMOOTHING`] steps (one point every 5 steps).
pub fn learning_curves(record: &Record) -> String {
    let curves: Vec<Vec<(f32, f32)>> = Scoring::ALL
        .iter()
        .map(|&scoring| {
            let runs = record.runs_of(scoring);
            let steps = runs[0].losses.len();
            let mean: Vec<f32> = (0..steps)
                .map(|s| {
                    runs.iter().map(|r| r.losses[s]).sum::<f32>() / runs.len() as f32
                })
                .collect();
            (SMOOTHING..=steps)
                .step_by(5)
                .map(|end| {
                    let window = &mean[end - SMOOTHING..end];
                    (end as f32, window.iter().sum::<f32>() / SMOOTHING as f32)
                })
                .collect()
        })
        .collect();
    let series: Vec<figures::Series> = Scoring::ALL
        .iter()
        .zip(&curves)
        .map(|(s, points)| figures::Series {
            name: s.name(),
            points,
        })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "training loss, mean of 3 seeds (moving mean of 20 steps)",
        x_desc: "training step",
        y_desc: "masked cross-entropy",
        series: &series,
        log2_x: false,
        log10_y: true,
    })
}
// ANCHOR_END: learning_curves

/// The median time of one call of each variant against `d` (one machine's).
pub fn complexity_figure(record: &Record) -> String {
    let lines: Vec<Vec<(f32, f32)>> = (0..Variant::ALL.len())
        .map(|v| {
            record
                .sweep
                .iter()
                .map(|row| (row.d as f32, (row.seconds[v] * 1e6) as f32))
                .collect()
        })
        .collect();
    let series: Vec<figures::Series> = Variant::ALL
        .iter()
        .zip(&lines)
        .map(|(v, points)| figures::Series {
            name: v.name(),
            points,
        })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "one call, 64 queries against 64 keys (one machine)",
        x_desc: "d (query, key and hidden size)",
        y_desc: "median time, µs",
        series: &series,
        log2_x: true,
        log10_y: true,
    })
}

/// The hybrid's gate `g` after every step, one line per seed.
pub fn gate_figure(record: &Record) -> String {
    let runs = record.runs_of(Scoring::Hybrid);
    let names: Vec<String> =
        runs.iter().map(|r| format!("seed {}", r.seed)).collect();
    let lines: Vec<Vec<(f32, f32)>> = runs
        .iter()
        .map(|r| {
            r.gates
                .iter()
                .enumerate()
                .map(|(step, &g)| (step as f32, g))
                .collect()
        })
        .collect();
    let series: Vec<figures::Series> = names
        .iter()
        .zip(&lines)
        .map(|(name, points)| figures::Series { name, points })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "the hybrid's gate g (1: all additive, 0: all dot product)",
        x_desc: "training step",
        y_desc: "g",
        series: &series,
        log2_x: false,
        log10_y: false,
    })
}

/// Every figure of the chapter, with its file name.
pub fn all() -> Vec<(&'static str, String)> {
    let record = Record::recorded();
    vec![
        ("ch12-learning-curves.svg", learning_curves(&record)),
        ("ch12-complexity.svg", complexity_figure(&record)),
        ("ch12-gate.svg", gate_figure(&record)),
    ]
}
