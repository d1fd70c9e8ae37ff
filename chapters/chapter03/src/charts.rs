//! The chapter's figures, drawn from a [`Tour`] with the `figures` crate.
//!
//! [`all`] gives every figure with its file name; the example writes them under
//! `book/src/figures/`, and `tests/figures.rs` checks that the committed files are what
//! this code draws.

use engine::Tensor;
use figures::{Heatmap, LineChart, Panel, Series};

use crate::{Dataset, Tour, TrainStep, WidthResult};

/// `(x, y)` pairs from two 1-D tensors of the same length.
fn points(x: &Tensor, y: &Tensor) -> Vec<(f32, f32)> {
    x.to_vec().into_iter().zip(y.to_vec()).collect()
}

/// The data: the truth at the test inputs, and the noisy training targets joined in order
/// of their inputs.
pub fn data_chart(data: &Dataset) -> String {
    let truth = points(&data.x_test, &data.y_test);
    let observed = points(&data.x_train, &data.y_train);
    figures::line_chart(&LineChart {
        title: "The data: f(x) = 2 sin x + x^0.8, and noisy samples",
        x_desc: "x",
        y_desc: "y",
        series: &[
            Series {
                name: "truth f(x)",
                points: &truth,
            },
            Series {
                name: "training targets (values)",
                points: &observed,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The truth, average pooling, the fixed width and the learned width, over the test
/// inputs.
pub fn fits_chart(tour: &Tour) -> String {
    let d = &tour.data;
    let truth = points(&d.x_test, &d.y_test);
    let average = points(&d.x_test, &tour.average);
    let fixed = points(&d.x_test, &tour.fixed.0);
    let learned = points(&d.x_test, &tour.learned.0);
    let learned_name = format!("learned σ = {:.2}", 1.0 / tour.learned_w.abs());
    figures::line_chart(&LineChart {
        title: "Predictions at the queries",
        x_desc: "x (test inputs are the queries)",
        y_desc: "y",
        series: &[
            Series {
                name: "truth f(x)",
                points: &truth,
            },
            Series {
                name: "average pooling",
                points: &average,
            },
            Series {
                name: "fixed σ = 1",
                points: &fixed,
            },
            Series {
                name: &learned_name,
                points: &learned,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The leave-one-out loss at each step of training the width.
pub fn loss_chart(history: &[TrainStep]) -> String {
    let loss: Vec<(f32, f32)> = history
        .iter()
        .enumerate()
        .map(|(step, s)| (step as f32, s.loss))
        .collect();
    figures::line_chart(&LineChart {
        title: "Training the kernel width (leave-one-out)",
        x_desc: "Adam step",
        y_desc: "mean squared error",
        series: &[Series {
            name: "leave-one-out loss",
            points: &loss,
        }],
        log2_x: false,
        log10_y: false,
    })
}

/// Labels for the rows or columns of a heatmap: the value, with one decimal, on every
/// `every`-th entry and nothing on the others, so that 50 ticks stay readable.
pub fn tick_labels(values: &[f32], every: usize) -> Vec<String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if i % every == 0 {
                format!("{v:.1}")
            } else {
                String::new()
            }
        })
        .collect()
}

/// The attention weights `[Q, K]` as a heatmap: queries (test inputs) down, keys (sorted
/// training inputs) across, with the colour scale from the smallest to the largest weight.
pub fn weights_heatmap(
    title: &str,
    weights: &Tensor,
    queries: &Tensor,
    keys: &Tensor,
) -> String {
    let values = weights.to_vec();
    let rows = tick_labels(&queries.to_vec(), 10);
    let cols = tick_labels(&keys.to_vec(), 10);
    figures::heatmap(&Heatmap {
        title,
        row_desc: "query (test input x)",
        col_desc: "key (training input xᵢ)",
        panels: &[Panel {
            title: String::new(),
            values: &values,
            row_labels: &rows,
            col_labels: &cols,
        }],
        range: None,
    })
}

/// Test and leave-one-out errors against the kernel width, on a log scale, with average
/// pooling's test error and the learned width as reference lines.
pub fn widths_chart(
    sweep: &[WidthResult],
    average_mse: f32,
    learned_sigma: f32,
) -> String {
    let x = |r: &WidthResult| r.sigma.log10();
    let test: Vec<(f32, f32)> = sweep.iter().map(|r| (x(r), r.test_mse)).collect();
    let loo: Vec<(f32, f32)> = sweep.iter().map(|r| (x(r), r.loo_mse)).collect();
    let ends = [sweep.first(), sweep.last()];
    let average: Vec<(f32, f32)> =
        ends.iter().flatten().map(|r| (x(r), average_mse)).collect();
    let top = sweep
        .iter()
        .map(|r| r.loo_mse.max(r.test_mse))
        .fold(average_mse, f32::max);
    let learned = [(learned_sigma.log10(), 0.0), (learned_sigma.log10(), top)];
    figures::line_chart(&LineChart {
        title: "Too narrow, too wide: error against the kernel width",
        x_desc: "log₁₀ σ (−2 is σ = 0.01, 0 is σ = 1, 2 is σ = 100)",
        y_desc: "mean squared error",
        series: &[
            Series {
                name: "test MSE (against the truth)",
                points: &test,
            },
            Series {
                name: "leave-one-out MSE (training)",
                points: &loo,
            },
            Series {
                name: "average pooling, test MSE",
                points: &average,
            },
            Series {
                name: "the learned σ",
                points: &learned,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The widths of the chart of errors against the width: 10^(k/8) for k = −16 ..= 16, from
/// 0.01 to 100, evenly spaced on the log scale.
pub fn chart_widths() -> Vec<f32> {
    (-16..=16).map(|k| 10f32.powf(k as f32 / 8.0)).collect()
}

/// Every figure of the chapter with its file name under `book/src/figures/`.
pub fn all(tour: &Tour) -> Vec<(&'static str, String)> {
    let d = &tour.data;
    let average_mse = crate::mse(&tour.average, &d.y_test).item();
    let learned_title = format!(
        "Weights, learned width σ = {:.2}",
        1.0 / tour.learned_w.abs()
    );
    let sweep = crate::width_sweep(d, &chart_widths());
    vec![
        ("ch03-data.svg", data_chart(d)),
        ("ch03-fits.svg", fits_chart(tour)),
        (
            "ch03-weights-fixed.svg",
            weights_heatmap(
                "Weights, fixed width σ = 1",
                &tour.fixed.1,
                &d.x_test,
                &d.x_train,
            ),
        ),
        ("ch03-loss.svg", loss_chart(&tour.history)),
        (
            "ch03-weights-learned.svg",
            weights_heatmap(&learned_title, &tour.learned.1, &d.x_test, &d.x_train),
        ),
        (
            "ch03-widths.svg",
            widths_chart(&sweep, average_mse, 1.0 / tour.learned_w.abs()),
        ),
    ]
}
