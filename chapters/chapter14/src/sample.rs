//! One machine's measurements, CPU and GPU side by side: what the `measure` example prints
//! and what `--record` commits for the book.

use std::fmt::Write;

use crate::cost::CostModel;

/// What was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `[n, n] · [n, n]`, `size` = n.
    Matmul,
    /// One tiny op (`&x + &x` on one value), from the call to its result: a launch.
    Launch,
    /// Copying `size` bytes of values to the GPU (`Tensor::to`).
    Upload,
    /// Reading `size` bytes of values back from the GPU (`Tensor::to_vec`).
    Readback,
    /// `scaled_dot_product_attention` forward, queries, keys and values `[8, T, 64]`, `size` = T.
    SdpaForward,
    /// Multi-head attention (256 hiddens, 8 heads), forward and backward on `[8, T, 256]`,
    /// `size` = T.
    MultiHeadTraining,
}

impl Kind {
    /// Every kind, in the order of the table.
    pub const ALL: [Kind; 6] = [
        Kind::Matmul,
        Kind::Launch,
        Kind::Upload,
        Kind::Readback,
        Kind::SdpaForward,
        Kind::MultiHeadTraining,
    ];

    /// The name in the sample file.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Matmul => "matmul",
            Kind::Launch => "launch",
            Kind::Upload => "upload",
            Kind::Readback => "readback",
            Kind::SdpaForward => "sdpa_forward",
            Kind::MultiHeadTraining => "multi_head_training",
        }
    }

    fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }

    /// How the table names a measurement of this kind at `size`.
    pub fn label(self, size: usize) -> String {
        match self {
            Kind::Matmul => format!("matmul [{size}, {size}] · [{size}, {size}]"),
            Kind::Launch => "one tiny op (a launch)".into(),
            Kind::Upload => format!("upload {}", engine::memory::human(size)),
            Kind::Readback => format!("read back {}", engine::memory::human(size)),
            Kind::SdpaForward => format!("scaled dot-product, forward, T = {size}"),
            Kind::MultiHeadTraining => {
                format!("multi-head, forward + backward, T = {size}")
            }
        }
    }
}

/// One timing: seconds on each device (`None` where it was not run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// What was timed.
    pub kind: Kind,
    /// Its size (see [`Kind`]).
    pub size: usize,
    /// The median seconds on the CPU.
    pub cpu: Option<f64>,
    /// The median seconds on the GPU.
    pub gpu: Option<f64>,
}

/// A run of the measurements on one machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The CPU, with its core count.
    pub cpu: String,
    /// The GPU as wgpu names it, with its backend and kind (or why there was none).
    pub gpu: String,
    /// The timings.
    pub rows: Vec<Row>,
}

/// The committed run (see [`Sample::committed`]).
const COMMITTED: &str = include_str!("../data/sample_measure.tsv");

impl Sample {
    /// The run recorded for the book, `data/sample_measure.tsv`, rewritten only by
    /// `cargo run --release --features wgpu -p chapter14 --example measure -- --record`.
    pub fn committed() -> Sample {
        Sample::parse(COMMITTED)
            .unwrap_or_else(|e| panic!("data/sample_measure.tsv: {e}"))
    }

    /// Reads a sample file: `#` comments, a `cpu` and a `gpu` line, then one line per row:
    /// kind, size, CPU seconds, GPU seconds (`-` where not run), separated by tabs.
    pub fn parse(text: &str) -> Result<Sample, String> {
        let (mut cpu, mut gpu, mut rows) = (None, None, Vec::new());
        for (i, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let bad = |what: &str| format!("line {}: {what}: {line:?}", i + 1);
            match fields.as_slice() {
                ["cpu", name] => cpu = Some(name.to_string()),
                ["gpu", name] => gpu = Some(name.to_string()),
                [kind, size, c, g] => {
                    let kind =
                        Kind::from_key(kind).ok_or_else(|| bad("unknown kind"))?;
                    let size = size
                        .parse()
                        .map_err(|_| bad("a size must be a whole number"))?;
                    let seconds = |s: &str| -> Result<Option<f64>, String> {
                        if s == "-" {
                            return Ok(None);
                        }
                        s.parse()
                            .map(Some)
                            .map_err(|_| bad("seconds must be a number or -"))
                    };
                    rows.push(Row {
                        kind,
                        size,
                        cpu: seconds(c)?,
                        gpu: seconds(g)?,
                    });
                }
                _ => return Err(bad("expected cpu, gpu, or four fields")),
            }
        }
        Ok(Sample {
            cpu: cpu.ok_or("no cpu line")?,
            gpu: gpu.ok_or("no gpu line")?,
            rows,
        })
    }

    /// The sample in the file format [`Sample::parse`] reads.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# One machine's run of chapter 14's measurements (median seconds), recorded with\n#   cargo run --release --features wgpu -p chapter14 --example measure -- --record\n# Your machine's numbers will differ.\n",
        );
        let _ = writeln!(out, "cpu\t{}", self.cpu);
        let _ = writeln!(out, "gpu\t{}", self.gpu);
        let cell = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{s:.6e}"));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}",
                r.kind.key(),
                r.size,
                cell(r.cpu),
                cell(r.gpu)
            );
        }
        out
    }

    /// The row of `kind` at `size`, if measured.
    pub fn row(&self, kind: Kind, size: usize) -> Option<&Row> {
        self.rows.iter().find(|r| r.kind == kind && r.size == size)
    }

    /// The sizes measured for `kind`, in order.
    pub fn sizes(&self, kind: Kind) -> Vec<usize> {
        self.rows
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.size)
            .collect()
    }

    // ANCHOR: table
    /// A Markdown table: each measurement's time on each device, and for the products
    /// their GFLOP/s, for transfers their GB/s.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| measurement | CPU | GPU | rate on CPU | rate on GPU |\n|---|---:|---:|---:|---:|\n",
        );
        let time = |s: Option<f64>| s.map_or("—".into(), human_seconds);
        for r in &self.rows {
            let rate = |s: Option<f64>| match (r.kind, s) {
                (Kind::Matmul, Some(s)) => {
                    format!("{:.1} GFLOP/s", 2.0 * (r.size as f64).powi(3) / s / 1e9)
                }
                (Kind::Upload | Kind::Readback, Some(s)) => {
                    format!("{:.2} GB/s", r.size as f64 / s / 1e9)
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                r.kind.label(r.size),
                time(r.cpu),
                time(r.gpu),
                rate(r.cpu),
                rate(r.gpu)
            );
        }
        out
    }
    // ANCHOR_END: table

    /// The cost model of [`crate::CostModel`] from this run: the speeds of the largest
    /// product measured on both devices, the launch, and the largest transfers. `None`
    /// when the GPU was not measured.
    pub fn cost_model(&self) -> Option<CostModel> {
        let both = |r: &&Row| r.cpu.is_some() && r.gpu.is_some();
        let largest = self
            .rows
            .iter()
            .filter(|r| r.kind == Kind::Matmul)
            .filter(both)
            .max_by_key(|r| r.size)?;
        let flops = 2.0 * (largest.size as f64).powi(3);
        let launch = self.rows.iter().find(|r| r.kind == Kind::Launch)?.gpu?;
        let rate = |kind: Kind| {
            let r = self
                .rows
                .iter()
                .filter(|r| r.kind == kind && r.gpu.is_some())
                .max_by_key(|r| r.size)?;
            Some(r.size as f64 / r.gpu?)
        };
        Some(CostModel {
            cpu_flops: flops / largest.cpu?,
            gpu_flops: flops / largest.gpu?,
            launch_seconds: launch,
            upload_bytes_per_second: rate(Kind::Upload)?,
            readback_bytes_per_second: rate(Kind::Readback)?,
        })
    }
}

/// Seconds in the unit that keeps 1–999 of them: `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn human_seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}
