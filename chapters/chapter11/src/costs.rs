//! The costs of a training step of each method, measured by the `costs` example and
//! committed as one machine's run (`data/costs.tsv`): the table, the slopes of its
//! log-log lines, and the speed-ups over full attention.
//!
//! Times cannot be reproduced, so nothing here reads a clock: the `costs` example
//! does, and [`Costs::committed`] reads back the run recorded for the book. The peak
//! bytes are another matter: the engine counts them exactly, the same on every
//! machine, and [`training_peak`](crate::memory::training_peak) recomputes any of
//! them.

use std::fmt::Write;

use engine::memory::human;

use crate::methods::{FEATURES, Method};

/// The lengths the `costs` example measures: 256, 512, …, 16384.
pub const LENGTHS: [usize; 7] = [256, 512, 1024, 2048, 4096, 8192, 16384];

/// The slopes are fitted over the lengths from this one up.
pub const SLOPE_FROM: usize = 2048;

/// The speed-up the article reports for window and sparse attention over full
/// attention, on legal documents.
pub const ARTICLE_SPEEDUP: f64 = 8.0;

/// The `[n, n]` tensors of `f32` that a training step of full attention holds at its
/// peak (measured: see [`full_peak_estimate`]).
pub const FULL_SQUARES: usize = 5;

// ANCHOR: full_peak_estimate
/// The bytes full attention holds at the peak of a training step over `n` positions:
/// [`FULL_SQUARES`] tensors of `n²` floats, and two of `n × 64` (the output and its
/// gradient). The engine's count is this, plus 12 bytes of scalars.
pub fn full_peak_estimate(n: usize) -> usize {
    (FULL_SQUARES * n * n + 2 * n * FEATURES) * size_of::<f32>()
}
// ANCHOR_END: full_peak_estimate

/// One measurement: a method at one length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// The method.
    pub method: Method,
    /// The sequence length.
    pub n: usize,
    /// The median time of a training step (forward and backward), in milliseconds.
    pub millis: f64,
    /// The peak bytes of a training step beyond its inputs
    /// ([`training_peak`](crate::memory::training_peak)).
    pub peak_bytes: usize,
}

/// A run of the `costs` example on one machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// The CPU, as `/proc/cpuinfo` names it, with its core count.
    pub cpu: String,
    /// The engine's kernel path ([`engine::kernels::KernelPath::name`]).
    pub engine_path: String,
    /// The threads the engine's products and kernels ran on.
    pub threads: usize,
    /// Each time is the median of at least this many runs.
    pub runs: usize,
    /// How many times the whole table was measured; each case keeps its fastest
    /// round.
    pub rounds: usize,
    /// Full attention was skipped at lengths whose [`full_peak_estimate`] exceeds
    /// this many bytes.
    pub limit_bytes: usize,
    /// The measurements, in the order they were taken.
    pub results: Vec<Cost>,
}

/// The committed run (see [`Costs::committed`]).
const COMMITTED: &str = include_str!("../data/costs.tsv");

impl Costs {
    /// The run recorded for the book, `data/costs.tsv`: one machine's numbers,
    /// rewritten only by
    /// `cargo run --release -p chapter11 --example costs -- --record`.
    pub fn committed() -> Costs {
        Costs::parse(COMMITTED).unwrap_or_else(|e| panic!("data/costs.tsv: {e}"))
    }

    /// Reads the data file: `#` comments, then tab-separated lines `cpu NAME`,
    /// `engine_path NAME`, `threads N`, `runs N`, `rounds N`, `limit_bytes N` and
    /// `cost METHOD N MILLISECONDS PEAK_BYTES`.
    ///
    /// # Errors
    /// The line number and what is wrong with it.
    pub fn parse(text: &str) -> Result<Costs, String> {
        let mut costs = Costs {
            cpu: String::new(),
            engine_path: String::new(),
            threads: 1,
            runs: 1,
            rounds: 1,
            limit_bytes: 0,
            results: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}: {line:?}", i + 1);
            let count = |s: &str| s.parse::<usize>().map_err(|_| bad("not a count"));
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["cpu", name] => costs.cpu = name.to_string(),
                ["engine_path", name] => costs.engine_path = name.to_string(),
                ["threads", t] => costs.threads = count(t)?,
                ["runs", r] => costs.runs = count(r)?,
                ["rounds", r] => costs.rounds = count(r)?,
                ["limit_bytes", b] => costs.limit_bytes = count(b)?,
                ["cost", method, n, millis, peak] => costs.results.push(Cost {
                    method: Method::from_key(method)
                        .ok_or_else(|| bad("unknown method"))?,
                    n: count(n)?,
                    millis: millis.parse().map_err(|_| bad("not a time"))?,
                    peak_bytes: count(peak)?,
                }),
                _ => {
                    return Err(bad(
                        "expected cpu, engine_path, threads, runs, rounds, \
                                    limit_bytes or cost",
                    ));
                }
            }
        }
        Ok(costs)
    }

    /// The data file's text, which [`Costs::parse`] reads back.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# One machine's run of chapter 11's costs example: a training step\n\
             # (forward and backward) of self-attention over n positions, B = 1,\n\
             # one head, 64 features; the median time in milliseconds (of the\n\
             # fastest round) and the peak bytes the engine counted. Recorded with\n\
             #   cargo run --release -p chapter11 --example costs -- \\\n\
             #     --record --rounds N\n\
             # Your machine's times will differ; its peak bytes will not.\n",
        );
        let _ = writeln!(out, "cpu\t{}", self.cpu);
        let _ = writeln!(out, "engine_path\t{}", self.engine_path);
        let _ = writeln!(out, "threads\t{}", self.threads);
        let _ = writeln!(out, "runs\t{}", self.runs);
        let _ = writeln!(out, "rounds\t{}", self.rounds);
        let _ = writeln!(out, "limit_bytes\t{}", self.limit_bytes);
        for c in &self.results {
            let _ = writeln!(
                out,
                "cost\t{}\t{}\t{:.3}\t{}",
                c.method.key(),
                c.n,
                c.millis,
                c.peak_bytes
            );
        }
        out
    }

    /// The measurement of `method` at `n`, if there is one.
    pub fn get(&self, method: Method, n: usize) -> Option<Cost> {
        self.results
            .iter()
            .copied()
            .find(|c| c.method == method && c.n == n)
    }

    /// The lengths measured, in increasing order.
    pub fn lengths(&self) -> Vec<usize> {
        let mut lengths: Vec<usize> = self.results.iter().map(|c| c.n).collect();
        lengths.sort_unstable();
        lengths.dedup();
        lengths
    }

    /// A table with one row per length and one column per method: `value` of each
    /// measurement, `-` where the method was not run.
    fn table(&self, title: &str, value: impl Fn(&Cost) -> String) -> String {
        let mut out = format!("{title:<7}");
        for m in Method::ALL {
            let _ = write!(out, "{:>11}", m.label());
        }
        out.push('\n');
        for n in self.lengths() {
            let _ = write!(out, "{n:>7}");
            for m in Method::ALL {
                let cell = self.get(m, n).map_or("-".into(), |c| value(&c));
                let _ = write!(out, "{cell:>11}");
            }
            out.push('\n');
        }
        out
    }

    /// The median times in milliseconds, one row per length.
    pub fn time_table(&self) -> String {
        self.table("ms", |c| format!("{:.2}", c.millis))
    }

    /// The peak bytes, one row per length.
    pub fn memory_table(&self) -> String {
        self.table("peak", |c| human(c.peak_bytes))
    }

    /// The points `(n, f(cost))` of `method` from [`SLOPE_FROM`] up.
    fn upper_points(
        &self,
        method: Method,
        f: impl Fn(&Cost) -> f64,
    ) -> Vec<(f64, f64)> {
        self.results
            .iter()
            .filter(|c| c.method == method && c.n >= SLOPE_FROM)
            .map(|c| (c.n as f64, f(c)))
            .collect()
    }

    /// The slopes of log time and log memory against log `n` for `method`, fitted
    /// over the lengths from [`SLOPE_FROM`] up (`None` with fewer than two of them).
    pub fn slopes(&self, method: Method) -> Option<(f64, f64)> {
        let time = self.upper_points(method, |c| c.millis);
        let memory = self.upper_points(method, |c| c.peak_bytes as f64);
        Some((loglog_slope(&time)?, loglog_slope(&memory)?))
    }

    /// Full attention's time over `method`'s at each length where both ran.
    pub fn speedups(&self, method: Method) -> Vec<(usize, f64)> {
        self.lengths()
            .into_iter()
            .filter_map(|n| {
                let (full, other) =
                    (self.get(Method::Full, n)?, self.get(method, n)?);
                Some((n, full.millis / other.millis))
            })
            .collect()
    }
}

// ANCHOR: loglog_slope
/// The least-squares slope of `ln y` against `ln x`: for `y = c·xᵏ` it is `k`, the
/// power by which the cost grows (2 when doubling `x` quadruples `y`).
pub fn loglog_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let logs: Vec<(f64, f64)> =
        points.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let count = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let (mut cov, mut var) = (0.0, 0.0);
    for (x, y) in logs {
        cov += (x - mean_x) * (y - mean_y);
        var += (x - mean_x) * (x - mean_x);
    }
    Some(cov / var)
}
// ANCHOR_END: loglog_slope
