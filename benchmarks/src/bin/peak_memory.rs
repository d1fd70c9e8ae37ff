//! Prints the peak memory of every case (see the `benchmarks` crate), as the engine counts
//! it: the most bytes its tensors held at once during one run, beyond the inputs and
//! parameters. `cargo bench` reports times only; this is the memory column.
//!
//! ```console
//! cargo run --release -p benchmarks --bin peak_memory            # every case
//! cargo run --release -p benchmarks --bin peak_memory -- decode  # names containing "decode"
//! ```
//!
//! The numbers are exact and the same on every machine. A `KvCache` keeps its keys and
//! values in plain buffers, not tensors, so decoding with a cache is counted without them
//! (`2·B·H·capacity·d/H` values).

use benchmarks::{Case, MEMORY_LIMIT};
use engine::memory::human;

fn main() {
    benchmarks::one_thread_unless_asked();
    let filter = std::env::args().nth(1).unwrap_or_default();
    println!("| case | estimated | peak (measured) |");
    println!("|---|---:|---:|");
    for case in Case::all() {
        let name = case.to_string();
        if !name.contains(&filter) {
            continue;
        }
        let estimate = human(case.estimated_bytes());
        let peak = if case.fits() {
            human(case.peak_bytes())
        } else {
            format!("skipped (over {})", human(MEMORY_LIMIT))
        };
        println!("| {name} | {estimate} | {peak} |");
    }
}
