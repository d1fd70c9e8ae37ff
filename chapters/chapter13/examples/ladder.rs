//! Measures each rung of the matrix-product ladder on your machine and prints GFLOP/s:
//!
//! ```console
//! cargo run --release -p chapter13 --example ladder                  # sizes 256, 512, 1024
//! cargo run --release -p chapter13 --example ladder -- 128 384       # other sizes
//! cargo run --release -p chapter13 --example ladder -- --threads 4   # rung 5 on 4 threads
//! cargo run --release -p chapter13 --example ladder -- --rounds 5    # the fastest of 5 rounds
//! ```
//!
//! It writes your figure to `target/ch13-ladder.svg` and your numbers to
//! `target/ch13-sample_ladder.tsv`; the book's sample and figure are left alone unless you
//! pass `--record`, which rewrites `chapters/chapter13/data/sample_ladder.tsv` and
//! `book/src/figures/ch13-ladder.svg` with this run, or `--record-second`, which rewrites
//! the book's second machine, `chapters/chapter13/data/sample_ladder_second.tsv`.
//!
//! Each time is the median of several runs (at least 3, for at least 0.3 s) after one run
//! to warm up; rung 1 runs only up to n = 512, where it still finishes in a few seconds.
//! Close other programs first: on a busy machine the numbers vary by tens of percent. On a
//! machine you share, `--rounds N` measures the whole ladder N times and keeps each rung's
//! fastest median: other programs can slow a round down but never speed it up, so the
//! fastest round is the least disturbed.
//! The engine's product is timed on one thread, like rung 4: the example sets
//! `MATMUL_NUM_THREADS=1` unless you set it yourself. It is timed on the best kernel path
//! of your CPU and, where that is AVX-512, on the AVX2 path too (`engine::kernels`), the
//! path of CPUs without AVX-512.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chapter13::plots::{FIGURE_SIZE, LADDER_FIGURE, ladder_chart};
use chapter13::{Kernel, Measurement, Rung, Sample, flops, seeded};
use engine::Tensor;
use engine::kernels::{self, KernelPath};

/// The median time of `run`, over at least 3 runs and at least 0.3 s, after one to warm up.
fn median_time(mut run: impl FnMut()) -> Duration {
    run();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3
        || (times.len() < 50 && start.elapsed() < Duration::from_millis(300))
    {
        let t = Instant::now();
        run();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// The data and unified caches of the first core, from `/sys` (Linux): `L1 48 KiB, …`.
fn caches() -> String {
    let mut found = Vec::new();
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| {
            std::fs::read_to_string(format!("{dir}/{f}"))
                .map(|s| s.trim().to_string())
        };
        let (Ok(level), Ok(kind), Ok(size)) =
            (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind == "Instruction" {
            continue;
        }
        let size = match size.strip_suffix('K').and_then(|k| k.parse::<usize>().ok())
        {
            Some(kib) => engine::memory::human(kib << 10).replace(".00", ""),
            None => size,
        };
        found.push(format!("L{level} {size}"));
    }
    if found.is_empty() {
        "unknown".into()
    } else {
        found.join(", ")
    }
}

/// `target/` of this build: the example runs from `target/<profile>/examples/`.
fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
}

fn main() {
    let mut sizes = Vec::new();
    let mut record = false;
    let mut record_second = false;
    let mut rounds = 1;
    let mut threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--record" => record = true,
            "--record-second" => record_second = true,
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|r| r.parse().ok())
                    .filter(|&r| r > 0)
                    .expect("--rounds needs a positive count")
            }
            "--threads" => {
                threads = args
                    .next()
                    .and_then(|t| t.parse().ok())
                    .filter(|&t| t > 0)
                    .expect("--threads needs a positive count")
            }
            n => sizes.push(n.parse::<usize>().unwrap_or_else(|_| {
                panic!("{n:?}: expected a matrix size, --threads N, --rounds N, --record or --record-second")
            })),
        }
    }
    if sizes.is_empty() {
        sizes = vec![256, 512, 1024];
    }
    // The engine's products run on every physical core unless MATMUL_NUM_THREADS says
    // otherwise; rung 4, which it is compared with, runs on one.
    if std::env::var_os("MATMUL_NUM_THREADS").is_none() {
        // SAFETY: no other thread exists yet, so none can read the environment meanwhile.
        unsafe { std::env::set_var("MATMUL_NUM_THREADS", "1") };
    }
    if cfg!(debug_assertions) {
        println!(
            "warning: a debug build; run with --release for meaningful numbers\n"
        );
    }

    let kernel = Kernel::detect();
    let mut sample = Sample {
        cpu: lesson::cpu_name(),
        caches: caches(),
        kernel: kernel.name().to_string(),
        engine_path: kernels::active().name().to_string(),
        threads,
        rounds,
        results: Vec::new(),
    };
    println!("cpu: {}; caches: {}", sample.cpu, sample.caches);
    println!(
        "rungs 4 and 5: {} kernel; rung 5: {threads} threads; engine: {} path, MATMUL_NUM_THREADS = {}",
        kernel.name(),
        sample.engine_path,
        std::env::var("MATMUL_NUM_THREADS").unwrap_or_default()
    );
    for round in 1..=rounds {
        if rounds > 1 {
            eprintln!("round {round} of {rounds}");
        }
        for &n in &sizes {
            let (a, b) = (seeded(n * n, 1), seeded(n * n, 2));
            let mut check = vec![0.0; n * n];
            chapter13::simd(&a, &b, &mut check, n, n, n);
            let scale = check.iter().fold(1.0f32, |m, v| m.max(v.abs()));
            for rung in Rung::ALL {
                if rung == Rung::Naive && n > 512 {
                    continue;
                }
                // The AVX2 row only where the CPU has AVX2 and its best path is another.
                let avx2_row = KernelPath::Avx2.is_supported()
                    && kernels::active() != KernelPath::Avx2;
                if rung == Rung::EngineAvx2 && !avx2_row {
                    continue;
                }
                let mut c = vec![0.0; n * n];
                let time = if matches!(rung, Rung::Engine | Rung::EngineAvx2) {
                    let (ta, tb) = (
                        Tensor::from_vec(a.clone(), [n, n]),
                        Tensor::from_vec(b.clone(), [n, n]),
                    );
                    let path = match rung {
                        Rung::EngineAvx2 => KernelPath::Avx2,
                        _ => kernels::active(),
                    };
                    kernels::with_path(path, || {
                        c = engine::no_grad(|| ta.matmul(&tb)).to_vec();
                        median_time(|| drop(engine::no_grad(|| ta.matmul(&tb))))
                    })
                } else {
                    let run = |c: &mut [f32]| match rung {
                        Rung::Naive => chapter13::naive(&a, &b, c, n, n, n),
                        Rung::LoopOrder => chapter13::loop_order(&a, &b, c, n, n, n),
                        Rung::Blocked => chapter13::blocked(&a, &b, c, n, n, n),
                        Rung::Simd => chapter13::simd(&a, &b, c, n, n, n),
                        Rung::Threads => {
                            chapter13::threaded(&a, &b, c, n, n, n, threads)
                        }
                        Rung::Engine | Rung::EngineAvx2 => {
                            unreachable!("timed above")
                        }
                    };
                    median_time(|| run(&mut c))
                };
                // Every rung must give the same product (to rounding) before its speed counts.
                let worst = chapter13::max_abs_diff(&c, &check);
                assert!(
                    worst <= 1e-4 * scale,
                    "{}: differs from rung 4 by {worst} at n = {n}",
                    rung.label()
                );
                let gflops = flops(n, n, n) as f64 / time.as_secs_f64() / 1e9;
                eprintln!("  n = {n:>4}  {:<26} {gflops:>8.2} GFLOP/s", rung.label());
                // Keep the fastest round of each rung.
                match sample
                    .results
                    .iter_mut()
                    .find(|m| m.rung == rung && m.n == n)
                {
                    Some(best) => best.gflops = best.gflops.max(gflops),
                    None => sample.results.push(Measurement { rung, n, gflops }),
                }
            }
        }
    }
    // Written and read back, so the figure is drawn from exactly what the file holds.
    let text = sample.to_text();
    let sample = Sample::parse(&text).expect("the sample reads back");
    println!("\n{}", sample.table());

    let n = if sizes.contains(&FIGURE_SIZE) {
        FIGURE_SIZE
    } else {
        sizes[0]
    };
    let yours = target_dir();
    let (figure, data) = (
        yours.join(LADDER_FIGURE),
        yours.join("ch13-sample_ladder.tsv"),
    );
    let write = |path: &PathBuf, contents: &str| {
        std::fs::write(path, contents)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    write(&figure, &ladder_chart(&sample, n, "your machine"));
    write(&data, &text);
    println!(
        "your figure: {}\nyour numbers: {}",
        figure.display(),
        data.display()
    );
    if record {
        let committed =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sample_ladder.tsv");
        write(&committed, &text);
        let svg = ladder_chart(&sample, n, "one machine's sample run");
        figures::write(LADDER_FIGURE, &svg).unwrap_or_else(|e| panic!("{e}"));
        println!(
            "recorded: {} and the book's {LADDER_FIGURE}; rerun the tour and update the page",
            committed.display()
        );
    }
    if record_second {
        let second = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("data/sample_ladder_second.tsv");
        write(&second, &text);
        println!(
            "recorded: {}; rerun the tour and update the page",
            second.display()
        );
    }
}
