//! The chapter's figures, drawn from the recorded runs and from computations of a
//! second or less, so the figures test redraws them quickly.

use chapter09::plots::{by_word, source_labels, target_labels, windowed};
use chapter09::{Translation, Vocab, trained_additive};
use figures::{LineChart, Panel, Series, line_chart};

use crate::corpus::Corpus;
use crate::placement::{PlacementRecord, deep_model, gradient_norms_at_init};
use crate::record::{recorded_lm, recorded_translation};
use crate::seq2seq::cross_attention_heads;
use crate::tour::heatmap_translation;

/// The held-out exact match of the Transformer and of chapter 9's GRU over training.
pub fn translation_chart() -> String {
    let (_, record) = recorded_translation();
    let (_, gru) = trained_additive();
    let points = |h: &[(usize, f32)]| -> Vec<(f32, f32)> {
        h.iter().map(|&(s, a)| (s as f32, a)).collect()
    };
    let (ours, theirs) = (
        points(&record.history.held_out),
        points(&gru.info.history.held_out),
    );
    line_chart(&LineChart {
        title: "chapter 9's task: held-out exact match",
        x_desc: "step",
        y_desc: "exact match",
        series: &[
            Series {
                name: "Transformer",
                points: &ours,
            },
            Series {
                name: "GRU + additive attention",
                points: &theirs,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The last decoder layer's cross-attention, one panel per head.
pub fn heads_heatmap() -> String {
    let (model, translation) = heatmap_translation();
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let heads = cross_attention_heads(&model, &translation, &src, &tgt);
    let rows = source_labels(translation.number);
    let mut cols = target_labels(&translation, &tgt);
    cols.truncate(heads[0].len());
    let values: Vec<Vec<f32>> = heads
        .iter()
        .map(|w| {
            by_word(&Translation {
                number: translation.number,
                ids: translation.ids.clone(),
                weights: w.iter().map(|r| r[..rows.len()].to_vec()).collect(),
            })
            .concat()
        })
        .collect();
    let panels: Vec<Panel<'_>> = values
        .iter()
        .enumerate()
        .map(|(h, v)| Panel {
            title: format!("head {h}"),
            values: v,
            row_labels: &rows,
            col_labels: &cols,
        })
        .collect();
    let title = format!(
        "cross-attention of the last decoder layer: {} -> {}",
        translation.number,
        translation.text(&tgt)
    );
    figures::heatmap(&figures::Heatmap {
        title: &title,
        row_desc: "",
        col_desc: "output digit (decoding step)",
        panels: &panels,
        range: Some((0.0, 1.0)),
    })
}

/// The character model's training loss (means of 50 steps) and validation loss.
pub fn lm_chart() -> String {
    let (_, record) = recorded_lm();
    let train = windowed(&record.history.losses, 50);
    let val: Vec<(f32, f32)> = record
        .history
        .val
        .iter()
        .map(|&(s, l)| (s as f32, l))
        .collect();
    line_chart(&LineChart {
        title: "the character model: loss per character",
        x_desc: "step",
        y_desc: "cross-entropy (nats)",
        series: &[
            Series {
                name: "training (mean of 50 steps)",
                points: &train,
            },
            Series {
                name: "validation",
                points: &val,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The gradient norm of each layer at initialisation, post-norm and pre-norm.
pub fn gradient_norms_chart() -> String {
    let corpus = Corpus::shipped();
    let vocab = corpus.vocab.len();
    let as_points = |v: Vec<f32>| -> Vec<(f32, f32)> {
        v.into_iter()
            .enumerate()
            .map(|(i, n)| (i as f32, n))
            .collect()
    };
    let post =
        as_points(gradient_norms_at_init(&corpus, deep_model(vocab, false), 0));
    let pre = as_points(gradient_norms_at_init(&corpus, deep_model(vocab, true), 0));
    line_chart(&LineChart {
        title: "gradient norm of each layer at initialisation (8 layers)",
        x_desc: "layer",
        y_desc: "gradient norm",
        series: &[
            Series {
                name: "post-norm",
                points: &post,
            },
            Series {
                name: "pre-norm",
                points: &pre,
            },
        ],
        log2_x: false,
        log10_y: false,
    })
}

/// The recorded training curves of the two placements, with and without warmup.
pub fn placement_chart() -> String {
    let record = PlacementRecord::recorded();
    let curves: Vec<(String, Vec<(f32, f32)>)> = record
        .runs
        .iter()
        .map(|r| (r.label(), windowed(&r.losses, 10)))
        .collect();
    let series: Vec<Series<'_>> = curves
        .iter()
        .map(|(name, points)| Series { name, points })
        .collect();
    line_chart(&LineChart {
        title: "8 layers at lr 0.01: training loss (mean of 10 steps)",
        x_desc: "step",
        y_desc: "cross-entropy (nats)",
        series: &series,
        log2_x: false,
        log10_y: false,
    })
}

/// Every figure of the chapter, by file name.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        ("ch16-translation.svg", translation_chart()),
        ("ch16-heads.svg", heads_heatmap()),
        ("ch16-lm-loss.svg", lm_chart()),
        ("ch16-gradient-norms.svg", gradient_norms_chart()),
        ("ch16-placement.svg", placement_chart()),
    ]
}
