//! The chapter's figure: matrix-product speed against size on each device.

use crate::sample::{Kind, Sample};

/// The committed figure's file name under `book/src/figures/`.
pub const SPEED_FIGURE: &str = "ch14-matmul-speed.svg";

/// GFLOP/s of `[n, n] · [n, n]` against `n` on the CPU and on the GPU of `sample`.
pub fn speed_chart(sample: &Sample, whose: &str) -> String {
    let series = |gpu: bool| -> Vec<(f32, f32)> {
        sample
            .rows
            .iter()
            .filter(|r| r.kind == Kind::Matmul)
            .filter_map(|r| {
                let seconds = if gpu { r.gpu? } else { r.cpu? };
                let gflops = 2.0 * (r.size as f64).powi(3) / seconds / 1e9;
                Some((r.size as f32, gflops as f32))
            })
            .collect()
    };
    let (cpu, gpu) = (series(false), series(true));
    // The devices' full names are in the page's table; the legend stays small.
    let gpu_name = if sample.gpu.contains("(Cpu)") {
        "GPU (a software one)"
    } else {
        "GPU"
    };
    figures::line_chart(&figures::LineChart {
        title: &format!("[n, n] · [n, n], {whose}"),
        x_desc: "n",
        y_desc: "GFLOP/s",
        series: &[
            figures::Series {
                name: "CPU",
                points: &cpu,
            },
            figures::Series {
                name: gpu_name,
                points: &gpu,
            },
        ],
        log2_x: true,
        log10_y: true,
    })
}

/// Every committed figure, with its file name.
pub fn all() -> [(&'static str, String); 1] {
    [(
        SPEED_FIGURE,
        speed_chart(&Sample::committed(), "one machine's sample run"),
    )]
}
