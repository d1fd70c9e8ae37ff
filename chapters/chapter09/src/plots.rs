//! The chapter's figures, drawn from the recorded runs in `trained/`: the loss curves
//! from their histories, the alignments from the additive model's weights. Both are
//! functions of committed files alone, so the figures test redraws them in seconds.

use crate::checkpoint::Checkpoint;
use crate::data::{EOS, Vocab, source_tokens};
use crate::decode::Translation;

/// The mean of each window of `window` losses, as `(steps taken at the window's end,
/// mean)` points: per-step losses are noisy, window means show the trend.
pub fn windowed(losses: &[f32], window: usize) -> Vec<(f32, f32)> {
    losses
        .chunks(window.max(1))
        .enumerate()
        .map(|(i, w)| {
            let end = i * window.max(1) + w.len();
            (end as f32, w.iter().sum::<f32>() / w.len() as f32)
        })
        .collect()
}

// ANCHOR: loss_chart
/// The training loss of each recorded run, means over windows of 10 steps, on a log
/// scale (the loss falls by three orders of magnitude).
pub fn loss_chart(runs: &[(&str, &Checkpoint)]) -> String {
    let points: Vec<Vec<(f32, f32)>> = runs
        .iter()
        .map(|(_, c)| windowed(&c.info.history.losses, 10))
        .collect();
    let series: Vec<figures::Series<'_>> = runs
        .iter()
        .zip(&points)
        .map(|((name, _), points)| figures::Series { name, points })
        .collect();
    figures::line_chart(&figures::LineChart {
        title: "training loss (mean of 10 steps)",
        x_desc: "step",
        y_desc: "masked cross-entropy",
        series: &series,
        log2_x: false,
        log10_y: true,
    })
}
// ANCHOR_END: loss_chart

/// The row labels of an alignment: each predicted digit, then `<eos>`.
pub fn target_labels(t: &Translation, tgt_vocab: &Vocab) -> Vec<String> {
    let mut labels: Vec<String> = t
        .ids
        .iter()
        .map(|&i| tgt_vocab.token(i).to_string())
        .collect();
    labels.push(EOS.to_string());
    labels.truncate(t.weights.len());
    labels
}

/// The column labels of an alignment: the source words, then `<eos>`.
pub fn source_labels(number: u32) -> Vec<String> {
    let mut labels = source_tokens(number);
    labels.push(EOS.to_string());
    labels
}

/// The weights of a decoding, one row per source token and one column per step (the
/// transpose of [`Translation::weights`]).
pub fn by_word(t: &Translation) -> Vec<Vec<f32>> {
    let words = t.weights.first().map_or(0, Vec::len);
    (0..words)
        .map(|w| t.weights.iter().map(|step| step[w]).collect())
        .collect()
}

// ANCHOR: alignment_heatmap
/// The attention weights of greedy decodings, one panel per example: a row per source
/// token, a column per decoding step (labelled with the digit it predicted), on one
/// colour scale from 0 to 1. Words run down the side, where long labels have room;
/// each column sums to 1.
pub fn alignment_heatmap(translations: &[Translation], tgt_vocab: &Vocab) -> String {
    let rows: Vec<Vec<String>> = translations
        .iter()
        .map(|t| source_labels(t.number))
        .collect();
    let cols: Vec<Vec<String>> = translations
        .iter()
        .map(|t| target_labels(t, tgt_vocab))
        .collect();
    let values: Vec<Vec<f32>> =
        translations.iter().map(|t| by_word(t).concat()).collect();
    let panels: Vec<figures::Panel<'_>> = translations
        .iter()
        .enumerate()
        .map(|(i, t)| figures::Panel {
            title: format!("{} → {}", t.number, t.text(tgt_vocab)),
            values: &values[i],
            row_labels: &rows[i],
            col_labels: &cols[i],
        })
        .collect();
    figures::heatmap(&figures::Heatmap {
        title: "where each decoding step looks: source words (rows) × output digits",
        row_desc: "",
        col_desc: "output digit (decoding step)",
        panels: &panels,
        range: Some((0.0, 1.0)),
    })
}
// ANCHOR_END: alignment_heatmap

// ANCHOR: compared_heatmap
/// The attention weights of the same numbers decoded by several models: one panel per
/// `(model name, translation)`, titled with both, on one colour scale from 0 to 1.
pub fn compared_heatmap(panels: &[(&str, Translation)], tgt_vocab: &Vocab) -> String {
    let rows: Vec<Vec<String>> = panels
        .iter()
        .map(|(_, t)| source_labels(t.number))
        .collect();
    let cols: Vec<Vec<String>> = panels
        .iter()
        .map(|(_, t)| target_labels(t, tgt_vocab))
        .collect();
    let values: Vec<Vec<f32>> =
        panels.iter().map(|(_, t)| by_word(t).concat()).collect();
    let panels: Vec<figures::Panel<'_>> = panels
        .iter()
        .enumerate()
        .map(|(i, (name, t))| figures::Panel {
            title: format!("{name}: {} → {}", t.number, t.text(tgt_vocab)),
            values: &values[i],
            row_labels: &rows[i],
            col_labels: &cols[i],
        })
        .collect();
    figures::heatmap(&figures::Heatmap {
        title: "without and with the coverage loss: source words × output digits",
        row_desc: "",
        col_desc: "output digit (decoding step)",
        panels: &panels,
        range: Some((0.0, 1.0)),
    })
}
// ANCHOR_END: compared_heatmap
