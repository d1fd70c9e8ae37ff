//! Measures a training step (forward and backward) of each method at n = 256, 512, …,
//! 16384 on your machine: the median time and the peak bytes.
//!
//! ```console
//! cargo run --release -p chapter11 --example costs                  # every length
//! cargo run --release -p chapter11 --example costs -- 256 1024      # some lengths
//! cargo run --release -p chapter11 --example costs -- --limit-gib 2 # smaller limit
//! cargo run --release -p chapter11 --example costs -- --runs 9      # more runs
//! cargo run --release -p chapter11 --example costs -- --rounds 3    # fastest of 3
//! cargo run --release -p chapter11 --example costs -- --check       # peak bytes
//! ```
//!
//! Self-attention over one sequence of n positions, B = 1, one head, 64 features,
//! seeded inputs; the settings of each method are in `src/methods.rs`. Each time is
//! the median of at least `--runs` runs (5 by default, more for short ones, up to
//! half a second) after one run to warm up. Full attention is skipped at a length
//! where its estimated peak (`full_peak_estimate`) is above the limit, 6 GiB unless
//! `--limit-gib` says otherwise. Everything runs on one thread, unless you set
//! `MATMUL_NUM_THREADS` and `ENGINE_NUM_THREADS` yourself. On a machine you share,
//! `--rounds N` measures the whole table N times and keeps each case's fastest
//! median: other programs can slow a round down but never speed it up.
//! `--spare-gib G` lets the engine keep up to G GiB of freed buffers for reuse
//! (`engine::memory::set_spare_limit`; 256 MiB by default), which changes what full
//! attention pays for its largest tensors.
//!
//! It writes your numbers to `target/ch11-costs.tsv` and your figures to
//! `target/ch11-time.svg` and `target/ch11-memory.svg`; the book's are left alone
//! unless you pass `--record`, which rewrites `chapters/chapter11/data/costs.tsv` and
//! the book's two figures with this run.
//!
//! `--check` measures no time: it recomputes the peak bytes of every committed row up
//! to n = 4096 (`--check-up-to N` for more) and compares them with `data/costs.tsv`,
//! which they must equal to the byte on every machine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chapter11::costs::{Cost, Costs, LENGTHS, full_peak_estimate};
use chapter11::memory::training_peak;
use chapter11::methods::{Method, random_inputs};
use chapter11::plots;
use engine::kernels;
use engine::memory::human;

/// The median time of `run`, over at least `runs` runs and, for short ones, up to
/// half a second (50 runs at most), after one to warm up.
fn median_time(runs: usize, mut run: impl FnMut()) -> Duration {
    run();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < runs
        || (times.len() < 50 && start.elapsed() < Duration::from_millis(500))
    {
        let t = Instant::now();
        run();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// One training step of `method` at `n`, timed.
fn time_step(method: Method, n: usize, runs: usize) -> Duration {
    let (q, k, v) = random_inputs(n, 0);
    median_time(runs, || {
        // Fresh leaves each run, so that every run builds and frees the same graph.
        let leaf = |t: &engine::Tensor| t.detach().requires_grad_();
        let (q, k, v) = (leaf(&q), leaf(&k), leaf(&v));
        method.attend(&q, &k, &v).sum().backward();
    })
}

/// `target/` of this build: the example runs from `target/<profile>/examples/`.
fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
}

/// Recomputes the peak bytes of the committed rows up to `up_to` and compares them.
fn check(up_to: usize) -> ExitCode {
    let committed = Costs::committed();
    let mut failed = 0;
    let mut checked = 0;
    for c in committed.results.iter().filter(|c| c.n <= up_to) {
        let peak = training_peak(c.method, c.n);
        checked += 1;
        if peak != c.peak_bytes {
            failed += 1;
            println!(
                "{} at n = {}: {peak} bytes, the committed file says {}",
                c.method.label(),
                c.n,
                c.peak_bytes
            );
        }
    }
    println!(
        "peak bytes of {checked} committed rows (n ≤ {up_to}) recomputed on the {} \
         path: {}",
        kernels::active().name(),
        if failed == 0 {
            "all equal".to_string()
        } else {
            format!("{failed} differ")
        }
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let mut lengths = Vec::new();
    let (mut record, mut check_only) = (false, false);
    let (mut runs, mut rounds, mut up_to) = (5usize, 1usize, 4096usize);
    let (mut limit_gib, mut spare_gib) = (6.0f64, None);
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        match argv[i].as_str() {
            "--record" => record = true,
            "--check" => check_only = true,
            "--runs" | "--rounds" | "--limit-gib" | "--spare-gib"
            | "--check-up-to" => {
                let value: f64 = argv
                    .get(i + 1)
                    .and_then(|a| a.parse().ok())
                    .filter(|&x: &f64| x > 0.0)
                    .unwrap_or_else(|| panic!("{} needs a positive number", argv[i]));
                match argv[i].as_str() {
                    "--runs" => runs = value as usize,
                    "--rounds" => rounds = value as usize,
                    "--limit-gib" => limit_gib = value,
                    "--spare-gib" => spare_gib = Some(value),
                    _ => up_to = value as usize,
                }
                i += 1;
            }
            n => lengths.push(n.parse::<usize>().unwrap_or_else(|_| {
                panic!(
                    "{n:?}: expected a length, --runs N, --rounds N, --limit-gib G, \
                     --spare-gib G, --record, --check or --check-up-to N"
                )
            })),
        }
        i += 1;
    }
    if check_only {
        return check(up_to);
    }
    if lengths.is_empty() {
        lengths = LENGTHS.to_vec();
    }
    // One thread unless the learner says otherwise.
    for variable in ["MATMUL_NUM_THREADS", "ENGINE_NUM_THREADS"] {
        if std::env::var_os(variable).is_none() {
            // SAFETY: no other thread exists yet, so none can read the environment.
            unsafe { std::env::set_var(variable, "1") };
        }
    }
    if cfg!(debug_assertions) {
        println!(
            "warning: a debug build; run with --release for meaningful numbers\n"
        );
    }
    if let Some(gib) = spare_gib {
        engine::memory::set_spare_limit((gib * f64::from(1u32 << 30)) as usize);
    }
    let threads = engine::threads::num_threads();
    let limit_bytes = (limit_gib * f64::from(1u32 << 30)) as usize;
    let mut costs = Costs {
        cpu: lesson::cpu_name(),
        engine_path: kernels::active().name().to_string(),
        threads,
        runs,
        rounds,
        limit_bytes,
        results: Vec::new(),
    };
    println!(
        "cpu: {}; engine: {} path, {threads} thread(s); limit for full attention: {}",
        costs.cpu,
        costs.engine_path,
        human(limit_bytes)
    );
    for round in 1..=rounds {
        if rounds > 1 {
            eprintln!("round {round} of {rounds}");
        }
        for &n in &lengths {
            for method in Method::ALL {
                if method == Method::Full && full_peak_estimate(n) > limit_bytes {
                    if round == 1 {
                        eprintln!(
                            "  n = {n:>5}  {:<9} skipped: about {} (--limit-gib)",
                            method.label(),
                            human(full_peak_estimate(n))
                        );
                    }
                    continue;
                }
                let millis = time_step(method, n, runs).as_secs_f64() * 1e3;
                // Keep the fastest round of each case; its peak is the same every
                // time.
                let kept = costs
                    .results
                    .iter_mut()
                    .find(|c| c.method == method && c.n == n);
                let millis = match kept {
                    Some(cost) => {
                        cost.millis = cost.millis.min(millis);
                        cost.millis
                    }
                    None => {
                        let peak_bytes = training_peak(method, n);
                        costs.results.push(Cost {
                            method,
                            n,
                            millis,
                            peak_bytes,
                        });
                        millis
                    }
                };
                eprintln!(
                    "  n = {n:>5}  {:<9} {millis:>10.2} ms (fastest so far)",
                    method.label()
                );
            }
        }
    }
    // Written and read back, so the figures are drawn from exactly what the file
    // holds.
    let text = costs.to_text();
    let costs = Costs::parse(&text).expect("the run reads back");
    println!("\n{}\n{}", costs.time_table(), costs.memory_table());
    let yours = target_dir();
    let write = |path: &PathBuf, contents: &str| {
        std::fs::write(path, contents)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let data = yours.join("ch11-costs.tsv");
    write(&data, &text);
    for (name, svg) in plots::cost_figures(&costs, "your machine") {
        write(&yours.join(name), &svg);
    }
    println!(
        "your numbers: {}\nyour figures: {}",
        data.display(),
        yours.join(plots::TIME_FIGURE).display()
    );
    if record {
        let committed =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/costs.tsv");
        write(&committed, &text);
        for (name, svg) in plots::cost_figures(&costs, plots::COMMITTED_WHOSE) {
            figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
        }
        println!(
            "recorded: {} and the book's figures; rerun the tour and update the page",
            committed.display()
        );
    }
    ExitCode::SUCCESS
}
