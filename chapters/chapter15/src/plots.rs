//! The figures, drawn from the recorded comparison.

use figures::{LineChart, Series, line_chart};

use crate::record::Record;
use crate::training::Mode;
use crate::underflow::share;

/// The dynamic loss scale of every step of the recorded GradScaler run, on a log
/// scale.
pub fn scale_chart(record: &Record) -> String {
    let points: Vec<(f32, f32)> = record
        .run(Mode::F16Dynamic)
        .scales
        .iter()
        .enumerate()
        .map(|(i, &s)| (i as f32, s))
        .collect();
    line_chart(&LineChart {
        title: "GradScaler's loss scale over chapter 9's training (f16)",
        x_desc: "step",
        y_desc: "scale (log10)",
        series: &[Series {
            name: "scale",
            points: &points,
        }],
        log2_x: false,
        log10_y: true,
    })
}

/// The share of gradient entries that vanish in f16 without a scale, over the
/// whole model, along the recorded f32 run.
pub fn underflow_chart(record: &Record) -> String {
    let column = |k: usize| -> Vec<(f32, f32)> {
        record
            .underflow
            .iter()
            .map(|(step, layers)| (*step as f32, 100.0 * share(layers, k) as f32))
            .collect()
    };
    let (f16, scaled, bf16) = (column(0), column(1), column(2));
    line_chart(&LineChart {
        title: "Gradient entries that vanish in half precision",
        x_desc: "step of the f32 run",
        y_desc: "% of the nonzero entries",
        series: &[
            Series {
                name: "f16",
                points: &f16,
            },
            Series {
                name: "f16, loss x1024",
                points: &scaled,
            },
            Series {
                name: "bf16",
                points: &bf16,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The training loss of every step of every mode in the recorded small-gradient
/// comparison, on a log scale.
pub fn small_loss_chart(small: &Record) -> String {
    let points: Vec<Vec<(f32, f32)>> = small
        .runs
        .iter()
        .map(|r| {
            r.losses
                .iter()
                .enumerate()
                .map(|(i, &l)| (i as f32, l))
                .collect()
        })
        .collect();
    let series: Vec<Series> = small
        .runs
        .iter()
        .zip(&points)
        .map(|(r, p)| Series {
            name: r.mode.name(),
            points: p,
        })
        .collect();
    line_chart(&LineChart {
        title: "Training loss with every gradient 2^14 times smaller",
        x_desc: "step",
        y_desc: "loss (log10)",
        series: &series,
        log2_x: false,
        log10_y: true,
    })
}

/// Every figure of the chapter, by file name, drawn from the recorded comparisons.
pub fn all() -> Vec<(&'static str, String)> {
    let record = Record::recorded();
    vec![
        ("ch15-scale.svg", scale_chart(&record)),
        ("ch15-underflow.svg", underflow_chart(&record)),
        (
            "ch15-small-loss.svg",
            small_loss_chart(&Record::recorded_small()),
        ),
    ]
}
