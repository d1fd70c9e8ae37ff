//! One machine's run of multi-head attention beside PyTorch's fused attention,
//! committed as `data/side_by_side.tsv` (it needs PyTorch, so the book records it
//! rather than running it).

use std::fmt::Write;

/// The times of one thread count: medians and fastest runs, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Times {
    /// The threads of both sides.
    pub threads: usize,
    /// The engine's median.
    pub engine_median: f64,
    /// PyTorch's median.
    pub torch_median: f64,
    /// The engine's fastest run and PyTorch's.
    pub fastest: (f64, f64),
}

/// The committed run.
#[derive(Clone, Debug, PartialEq)]
pub struct SideBySide {
    /// The CPU.
    pub cpu: String,
    /// The engine's kernel path.
    pub engine_path: String,
    /// PyTorch's version.
    pub torch: String,
    /// The benchmark's case.
    pub case: String,
    /// One row per thread count.
    pub times: Vec<Times>,
    /// The engine's peak with the blocked path and with the full path, and how much
    /// PyTorch's process grew, in MiB.
    pub peak_mib: [f64; 3],
}

const COMMITTED: &str = include_str!("../data/side_by_side.tsv");

impl SideBySide {
    /// The committed run, `data/side_by_side.tsv`.
    pub fn committed() -> SideBySide {
        let mut run = SideBySide {
            cpu: String::new(),
            engine_path: String::new(),
            torch: String::new(),
            case: String::new(),
            times: Vec::new(),
            peak_mib: [0.0; 3],
        };
        let number = |s: &str| -> f64 {
            s.parse()
                .unwrap_or_else(|_| panic!("data/side_by_side.tsv: {s:?}"))
        };
        for line in COMMITTED.lines().filter(|l| !l.starts_with('#')) {
            match line.split('\t').collect::<Vec<_>>().as_slice() {
                ["cpu", name] => run.cpu = name.to_string(),
                ["engine_path", name] => run.engine_path = name.to_string(),
                ["torch", version] => run.torch = version.to_string(),
                ["case", name] => run.case = name.to_string(),
                [
                    "times",
                    threads,
                    engine,
                    torch,
                    engine_fastest,
                    torch_fastest,
                ] => run.times.push(Times {
                    threads: number(threads) as usize,
                    engine_median: number(engine),
                    torch_median: number(torch),
                    fastest: (number(engine_fastest), number(torch_fastest)),
                }),
                ["peak_mib", "engine_blocked", mib] => run.peak_mib[0] = number(mib),
                ["peak_mib", "engine_full", mib] => run.peak_mib[1] = number(mib),
                ["peak_mib", "torch_growth", mib] => run.peak_mib[2] = number(mib),
                other => panic!("data/side_by_side.tsv: unexpected line {other:?}"),
            }
        }
        run
    }

    /// The run as the tour prints it.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{}; engine: {} path; PyTorch {}\n",
            self.cpu, self.engine_path, self.torch
        );
        let _ = writeln!(out, "{}, ms:", self.case);
        let _ = writeln!(
            out,
            "threads  engine median  PyTorch median  ratio  engine fastest  PyTorch \
             fastest  ratio"
        );
        for t in &self.times {
            let (e, p) = t.fastest;
            let _ = writeln!(
                out,
                "{:>7} {:>14.1} {:>15.1} {:>6.2} {e:>15.1} {p:>16.1} {:>6.2}",
                t.threads,
                t.engine_median,
                t.torch_median,
                t.engine_median / t.torch_median,
                e / p
            );
        }
        let [blocked, full, torch] = self.peak_mib;
        let _ = writeln!(
            out,
            "the engine's peak: {blocked:.2} MiB on its blocked path, {full} MiB on \
             the full path;\nPyTorch's process grew by {torch:.2} MiB"
        );
        out
    }
}
