//! What one copy of the cache costs, `KvCache::keys()`, as the cache grows: the copy a
//! decoding step used to make of the keys (and one more of the values) on every token.
//!
//! ```console
//! cargo run --release -p chapter08 --example copies
//! ```
//!
//! For each cache length it times 200 calls of `keys()` on chapter 8's layer shape
//! (`num_hiddens = 64`, 4 heads, batch 1), each copy dropped before the next, as a step
//! dropped its copies, and prints the median time per copy and, on Linux, the page faults
//! per copy (new memory the operating system had to map). Then it does the same with the
//! engine's store of freed buffers turned off (`memory::set_spare_limit(0)`).
//!
//! `-- --record` (release builds only) replaces the committed sample,
//! `chapters/chapter08/data/sample_copies.txt`, which the page quotes.

use std::path::PathBuf;
use std::time::Instant;

use attention::prelude::*;
use chapter08::{COPY_LENGTHS, SPEED_HEADS, SPEED_NUM_HIDDENS};
use engine::memory;

/// How many copies are timed at each length.
const COPIES: usize = 200;

/// The page faults this process has taken so far (`minflt` of `/proc/self/stat`), where
/// the system reports them.
fn page_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses: state is the first of
    // them, minflt the eighth.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(7)?.parse().ok()
}

/// The median microseconds of one `keys()` copy of a cache of `len` tokens, and the page
/// faults per copy.
fn time_copies(len: usize) -> (f64, Option<f64>) {
    let d_head = SPEED_NUM_HIDDENS / SPEED_HEADS;
    let mut cache = KvCache::new(len);
    let token = Tensor::randn([1, SPEED_HEADS, len, d_head]);
    no_grad(|| cache.append(&token, &token));
    memory::release_spare(); // start from the same, empty store at every length
    let faults_before = page_faults();
    let mut times: Vec<f64> = (0..COPIES)
        .map(|_| {
            let start = Instant::now();
            let keys = cache.keys();
            let elapsed = start.elapsed();
            drop(keys);
            elapsed.as_secs_f64() * 1e6
        })
        .collect();
    let faults = page_faults()
        .zip(faults_before)
        .map(|(after, before)| (after - before) as f64 / COPIES as f64);
    times.sort_by(f64::total_cmp);
    (times[COPIES / 2], faults)
}

fn main() -> Result<(), String> {
    let record = std::env::args().any(|a| a == "--record");
    chapter08::check_build_for_timing(record)?;
    manual_seed(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = format!(
        "machine: {} {}, {threads} hardware threads\n",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    out.push_str(&format!(
        "keys() of a cache of num_hiddens {SPEED_NUM_HIDDENS}, {SPEED_HEADS} heads, batch 1: median of {COPIES} copies\n"
    ));
    out.push_str(&format!(
        "{:>6} {:>10} | {:>23} | {:>23}\n",
        "tokens", "copy", "freed buffers kept", "none kept"
    ));
    let rows: Vec<_> = COPY_LENGTHS
        .iter()
        .map(|&len| (len, time_copies(len)))
        .collect();
    memory::set_spare_limit(0);
    let unkept: Vec<_> = COPY_LENGTHS.iter().map(|&len| time_copies(len)).collect();
    let cell = |(us, faults): (f64, Option<f64>)| match faults {
        Some(f) => format!("{us:>7.1} us {f:>5.1} faults"),
        None => format!("{us:>7.1} us   n/a faults"),
    };
    for ((len, kept), none) in rows.into_iter().zip(unkept) {
        let bytes = len * SPEED_NUM_HIDDENS * size_of::<f32>();
        out.push_str(&format!(
            "{len:>6} {:>10} | {:>23} | {:>23}\n",
            memory::human(bytes),
            cell(kept),
            cell(none)
        ));
    }
    print!("{out}");
    if record {
        let sample =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sample_copies.txt");
        std::fs::write(&sample, &out)
            .map_err(|e| format!("{}: {e}", sample.display()))?;
        println!(
            "recorded the sample: {}; update the page's table (cargo test -p chapter08 --test page says what it must quote)",
            sample.display()
        );
    }
    Ok(())
}
