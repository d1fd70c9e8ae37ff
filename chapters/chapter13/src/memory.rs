//! What additive attention's two scoring forms hold in memory, as the engine counts
//! it.

use attention::AdditiveScoring;
use attention::prelude::*;
use engine::memory;

/// One forward pass, or a forward and a backward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The forward pass under `no_grad`, as inference runs.
    Forward,
    /// The forward pass recording the graph, then `output.sum().backward()`, as a
    /// training step does.
    Training,
}

// ANCHOR: pairs_bytes
/// The bytes of one `[B, Q, K, h]` tensor of `f32`: `B·Q·K·h·4`.
pub fn pairs_bytes(b: usize, q: usize, k: usize, h: usize) -> usize {
    b * q * k * h * size_of::<f32>()
}
// ANCHOR_END: pairs_bytes

// ANCHOR: additive_peak
/// The most bytes that tensors held at once during one `pass` of additive
/// self-attention (`B = b` sequences of `n` tokens of size `h`, hidden size `h`),
/// beyond the inputs and parameters, with the scores computed as `scoring` says. It
/// runs on a thread of its own, whose memory counters nothing else touches, so the
/// number is exact and the same on every machine.
pub fn additive_peak(
    scoring: AdditiveScoring,
    pass: Pass,
    b: usize,
    n: usize,
    h: usize,
) -> usize {
    std::thread::spawn(move || {
        manual_seed(0);
        let mut attention = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: h,
            key_size: h,
            num_hiddens: h,
            scoring,
            ..Default::default()
        });
        attention.eval();
        let x = Tensor::randn([b, n, h]).requires_grad_();
        let forward = || attention.forward(&x, &x, &x, &Mask::none());

        memory::reset_peak();
        let before = memory::live_bytes();
        match pass {
            Pass::Forward => drop(no_grad(forward)),
            Pass::Training => forward().sum().backward(),
        }
        memory::peak_bytes() - before
    })
    .join()
    .expect("the measurement thread does not panic")
}
// ANCHOR_END: additive_peak

/// The peaks of both scoring forms, for both passes, at one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoringPeaks {
    /// Tokens per sequence (`Q = K = n`).
    pub n: usize,
    /// [`pairs_bytes`]: one `[B, n, n, h]` tensor.
    pub pairs: usize,
    /// [`AdditiveScoring::Broadcast`], [`Pass::Forward`].
    pub broadcast_forward: usize,
    /// [`AdditiveScoring::Fused`], [`Pass::Forward`].
    pub fused_forward: usize,
    /// [`AdditiveScoring::Broadcast`], [`Pass::Training`].
    pub broadcast_training: usize,
    /// [`AdditiveScoring::Fused`], [`Pass::Training`].
    pub fused_training: usize,
}

impl ScoringPeaks {
    /// Measures the four peaks for `b` sequences of `n` tokens and hidden size `h`.
    pub fn measure(b: usize, n: usize, h: usize) -> ScoringPeaks {
        use AdditiveScoring::{Broadcast, Fused};
        ScoringPeaks {
            n,
            pairs: pairs_bytes(b, n, n, h),
            broadcast_forward: additive_peak(Broadcast, Pass::Forward, b, n, h),
            fused_forward: additive_peak(Fused, Pass::Forward, b, n, h),
            broadcast_training: additive_peak(Broadcast, Pass::Training, b, n, h),
            fused_training: additive_peak(Fused, Pass::Training, b, n, h),
        }
    }
}

/// The batch and hidden size of the measured table (small, so that the broadcast form
/// runs in an instant).
pub const MEMORY_BATCH: usize = 2;
/// See [`MEMORY_BATCH`].
pub const MEMORY_HIDDEN: usize = 32;
/// The sequence lengths of the measured table.
pub const MEMORY_LENGTHS: [usize; 4] = [16, 32, 64, 128];

/// [`ScoringPeaks::measure`] at every length of [`MEMORY_LENGTHS`].
pub fn scoring_peaks() -> Vec<ScoringPeaks> {
    MEMORY_LENGTHS
        .iter()
        .map(|&n| ScoringPeaks::measure(MEMORY_BATCH, n, MEMORY_HIDDEN))
        .collect()
}
