//! The complexity row of the articles' table, checked: what one attention call counts
//! and what it costs as the feature size `d` grows, for additive and scaled
//! dot-product attention, with the projections of the query and the keys counted and
//! without them.
//!
//! The counts are exact and the same everywhere; the times are one machine's,
//! measured by the `scorings` example and never by a test.

use std::time::{Duration, Instant};

use attention::prelude::*;

/// Examples per call: each has one query, as a decoder step does.
pub const SWEEP_BATCH: usize = 64;

/// Keys per query.
pub const SWEEP_KEYS: usize = 64;

/// The feature sizes of the sweep: of the queries, the keys, the values and the
/// hidden space (`h = d`).
pub const SWEEP_SIZES: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

// ANCHOR: variant
/// What one timed call computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `AdditiveAttention::forward`: `W_q q`, `W_k kⱼ` for every key, then
    /// `w · tanh(q̃ + k̃ⱼ)`, the softmax and the weighted sum of the values.
    AdditiveWithProjections,
    /// The same from `q̃` and `k̃` already projected: the scores, the softmax and the
    /// weighted sum.
    AdditiveScoresOnly,
    /// `W_q q`, `W_k kⱼ`, then `(q̃ · k̃ⱼ) / √d`, the softmax and the weighted sum.
    ScaledDotWithProjections,
    /// `scaled_dot_product_attention` on `q` and `kⱼ` as they are.
    ScaledDotOnly,
}

impl Variant {
    /// Every variant, in the order of the table's columns.
    pub const ALL: [Variant; 4] = [
        Variant::AdditiveWithProjections,
        Variant::AdditiveScoresOnly,
        Variant::ScaledDotWithProjections,
        Variant::ScaledDotOnly,
    ];

    /// Whether the call projects the query and the keys.
    pub fn projects(self) -> bool {
        matches!(
            self,
            Variant::AdditiveWithProjections | Variant::ScaledDotWithProjections
        )
    }

    /// The name of the figure's line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::AdditiveWithProjections => "additive, projections counted",
            Variant::AdditiveScoresOnly => "additive, scores only",
            Variant::ScaledDotWithProjections => "scaled dot, projections counted",
            Variant::ScaledDotOnly => "scaled dot, scores only",
        }
    }
}
// ANCHOR_END: variant

// ANCHOR: counts
/// The multiply-adds of one query against `n` keys of `d` features (hidden size
/// `h = d`, values of `d` features), for either scoring:
///
/// ```text
/// projections   W_q q: d·d          W_k kⱼ for every key: n·d·d
/// scores        additive: n·d (w · tanh(q̃ + k̃ⱼ), and n·d tanh)
///               dot product: n·d (q̃ · k̃ⱼ)
/// weighted sum  n·d
/// ```
///
/// With the projections, `n·d² + d² + 2·n·d` for both; without, `2·n·d` for both.
pub fn multiply_adds(n: u64, d: u64, projections: bool) -> u64 {
    let projected = if projections { d * d + n * d * d } else { 0 };
    projected + n * d + n * d
}
// ANCHOR_END: counts

/// The inputs of a timed call at size `d`, drawn from a seeded generator.
pub struct SweepCall {
    queries: Tensor,
    keys: Tensor,
    additive: AdditiveAttention,
    w_q: Linear,
    w_k: Linear,
    projected_queries: Tensor,
    projected_keys: Tensor,
    w: Tensor,
}

impl SweepCall {
    /// Queries `[SWEEP_BATCH, 1, d]`, keys and values
    /// `[SWEEP_BATCH, SWEEP_KEYS, d]`, and the modules' weights, drawn with seed `d`.
    pub fn new(d: usize) -> SweepCall {
        engine::manual_seed(d as u64);
        let queries = Tensor::randn([SWEEP_BATCH, 1, d]);
        let keys = Tensor::randn([SWEEP_BATCH, SWEEP_KEYS, d]);
        let additive = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: d,
            key_size: d,
            num_hiddens: d,
            ..Default::default()
        });
        let projection = || {
            Linear::new(LinearConfig {
                in_features: d,
                out_features: d,
                bias: false,
            })
        };
        let (w_q, w_k) = (projection(), projection());
        let projected_queries = w_q.forward(&queries).detach();
        let projected_keys = w_k.forward(&keys).detach();
        let w = Tensor::randn([d]) * (1.0 / (d as f32).sqrt());
        SweepCall {
            queries,
            keys,
            additive,
            w_q,
            w_k,
            projected_queries,
            projected_keys,
            w,
        }
    }

    // ANCHOR: call
    /// One forward call of `variant`, without gradients: the output
    /// `[SWEEP_BATCH, 1, d]`.
    pub fn call(&self, variant: Variant) -> Tensor {
        let (q, k, none) = (&self.queries, &self.keys, &Mask::none());
        no_grad(|| match variant {
            Variant::AdditiveWithProjections => self.additive.forward(q, k, k, none),
            Variant::AdditiveScoresOnly => {
                let scores = self
                    .projected_queries
                    .additive_scores(&self.projected_keys, &self.w);
                masked_softmax(&scores, none, Fill::Safe).matmul(k)
            }
            Variant::ScaledDotWithProjections => {
                let (q, kp) = (self.w_q.forward(q), self.w_k.forward(k));
                scaled_dot_product_attention(&q, &kp, k, none).0
            }
            Variant::ScaledDotOnly => scaled_dot_product_attention(q, k, k, none).0,
        })
    }
    // ANCHOR_END: call
}

/// The median wall time of `variant`'s call at size `d`, over at least 5 calls and
/// at least `min_total`, after one call to warm up. One machine's number.
pub fn time_call(
    call: &SweepCall,
    variant: Variant,
    min_total: Duration,
) -> Duration {
    call.call(variant);
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (times.len() < 1000 && start.elapsed() < min_total) {
        let t = Instant::now();
        let out = call.call(variant);
        times.push(t.elapsed());
        drop(out);
    }
    times.sort();
    times[times.len() / 2]
}
