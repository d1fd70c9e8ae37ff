//! What a mask built once saves at each call: heap allocations and bytes (counted,
//! the same on every run) and time per call (measured, ranges over repeated rounds).
//!
//! ```console
//! cargo run --release -p chapter04 --example mask_timing              # print the table
//! cargo run --release -p chapter04 --example mask_timing -- --check   # counts as recorded?
//! cargo run --release -p chapter04 --example mask_timing -- --record  # rewrite data/mask_timing.txt
//! ```
//!
//! `--check` measures again and compares every count with `data/mask_timing.txt`, which
//! the page quotes; the times are this machine's and are not compared.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use chapter04::{BiasTable, attend, causal_padding_bias};
use engine::Tensor;

/// The system allocator, counting the allocations and their bytes.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the counters only
// observe it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The heap allocations and bytes of one run of `f`.
fn count<R>(f: impl FnOnce() -> R) -> (usize, usize) {
    let (a, b) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    drop(f());
    (
        ALLOCATIONS.load(Ordering::Relaxed) - a,
        BYTES.load(Ordering::Relaxed) - b,
    )
}

/// Microseconds per call of `f`, the fastest and the slowest of `ROUNDS` rounds of
/// `CALLS` calls.
fn time_range<R>(f: impl Fn() -> R) -> (f64, f64) {
    let mut per_call: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..CALLS {
                std::hint::black_box(f());
            }
            start.elapsed().as_secs_f64() * 1e6 / CALLS as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    (per_call[0], per_call[ROUNDS - 1])
}

const ROUNDS: usize = 9;
const CALLS: usize = 200;
const B: usize = 32;
const T: usize = 64;
const LENGTHS: [usize; 4] = [16, 32, 48, 64];
/// Where the time columns start: everything before is compared by `--check`.
const COUNTED: usize = 47;

struct Row {
    name: &'static str,
    mask: Box<dyn Fn() -> Tensor>,
}

fn table() -> String {
    engine::manual_seed(0);
    let scores = Tensor::randn([B, T, T]);
    let lens: Vec<usize> = (0..B).map(|i| LENGTHS[i % LENGTHS.len()]).collect();
    let mixed = Tensor::from_vec(lens.iter().map(|&l| l as f32).collect(), [B]);
    let full = Tensor::full([B], T as f32);
    let table = std::rc::Rc::new(BiasTable::new(&LENGTHS, T));
    let lookup = table.clone();
    let causal = table.clone();
    let rows = [
        Row {
            name: "lengths 16..64, rebuilt",
            mask: Box::new(move || causal_padding_bias(&mixed, T)),
        },
        Row {
            name: "lengths 16..64, looked up",
            mask: Box::new(move || lookup.bias(&lens)),
        },
        Row {
            name: "all 64, rebuilt",
            mask: Box::new(move || causal_padding_bias(&full, T)),
        },
        Row {
            name: "all 64, causal() kept",
            mask: Box::new(move || causal.causal().clone()),
        },
    ];
    let mut out = String::new();
    writeln!(
        out,
        "a mask at each call, B = {B}, T = {T}: heap allocations and bytes of one call,"
    )
    .unwrap();
    writeln!(
        out,
        "microseconds per call (fastest–slowest of {ROUNDS} rounds of {CALLS} calls)"
    )
    .unwrap();
    writeln!(
        out,
        "{:<26} {:>6} {:>13} {:>17} {:>17}",
        "", "allocs", "bytes", "µs, mask only", "µs, mask+softmax"
    )
    .unwrap();
    let mut whole = Vec::new();
    for row in &rows {
        // Once untimed, so that every round finds the allocator warm.
        drop(attend(&scores, &(row.mask)()));
        let (allocs, bytes) = count(|| (row.mask)());
        let (lo, hi) = time_range(|| (row.mask)());
        let (wlo, whi) = time_range(|| attend(&scores, &(row.mask)()));
        whole.push((lo, hi, wlo, whi));
        writeln!(
            out,
            "{:<26} {allocs:>6} {bytes:>13} {:>17} {:>17}",
            row.name,
            format!("{lo:.1}–{hi:.1}"),
            format!("{wlo:.1}–{whi:.1}")
        )
        .unwrap();
    }
    let verdict = |a: (f64, f64), b: (f64, f64)| {
        if a.1 < b.0 {
            "lower, the ranges apart"
        } else {
            "within noise, the ranges overlap"
        }
    };
    for (i, name) in [(1, "looked up"), (3, "causal() kept")] {
        let (kept, rebuilt) = (whole[i], whole[i - 1]);
        let line = format!(
            "{name} against rebuilt: mask only {}; mask+softmax {}",
            verdict((kept.0, kept.1), (rebuilt.0, rebuilt.1)),
            verdict((kept.2, kept.3), (rebuilt.2, rebuilt.3))
        );
        writeln!(out, "{}", lesson::wrap(&line, lesson::COLUMNS)).unwrap();
    }
    let footer = format!(
        "times: one machine's run under load ({}, kernel path {}), not a benchmark",
        lesson::cpu_name(),
        engine::kernels::active()
    );
    writeln!(out, "{}", lesson::wrap(&footer, lesson::COLUMNS)).unwrap();
    out
}

/// The parts of the table that must be the same on every run: each line up to its
/// time columns, and none of the lines about times.
fn counts(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(3)
        .take(4)
        .map(|l| l.chars().take(COUNTED).collect())
        .collect()
}

fn main() -> ExitCode {
    let table = table();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/mask_timing.txt");
    match std::env::args().nth(1).as_deref() {
        Some("--record") => {
            if let Err(e) = std::fs::write(&path, &table) {
                eprintln!("cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("recorded {}", path.display());
        }
        Some("--check") => {
            let recorded = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    eprintln!("cannot read {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            };
            if counts(&recorded) != counts(&table) {
                eprintln!("the counts differ from {}; now:\n{table}", path.display());
                return ExitCode::FAILURE;
            }
            println!(
                "the counts are the recorded ones; the times are this machine's:\n{table}"
            );
        }
        Some(other) => {
            eprintln!("unknown argument {other}; use --check, --record or nothing");
            return ExitCode::FAILURE;
        }
        None => print!("{table}"),
    }
    ExitCode::SUCCESS
}
