//! Times greedy decoding of the held-out set with the keys' projection `W_k k`
//! recomputed at every step (`greedy_decode`) and computed once per batch
//! (`cached_greedy_decode`), over repeated runs, and prints each as a range:
//!
//! ```console
//! cargo run --release -p chapter09 --example cached_decoding
//! cargo run --release -p chapter09 --example cached_decoding -- 11   # 11 runs
//! ```
//!
//! Two batch sizes: the 1,000 held-out numbers in batches of 500 (as the held-out
//! score decodes them), and the first 100 of them one at a time. The two decoders
//! alternate within each run, so that a change in the machine's load touches both.
//! Nothing is recorded: times are this machine's, under whatever else it runs.

use std::time::Instant;

use chapter09::{
    EVAL_BATCH, Vocab, cached_greedy_decode, greedy_decode, split, trained_additive,
};

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7)
        .max(1);
    let (model, checkpoint) = trained_additive();
    let c = checkpoint.info.config;
    let held_out = split(c.max_number, c.train_size, c.held_out, c.seed).held_out;
    let (src, tgt) = (Vocab::source(), Vocab::target());
    let singles = &held_out[..100];
    // [batch of 500, one at a time] × [recomputed, cached]: µs per sentence, each run.
    let mut times = [[vec![], vec![]], [vec![], vec![]]];
    for _ in 0..runs {
        for (setting, (numbers, batch)) in [(&held_out[..], EVAL_BATCH), (singles, 1)]
            .into_iter()
            .enumerate()
        {
            for cached in [false, true] {
                let start = Instant::now();
                for chunk in numbers.chunks(batch) {
                    let t = if cached {
                        cached_greedy_decode(&model, chunk, &src, &tgt, 7)
                    } else {
                        greedy_decode(&model, chunk, &src, &tgt, 7)
                    };
                    std::hint::black_box(t);
                }
                let micros =
                    start.elapsed().as_secs_f64() * 1e6 / numbers.len() as f64;
                times[setting][usize::from(cached)].push(micros);
            }
        }
    }
    println!(
        "µs per decoded sentence, min–max over {runs} runs; cached / recomputed in the"
    );
    println!("same run, min–max");
    println!(
        "{:<29} {:>16} {:>12} {:>11}",
        "", "W_k k each step", "W_k k cached", "cached/rec."
    );
    for (setting, what) in [
        "1000 held-out, batches of 500",
        "100 held-out, one at a time",
    ]
    .iter()
    .enumerate()
    {
        let range = |v: &Vec<f64>| {
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(0.0, f64::max);
            format!("{min:.0}–{max:.0}")
        };
        let ratios: Vec<f64> = times[setting][1]
            .iter()
            .zip(&times[setting][0])
            .map(|(cached, again)| cached / again)
            .collect();
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().copied().fold(0.0, f64::max);
        println!(
            "{what:<29} {:>16} {:>12} {:>11}",
            range(&times[setting][0]),
            range(&times[setting][1]),
            format!("{min:.2}–{max:.2}")
        );
    }
    println!(
        "times: {}, kernels {};\n  one run, under the machine's load at the time",
        lesson::cpu_name(),
        engine::kernels::active()
    );
}
