//! What the `[B, Q, K, h]` tensor costs, measured with the engine's memory
//! accounting.

use attention::{AdditiveAttention, AdditiveAttentionConfig, AdditiveScoring, Mask};
use engine::Tensor;
use engine::memory;
use engine::memory::human;
use engine::nn::Module;

// ANCHOR: pairs_bytes
/// The bytes of one `[B, Q, K, h]` tensor of `f32`: `B·Q·K·h·4`.
pub fn pairs_bytes(b: usize, q: usize, k: usize, h: usize) -> usize {
    b * q * k * h * size_of::<f32>()
}
// ANCHOR_END: pairs_bytes

/// What one forward pass of [`AdditiveAttention`] held, in bytes above what was live
/// before it (the inputs and the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardMemory {
    /// [`pairs_bytes`] for the sizes measured.
    pub pairs: usize,
    /// The most held at any moment during the forward pass.
    pub peak: usize,
    /// Still held once the forward pass has returned (and its output is alive).
    pub held: usize,
}

/// The sizes of the inputs the memory measurements use: queries, keys and values of 8
/// features, small next to the hidden size.
const FEATURES: usize = 8;

fn module(h: usize, scoring: AdditiveScoring) -> AdditiveAttention {
    let mut attention = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: FEATURES,
        key_size: FEATURES,
        num_hiddens: h,
        scoring,
        ..Default::default()
    });
    attention.eval();
    attention
}

// ANCHOR: measure_forward
/// Runs one forward pass of d2l's additive attention with `B = b`, `Q = q`, `K = k`,
/// `num_hiddens = h`, its scores computed as `scoring` says, on a thread of its own
/// so that nothing else is counted, and reports its memory. With `training` the
/// parameters record the graph for `backward`; without, the pass runs under
/// `no_grad`, as inference does.
pub fn measure_forward(
    (b, q, k, h): (usize, usize, usize, usize),
    scoring: AdditiveScoring,
    training: bool,
) -> ForwardMemory {
    std::thread::spawn(move || {
        engine::manual_seed(0);
        let attention = module(h, scoring);
        let queries = Tensor::randn([b, q, FEATURES]);
        let keys = Tensor::randn([b, k, FEATURES]);
        let values = Tensor::randn([b, k, FEATURES]);

        memory::reset_peak();
        let before = memory::live_bytes();
        let forward = || attention.forward(&queries, &keys, &values, &Mask::none());
        let output = if training {
            forward()
        } else {
            engine::no_grad(forward)
        };
        let measured = ForwardMemory {
            pairs: pairs_bytes(b, q, k, h),
            peak: memory::peak_bytes() - before,
            held: memory::live_bytes() - before,
        };
        drop(output);
        measured
    })
    .join()
    .expect("the measurement thread does not panic")
}
// ANCHOR_END: measure_forward

/// The sizes `(B, Q, K, h)` of the memory table of section 5.
pub const MEMORY_SIZES: [(usize, usize, usize, usize); 3] =
    [(2, 16, 16, 32), (4, 32, 32, 32), (4, 64, 64, 32)];

// ANCHOR: memory_row
/// One row of the memory table: the sizes, [`pairs_bytes`], and the peak, its ratio
/// to the pairs tensor and what stays held, under `no_grad` and then in training
/// mode.
pub fn memory_row(
    sizes: (usize, usize, usize, usize),
    scoring: AdditiveScoring,
) -> String {
    let (b, q, k, h) = sizes;
    let inference = measure_forward(sizes, scoring, false);
    let training = measure_forward(sizes, scoring, true);
    format!(
        "{b:>2} {q:>2} {k:>2} {h:>2} {:>11} | {:>12} {:>6.2} {:>11} | {:>13} {:>11}",
        human(inference.pairs),
        human(inference.peak),
        inference.peak as f64 / inference.pairs as f64,
        human(inference.held),
        human(training.peak),
        human(training.held),
    )
}
// ANCHOR_END: memory_row

// ANCHOR: refused
/// The message of a forward pass (with d2l's broadcast scores) that does not fit in
/// `budget` bytes: the engine checks each allocation against [`memory::set_budget`]
/// before making it.
pub fn refused_forward(
    b: usize,
    q: usize,
    k: usize,
    h: usize,
    budget: usize,
) -> String {
    std::thread::spawn(move || {
        engine::manual_seed(0);
        let attention = module(h, AdditiveScoring::Broadcast);
        let queries = Tensor::randn([b, q, FEATURES]);
        let keys = Tensor::randn([b, k, FEATURES]);
        memory::set_budget(Some(budget));
        let message = crate::panic_message(|| {
            engine::no_grad(|| {
                attention.forward(&queries, &keys, &keys, &Mask::none())
            });
        });
        memory::set_budget(None);
        message
    })
    .join()
    .expect("the measurement thread does not panic")
}
// ANCHOR_END: refused
