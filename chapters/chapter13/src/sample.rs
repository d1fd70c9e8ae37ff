//! The ladder's measurements: the rungs by name, a table of GFLOP/s, and the one machine's
//! sample run committed with the book (`data/sample_ladder.tsv`).
//!
//! Times cannot be reproduced, so nothing here measures one: the `ladder` example does,
//! and [`Sample::committed`] reads back the run recorded for the book.

use std::fmt::Write;

/// One rung of the ladder, or the engine's matrix product it is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rung {
    /// [`naive`](crate::naive): `i → j → p`.
    Naive,
    /// [`loop_order`](crate::loop_order): `i → p → j`.
    LoopOrder,
    /// [`blocked`](crate::blocked): cache blocking.
    Blocked,
    /// [`simd`](crate::simd): packed blocks and a SIMD micro-kernel, one thread.
    Simd,
    /// [`threaded`](crate::threaded): rung 4 on several threads.
    Threads,
    /// [`engine::Tensor::matmul`]: the engine's own blocked kernel, on the best kernel path
    /// of the CPU (see [`engine::kernels`]).
    Engine,
    /// [`engine::Tensor::matmul`] on the AVX2 path (`ENGINE_KERNEL=avx2`), as on a CPU that
    /// has AVX2 but not AVX-512: run only where the best path is another one.
    EngineAvx2,
}

impl Rung {
    /// Every rung, in order.
    pub const ALL: [Rung; 7] = [
        Rung::Naive,
        Rung::LoopOrder,
        Rung::Blocked,
        Rung::Simd,
        Rung::Threads,
        Rung::Engine,
        Rung::EngineAvx2,
    ];

    /// The name used in the data file.
    pub fn key(self) -> &'static str {
        match self {
            Rung::Naive => "naive",
            Rung::LoopOrder => "loop_order",
            Rung::Blocked => "blocked",
            Rung::Simd => "simd",
            Rung::Threads => "threads",
            Rung::Engine => "engine",
            Rung::EngineAvx2 => "engine_avx2",
        }
    }

    /// The rung whose [`key`](Rung::key) is `key`.
    pub fn from_key(key: &str) -> Option<Rung> {
        Rung::ALL.into_iter().find(|r| r.key() == key)
    }

    /// The rung this one is compared with: the one before it, and for the engine (one
    /// thread) rung 4 (one thread too).
    pub fn improves_on(self) -> Option<Rung> {
        match self {
            Rung::Naive => None,
            Rung::LoopOrder => Some(Rung::Naive),
            Rung::Blocked => Some(Rung::LoopOrder),
            Rung::Simd => Some(Rung::Blocked),
            Rung::Threads | Rung::Engine | Rung::EngineAvx2 => Some(Rung::Simd),
        }
    }

    /// A short label for a chart's bar.
    pub fn short_label(self) -> &'static str {
        match self {
            Rung::Naive => "1 naive",
            Rung::LoopOrder => "2 i-k-j",
            Rung::Blocked => "3 blocked",
            Rung::Simd => "4 SIMD",
            Rung::Threads => "5 threads",
            Rung::Engine => "engine",
            Rung::EngineAvx2 => "engine AVX2",
        }
    }

    /// The label of a table's row.
    pub fn label(self) -> &'static str {
        match self {
            Rung::Naive => "1 naive (i-j-k)",
            Rung::LoopOrder => "2 loop order (i-k-j)",
            Rung::Blocked => "3 cache blocking",
            Rung::Simd => "4 SIMD micro-kernel",
            Rung::Threads => "5 threads",
            Rung::Engine => "engine (Tensor::matmul)",
            Rung::EngineAvx2 => "engine, AVX2 path",
        }
    }
}

/// One measurement: a rung at one size `n` (`[n, n] · [n, n]`), in GFLOP/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// The rung.
    pub rung: Rung,
    /// The size of the square matrices.
    pub n: usize,
    /// Billions of floating-point operations per second: [`flops`](crate::flops) over the
    /// median time of one product.
    pub gflops: f64,
}

/// A run of the ladder on one machine: where it ran, and what each rung reached.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The CPU, as `/proc/cpuinfo` names it, with its core count.
    pub cpu: String,
    /// The data caches seen by the first core, as Linux lists them (e.g. `L1 48 KiB, L2 2
    /// MiB, L3 30 MiB`; the last level is usually shared by all cores).
    pub caches: String,
    /// The micro-kernel rungs 4 and 5 ran ([`Kernel::name`](crate::Kernel::name)).
    pub kernel: String,
    /// The kernel path of the engine's row ([`engine::kernels::KernelPath::name`]).
    pub engine_path: String,
    /// The number of threads of rung 5.
    pub threads: usize,
    /// How many times the whole ladder was measured; each rung keeps its fastest round.
    pub rounds: usize,
    /// The measurements, in the order they were taken.
    pub results: Vec<Measurement>,
}

/// The committed sample run (see [`Sample::committed`]).
const COMMITTED: &str = include_str!("../data/sample_ladder.tsv");
/// The second machine's committed run (see [`Sample::second_machine`]).
const SECOND: &str = include_str!("../data/sample_ladder_second.tsv");

impl Sample {
    /// The run recorded for the book, `data/sample_ladder.tsv`: one machine's numbers,
    /// rewritten only by `cargo run --release -p chapter13 --example ladder -- --record`.
    pub fn committed() -> Sample {
        Sample::parse(COMMITTED)
            .unwrap_or_else(|e| panic!("data/sample_ladder.tsv: {e}"))
    }

    /// A second machine's run, `data/sample_ladder_second.tsv`, whose CPU has AVX-512 and
    /// on which the engine was also timed on its AVX2 path: rewritten only by `cargo run
    /// --release -p chapter13 --example ladder -- --record-second`.
    pub fn second_machine() -> Sample {
        Sample::parse(SECOND)
            .unwrap_or_else(|e| panic!("data/sample_ladder_second.tsv: {e}"))
    }

    /// Reads the data file's format: `#` comments, then tab-separated lines
    /// `cpu NAME`, `caches LIST`, `kernel NAME`, `engine_path NAME`, `threads N`,
    /// `rounds N` and `gflops RUNG N VALUE`.
    ///
    /// # Errors
    /// The line number and what is wrong with it.
    pub fn parse(text: &str) -> Result<Sample, String> {
        let mut sample = Sample {
            cpu: String::new(),
            caches: String::new(),
            kernel: String::new(),
            engine_path: String::new(),
            threads: 0,
            rounds: 1,
            results: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}: {line:?}", i + 1);
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["cpu", name] => sample.cpu = name.to_string(),
                ["caches", list] => sample.caches = list.to_string(),
                ["kernel", name] => sample.kernel = name.to_string(),
                ["engine_path", name] => sample.engine_path = name.to_string(),
                ["threads", t] => {
                    sample.threads = t.parse().map_err(|_| bad("not a count"))?
                }
                ["rounds", r] => {
                    sample.rounds = r.parse().map_err(|_| bad("not a count"))?
                }
                ["gflops", rung, n, value] => sample.results.push(Measurement {
                    rung: Rung::from_key(rung).ok_or_else(|| bad("unknown rung"))?,
                    n: n.parse().map_err(|_| bad("not a size"))?,
                    gflops: value.parse().map_err(|_| bad("not a number"))?,
                }),
                _ => {
                    return Err(bad(
                        "expected cpu, caches, kernel, engine_path, threads, rounds or gflops",
                    ));
                }
            }
        }
        Ok(sample)
    }

    /// The data file's text, which [`Sample::parse`] reads back.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# One machine's run of the matrix-product ladder (GFLOP/s of [n, n] · [n, n]), recorded with\n\
             #   cargo run --release -p chapter13 --example ladder -- --record --rounds N\n\
             # (the book's sample, from which its figure ch13-ladder.svg is drawn), or with\n\
             # --record-second (the book's second machine). Your machine's numbers will differ.\n",
        );
        let _ = writeln!(out, "cpu\t{}", self.cpu);
        let _ = writeln!(out, "caches\t{}", self.caches);
        let _ = writeln!(out, "kernel\t{}", self.kernel);
        let _ = writeln!(out, "engine_path\t{}", self.engine_path);
        let _ = writeln!(out, "threads\t{}", self.threads);
        let _ = writeln!(out, "rounds\t{}", self.rounds);
        for m in &self.results {
            let _ =
                writeln!(out, "gflops\t{}\t{}\t{:.2}", m.rung.key(), m.n, m.gflops);
        }
        out
    }

    /// The GFLOP/s of `rung` at size `n`, if measured.
    pub fn gflops(&self, rung: Rung, n: usize) -> Option<f64> {
        self.results
            .iter()
            .find(|m| m.rung == rung && m.n == n)
            .map(|m| m.gflops)
    }

    /// The sizes measured, in increasing order.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self.results.iter().map(|m| m.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// The rungs measured at some size, in order (the AVX2 row of the engine is left out on
    /// CPUs whose best path is AVX2).
    pub fn rungs(&self) -> Vec<Rung> {
        Rung::ALL
            .into_iter()
            .filter(|&r| self.results.iter().any(|m| m.rung == r))
            .collect()
    }

    /// A table with one row per rung measured and one column per size, in GFLOP/s (`-`
    /// where a rung was not run), and the speed-up of each rung over the one it improves
    /// on, at the largest size where every rung was run.
    pub fn table(&self) -> String {
        let (sizes, rungs) = (self.sizes(), self.rungs());
        let common = sizes
            .iter()
            .rev()
            .copied()
            .find(|&n| rungs.iter().all(|&r| self.gflops(r, n).is_some()));
        let mut out = format!("{:<26}", "GFLOP/s");
        for n in &sizes {
            let _ = write!(out, "{:>10}", format!("n = {n}"));
        }
        match common {
            Some(n) => writeln!(out, "   speed-up at n = {n}"),
            None => writeln!(out),
        }
        .expect("writing to a string");
        for rung in rungs {
            let label = match rung {
                Rung::Threads => format!("{} ({})", rung.label(), self.threads),
                Rung::Engine if !self.engine_path.is_empty() => {
                    format!("engine, {} path", self.engine_path)
                }
                _ => rung.label().to_string(),
            };
            let _ = write!(out, "{label:<26}");
            for &n in &sizes {
                match self.gflops(rung, n) {
                    Some(g) => write!(out, "{g:>10.2}"),
                    None => write!(out, "{:>10}", "-"),
                }
                .expect("writing to a string");
            }
            let speedup = common.zip(rung.improves_on()).and_then(|(n, before)| {
                Some((self.gflops(rung, n)? / self.gflops(before, n)?, before))
            });
            match speedup {
                Some((s, before)) => {
                    writeln!(out, "   {s:>5.1}× {}", before.short_label())
                }
                None => writeln!(out),
            }
            .expect("writing to a string");
        }
        out
    }
}
