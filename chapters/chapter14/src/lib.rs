//! # Chapter 14: attention on the GPU
//!
//! The code of the fourteenth lesson (the page is `book/src/ch14-attention-on-the-gpu.md`).
//! The GPU kernels themselves are the engine's (`engine/src/gpu/`, with its `wgpu`
//! feature); this crate explains and measures them:
//!
//! 1. [`grid`]: workgroups and invocations, how a launch covers its work
//!    ([`elementwise_grid`], [`matmul_grid`]).
//! 2. [`tiled_matmul`]: the engine's tiled matrix-product kernel replayed on the CPU,
//!    workgroup by workgroup and phase by phase, against [`naive_matmul`];
//!    [`main_memory_reads`]: what the tiles save.
//! 3. [`CostModel`]: when the GPU pays off, from a launch's cost, the transfer rates and
//!    each device's speed.
//! 4. [`Sample`] and [`measure`]: the measurements, CPU and GPU side by side, and the one
//!    machine's run committed with the book (`cargo run --release --features wgpu -p
//!    chapter14 --example measure` measures yours).
//! 5. [`plots`]: the figure; [`tour`]: everything the page prints
//!    (`cargo run -p chapter14`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run; with
//! `--features exercises` your own `src/exercises.rs` does.

mod cost;
pub mod grid;
pub mod measure;
pub mod plots;
mod sample;
mod tiled;

pub use cost::CostModel;
pub use grid::{
    GROUP, Grid, MAX_GROUPS_PER_DIM, elementwise_grid, invocation_index, matmul_grid,
};
pub use sample::{Kind, Row, Sample, human_seconds};
pub use tiled::{INVOCATIONS, Tiling, main_memory_reads, naive_matmul, tiled_matmul};

/// The exercises of this chapter: the reference solutions, or with `--features exercises`
/// the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter14: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

/// Seeded values in `[-1, 1)`, from the engine's generator (`engine::manual_seed(seed)`).
pub fn seeded(len: usize, seed: u64) -> Vec<f32> {
    engine::manual_seed(seed);
    engine::Tensor::rand([len], -1.0, 1.0).to_vec()
}

/// A count with commas between thousands: `16,777,216`.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Everything the page prints, in order (`cargo run -p chapter14`). It
/// runs on the CPU and reads the committed sample, so it prints the same on every machine.
pub fn tour() -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_grids
    line("1. Workgroups and invocations".into());
    for (what, n) in [
        ("add over 1,000 values", 1000),
        ("add over [4096, 4096]", 4096 * 4096),
        (
            "add over [8, 8, 1024, 1024] (attention scores)",
            8 * 8 * 1024 * 1024,
        ),
    ] {
        let g = elementwise_grid(n, GROUP, MAX_GROUPS_PER_DIM);
        let (busy, launched) = grid::busy_share(n, &g, GROUP);
        line(format!(
            "{what}: {} x {} workgroups of {GROUP}",
            count(g.x),
            count(g.y)
        ));
        line(format!(
            "  {} invocations, {} of them busy",
            count(launched),
            count(busy)
        ));
    }
    for tiling in [Tiling::TILE64, Tiling::TILE128] {
        let t = tiling.tile();
        let g = matmul_grid(1024, 1024, 1, t);
        let heads = matmul_grid(1024, 1024, 64, t);
        line(format!(
            "{t} x {t} tiles: [1024, 1024] · [1024, 1024] is {} x {} = {} workgroups",
            g.x,
            g.y,
            g.groups()
        ));
        line(format!(
            "  the scores of 8 x 8 heads, [64, 1024, 64] · [64, 64, 1024]: {} workgroups",
            count(heads.groups())
        ));
    }
    // ANCHOR_END: tour_grids

    // ANCHOR: tour_replay
    line(String::new());
    line("2. The tiled kernel, replayed on the CPU".into());
    let (m, k, n) = (37, 50, 45);
    let (a, b) = (seeded(m * k, 1), seeded(k * n, 2));
    let definition = naive_matmul(&a, &b, (m, k, n));
    for tiling in [Tiling::TILE64, Tiling::TILE128] {
        let tiled = tiled_matmul(&a, &b, (m, k, n), tiling);
        line(format!(
            "[{m}, {k}] · [{k}, {n}] with {0} x {0} tiles (steps of {1} along k)",
            tiling.tile(),
            tiling.step()
        ));
        line(format!(
            "  the same bits as the definition: {}",
            tiled == definition
        ));
    }
    // ANCHOR_END: tour_replay

    // ANCHOR: tour_traffic
    line(String::new());
    line("3. Values read from main memory by one product".into());
    for n in [1024, 4096] {
        let (naive, t64) = main_memory_reads(n, n, n, Tiling::TILE64);
        let (_, t128) = main_memory_reads(n, n, n, Tiling::TILE128);
        line(format!("[{n}, {n}] · [{n}, {n}]: naive {}", count(naive)));
        line(format!(
            "  64 x 64 tiles {} ({}x fewer), 128 x 128 tiles {} ({}x fewer)",
            count(t64),
            naive / t64,
            count(t128),
            naive / t128
        ));
    }
    // ANCHOR_END: tour_traffic

    // ANCHOR: tour_sample
    line(String::new());
    let sample = Sample::committed();
    line("4. One machine's measurements (the committed sample)".into());
    line(format!("CPU: {}", sample.cpu));
    line(format!("GPU: {}", sample.gpu));
    if let Some(model) = sample.cost_model() {
        line(format!(
            "its cost model: CPU {:.1} GFLOP/s, GPU {:.1} GFLOP/s, a launch {}",
            model.cpu_flops / 1e9,
            model.gpu_flops / 1e9,
            human_seconds(model.launch_seconds)
        ));
        line(format!(
            "  upload {:.2} GB/s, read back {:.2} GB/s",
            model.upload_bytes_per_second / 1e9,
            model.readback_bytes_per_second / 1e9
        ));
        match model.break_even() {
            Some(n) => line(format!(
                "the GPU, transfers included, beats the CPU from [{n}, {n}] · [{n}, {n}] on"
            )),
            None => line(
                "the GPU, transfers included, never beats the CPU on square products up to 2^20"
                    .into(),
            ),
        }
    }
    // ANCHOR_END: tour_sample

    out
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch14-attention-on-the-gpu.md")]
struct Book;
