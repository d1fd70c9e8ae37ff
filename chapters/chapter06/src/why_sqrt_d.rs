//! Why the scores are divided by `√d`, measured: the variance of `q · k` for random
//! unit-variance queries and keys, and what the softmax makes of such scores with no
//! scale, with `1/√d`, and with `1/d`.

use attention::prelude::*;

/// The sizes `d` the study measures: the powers of two from 4 to 1024.
pub const STUDY_DIMS: [usize; 9] = [4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// How many sequences the study draws for each `d` (its batch size).
pub const SCORED_BATCH: usize = 8;

/// How many queries each sequence has.
pub const SCORED_QUERIES: usize = 16;

/// How many keys each sequence has: the length of each softmax.
pub const SCORED_KEYS: usize = 16;

/// The seed of the study's random draws.
pub const STUDY_SEED: u64 = 2017;

/// What the dot products are multiplied by before the softmax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// No scale: `q · k` as it is.
    Unscaled,
    /// The transformer's scale, `1/√d`.
    InvSqrtD,
    /// A tempting mistake, `1/d`.
    InvD,
}

impl Scale {
    /// The three scales, in the order [`ScaleRow::measured`] holds them.
    pub const ALL: [Scale; 3] = [Scale::Unscaled, Scale::InvSqrtD, Scale::InvD];

    /// The factor for queries and keys of size `d`: 1, `1/√d` or `1/d`.
    pub fn factor(self, d: usize) -> f32 {
        match self {
            Scale::Unscaled => 1.0,
            Scale::InvSqrtD => 1.0 / (d as f32).sqrt(),
            Scale::InvD => 1.0 / d as f32,
        }
    }

    /// How the page and the charts name the scaled score.
    pub fn label(self) -> &'static str {
        match self {
            Scale::Unscaled => "q · k",
            Scale::InvSqrtD => "q · k / √d",
            Scale::InvD => "q · k / d",
        }
    }
}

// ANCHOR: random_scores
/// The unscaled scores `q · k` of a batch of `batch` sequences, each with `queries`
/// queries and `keys` keys of size `d`, every entry drawn from N(0, 1):
/// `[batch, queries, keys]`, one softmax row per query.
pub fn random_scores(d: usize, batch: usize, queries: usize, keys: usize) -> Tensor {
    let q = Tensor::randn([batch, queries, d]); // [B, Q, d]
    let k = Tensor::randn([batch, keys, d]); //    [B, K, d]
    q.matmul(&k.transpose(1, 2)) //                [B, Q, d] x [B, d, K] -> [B, Q, K]
}
// ANCHOR_END: random_scores

// ANCHOR: variance
/// The variance of all the values of `t`: the mean of the squared distances to the
/// mean.
pub fn variance(t: &Tensor) -> f32 {
    let centred = t - t.mean();
    centred.square().mean().item()
}
// ANCHOR_END: variance

/// What the softmax makes of one set of scaled scores: [`softmax_saturation`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Saturation {
    /// The variance of the scaled scores (the softmax's input).
    pub variance: f32,
    /// The largest weight of each softmax row, averaged over the rows: 1 when every
    /// row is one-hot, `1/K` when every row is uniform.
    pub max_weight: f32,
    /// The length of the gradient that reaches the softmax's input, for a typical
    /// row: the median over the rows (the few rows whose two best keys score almost
    /// alike keep a large gradient, and they would dominate a mean).
    pub grad_norm: f32,
}

// ANCHOR: saturation
/// Multiplies `scores` (`[B, Q, K]`) by `scale`, takes the softmax over the keys, and
/// measures the result. The gradient is that of `Σ upstream ⊙ weights` (a fixed
/// random `upstream`, the same shape, standing for whatever the layers above send
/// back) with respect to the softmax's input.
pub fn softmax_saturation(
    scores: &Tensor,
    scale: f32,
    upstream: &Tensor,
) -> Saturation {
    // The softmax's input as a leaf of its own, so that its gradient is kept.
    let logits = (scores * scale).detach().requires_grad_();
    let weights = logits.softmax(-1); //               [B, Q, K]
    (&weights * upstream).sum().backward();
    let grad = logits
        .grad()
        .expect("logits is a leaf that requires a gradient");
    let row_norms = grad.square().sum_dim(-1).sqrt(); // [B, Q]
    Saturation {
        variance: variance(&logits.detach()),
        max_weight: weights.detach().max_dim(-1).mean().item(),
        grad_norm: median(row_norms.to_vec()),
    }
}

/// The middle value (the mean of the two middle values for an even count).
pub fn median(mut values: Vec<f32>) -> f32 {
    assert!(!values.is_empty(), "median: no values");
    values.sort_by(f32::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}
// ANCHOR_END: saturation

/// The study's measurements at one size `d`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleRow {
    /// The size of the queries and keys.
    pub d: usize,
    /// One measurement per scale, in the order of [`Scale::ALL`].
    pub measured: [Saturation; 3],
}

impl ScaleRow {
    /// The measurement for one scale.
    pub fn get(&self, scale: Scale) -> Saturation {
        let i = Scale::ALL
            .iter()
            .position(|&s| s == scale)
            .expect("every scale is in Scale::ALL");
        self.measured[i]
    }
}

// ANCHOR: study
/// For every `d` in [`STUDY_DIMS`]: draw [`SCORED_BATCH`] sequences of
/// [`SCORED_QUERIES`] queries and [`SCORED_KEYS`] keys, and measure what each
/// [`Scale`] makes of the same scores (with the same upstream gradient). Seeded:
/// every run gives the same numbers.
pub fn scaling_study() -> Vec<ScaleRow> {
    manual_seed(STUDY_SEED);
    STUDY_DIMS
        .iter()
        .map(|&d| {
            let scores = random_scores(d, SCORED_BATCH, SCORED_QUERIES, SCORED_KEYS);
            let upstream = Tensor::randn(scores.shape());
            let measured = Scale::ALL
                .map(|s| softmax_saturation(&scores, s.factor(d), &upstream));
            ScaleRow { d, measured }
        })
        .collect()
}
// ANCHOR_END: study

/// A line chart of one measurement against `d`, one line per scale.
fn chart(
    rows: &[ScaleRow],
    title: &str,
    y_desc: &str,
    log10_y: bool,
    value: fn(&Saturation) -> f32,
) -> String {
    let points: Vec<Vec<(f32, f32)>> = Scale::ALL
        .iter()
        .map(|&s| {
            rows.iter()
                .map(|r| (r.d as f32, value(&r.get(s))))
                .collect()
        })
        .collect();
    let series: Vec<figures::Series<'_>> = Scale::ALL
        .iter()
        .zip(&points)
        .map(|(s, p)| figures::Series {
            name: s.label(),
            points: p,
        })
        .collect();
    figures::line_chart(&figures::LineChart {
        title,
        x_desc: "d (size of the queries and keys)",
        y_desc,
        series: &series,
        log2_x: true,
        log10_y,
    })
}

/// The variance of the scores against `d`, on log scales: `q · k` grows as `d`,
/// `q · k / √d` stays at 1, `q · k / d` shrinks as `1/d`.
pub fn variance_chart(rows: &[ScaleRow]) -> String {
    chart(
        rows,
        "variance of the scores",
        "variance (log scale)",
        true,
        |m| m.variance,
    )
}

/// The mean largest softmax weight against `d`: 1 is one-hot, `1/K` is uniform.
pub fn saturation_chart(rows: &[ScaleRow]) -> String {
    chart(
        rows,
        "largest softmax weight over 16 keys",
        "mean largest weight",
        false,
        |m| m.max_weight,
    )
}

/// The median gradient norm at the softmax's input against `d`, on a log scale.
pub fn gradient_chart(rows: &[ScaleRow]) -> String {
    chart(
        rows,
        "gradient reaching the softmax's input",
        "median gradient norm (log scale)",
        true,
        |m| m.grad_norm,
    )
}
