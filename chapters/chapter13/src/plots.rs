//! The chapter's figures: GFLOP/s per rung, and the memory of the two scoring forms.

use crate::memory::ScoringPeaks;
use crate::sample::{Rung, Sample};

/// The size whose results the ladder figure shows (the largest at which every rung runs).
pub const FIGURE_SIZE: usize = 512;

/// The committed ladder figure's file name under `book/src/figures/`.
pub const LADDER_FIGURE: &str = "ch13-ladder.svg";
/// The memory figure's file name under `book/src/figures/`.
pub const MEMORY_FIGURE: &str = "ch13-additive-memory.svg";

/// A bar chart of the GFLOP/s of each rung of `sample` at size `n`; rungs not run at that
/// size are left out.
pub fn ladder_chart(sample: &Sample, n: usize, whose: &str) -> String {
    let (labels, values): (Vec<String>, Vec<f32>) = Rung::ALL
        .iter()
        .filter_map(|&r| {
            Some((r.short_label().to_string(), sample.gflops(r, n)? as f32))
        })
        .unzip();
    figures::bar_chart(&figures::BarChart {
        title: &format!("[{n}, {n}] · [{n}, {n}], {whose}"),
        x_desc: "rung",
        y_desc: "GFLOP/s",
        labels: &labels,
        values: &values,
    })
}

/// The book's ladder figure: the committed sample at [`FIGURE_SIZE`].
pub fn committed_ladder_chart() -> String {
    ladder_chart(
        &Sample::committed(),
        FIGURE_SIZE,
        "one machine's sample run",
    )
}

/// A line chart of the peak bytes of both scoring forms against the sequence length, on a
/// logarithmic scale.
pub fn memory_chart(peaks: &[ScoringPeaks]) -> String {
    let series = |f: fn(&ScoringPeaks) -> usize| -> Vec<(f32, f32)> {
        peaks.iter().map(|p| (p.n as f32, f(p) as f32)).collect()
    };
    let (bf, ff, bt, ft) = (
        series(|p| p.broadcast_forward),
        series(|p| p.fused_forward),
        series(|p| p.broadcast_training),
        series(|p| p.fused_training),
    );
    figures::line_chart(&figures::LineChart {
        title: "peak memory of additive attention (B = 2, h = 32)",
        x_desc: "sequence length n (Q = K = n)",
        y_desc: "peak bytes",
        series: &[
            figures::Series {
                name: "broadcast, training",
                points: &bt,
            },
            figures::Series {
                name: "broadcast, forward",
                points: &bf,
            },
            figures::Series {
                name: "fused, training",
                points: &ft,
            },
            figures::Series {
                name: "fused, forward",
                points: &ff,
            },
        ],
        log2_x: true,
        log10_y: true,
    })
}

/// Every figure of the chapter, with its file name: the committed ladder sample and the
/// memory of [`crate::scoring_peaks`].
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        (LADDER_FIGURE, committed_ladder_chart()),
        (MEMORY_FIGURE, memory_chart(&crate::scoring_peaks())),
    ]
}
