//! The chapter's figures, drawn from the seeded toy run.

use crate::training::{KEYS, QUERIES, ToyRun};

/// The names of the toy task's keys for one example: `k0`, `k1`, … for real keys and
/// `pad` for padding.
pub fn key_labels(len: usize) -> Vec<String> {
    (0..KEYS)
        .map(|j| {
            if j < len {
                format!("k{j}")
            } else {
                "pad".to_string()
            }
        })
        .collect()
}

/// The names of the toy task's queries: `max f0`, `max f1`, `max f2` ("which key has
/// the largest feature i?").
pub fn query_labels() -> Vec<String> {
    (0..QUERIES).map(|i| format!("max f{i}")).collect()
}

// ANCHOR: bar_chart
/// One query's weights over the keys at initialisation: almost uniform over the real
/// keys, exactly zero on the padding.
pub fn bar_chart(run: &ToyRun) -> String {
    let weights = run.weights_before.narrow(0, 0, 1).to_vec();
    figures::bar_chart(&figures::BarChart {
        title: "query \"max f0\" at initialisation",
        x_desc: "key",
        y_desc: "attention weight",
        labels: &key_labels(run.len),
        values: &weights,
    })
}
// ANCHOR_END: bar_chart

// ANCHOR: heatmap
/// The weights of one example, queries × keys, before and after training, on one
/// colour scale from 0 to 1.
pub fn heatmap(run: &ToyRun) -> String {
    let (rows, cols) = (query_labels(), key_labels(run.len));
    let (before, after) = (run.weights_before.to_vec(), run.weights_after.to_vec());
    let panel = |title: &str, values| figures::Panel {
        title: title.to_string(),
        values,
        row_labels: &rows,
        col_labels: &cols,
    };
    figures::heatmap(&figures::Heatmap {
        title: "additive attention weights of one example",
        row_desc: "query",
        col_desc: "key",
        panels: &[
            panel("at initialisation", &before),
            panel("after training", &after),
        ],
        range: Some((0.0, 1.0)),
    })
}
// ANCHOR_END: heatmap

/// Every figure of the chapter, by file name, drawn from one [`ToyRun`].
pub fn all(run: &ToyRun) -> [(&'static str, String); 2] {
    [
        ("ch05-one-query-weights.svg", bar_chart(run)),
        ("ch05-weights-heatmap.svg", heatmap(run)),
    ]
}
