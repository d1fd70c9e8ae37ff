//! Three ways to initialise the score network, and how close to uniform each leaves
//! the attention weights.

use engine::Tensor;
use engine::nn::{Module, StateDict, init};

/// How the parameters of an additive attention module are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// As `new` draws them, PyTorch's `Linear` default: every weight and bias from
    /// `U(-1/√fan_in, 1/√fan_in)`, and the score vector `v` (or `w_v`) from
    /// `U(-1/√h, 1/√h)`.
    Default,
    /// Every weight from `xavier_uniform` (gain 1), the score vector read as a `[1,
    /// h]` weight; biases zero.
    Xavier,
    /// Every weight from `N(0, 0.02²)`, as GPT-2 and BERT initialise; biases zero.
    Normal002,
}

impl Init {
    /// The three schemes, in the order the tour prints them.
    pub const ALL: [Init; 3] = [Init::Default, Init::Xavier, Init::Normal002];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Init::Default => "default U(±1/√fan_in)",
            Init::Xavier => "xavier_uniform",
            Init::Normal002 => "normal(0, 0.02)",
        }
    }
}

// ANCHOR: initialise
/// Redraws every parameter of `module` by `scheme`, by name: a `bias` is set to zero,
/// any other parameter is a weight (a 1-D one, `v: [h]`, is drawn as the `[1, h]`
/// weight of a `Linear(h, 1)`). [`Init::Default`] leaves the module as `new` drew it.
pub fn initialise(module: &impl Module, scheme: Init) {
    if scheme == Init::Default {
        return;
    }
    let mut state = StateDict::new();
    for (name, p) in module.named_parameters() {
        let shape = p.shape();
        let fresh = if name.ends_with("bias") {
            Tensor::zeros(shape)
        } else {
            let as_matrix = if shape.len() == 1 {
                vec![1, shape[0]]
            } else {
                shape.to_vec()
            };
            let w = match scheme {
                Init::Xavier => init::xavier_uniform(as_matrix.as_slice(), 1.0),
                _ => init::normal(as_matrix.as_slice(), 0.0, 0.02),
            };
            w.reshape(shape)
        };
        state.insert(name, fresh);
    }
    module
        .load_state_dict(&state)
        .expect("the state was built from the module's own parameters");
}
// ANCHOR_END: initialise

// ANCHOR: weight_stats
/// How far a set of attention weights is from uniform, averaged over the queries
/// (rows of the last dimension). Every weight must be above zero (no masked key).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightStats {
    /// The spread of each query's scores: the standard deviation over the keys of
    /// `log αⱼ = sⱼ − log Σ exp(s)`, which is the standard deviation of the scores
    /// themselves (the log-sum-exp is the same for every key of a row).
    pub score_std: f32,
    /// The entropy `H = −Σ αⱼ log αⱼ` divided by its largest value, `log K`: 1 for
    /// uniform weights, 0 for all weight on one key.
    pub entropy_ratio: f32,
    /// The largest weight times `K`: 1 for uniform weights, `K` for one-hot weights.
    pub max_times_k: f32,
}

/// [`WeightStats`] of `weights: [..., K]`.
///
/// # Panics
/// When a weight is not above zero, or there are fewer than two keys.
pub fn weight_stats(weights: &Tensor) -> WeightStats {
    let k = weights.size(-1);
    assert!(k >= 2, "weight_stats: needs at least 2 keys, found {k}");
    let values = weights.to_vec();
    assert!(
        values.iter().all(|&a| a > 0.0),
        "weight_stats: every weight must be above 0 (no masked key)"
    );
    let rows = values.len() / k;
    let (mut std, mut entropy, mut max) = (0.0, 0.0, 0.0);
    for row in values.chunks(k) {
        let logs: Vec<f64> = row.iter().map(|&a| f64::from(a).ln()).collect();
        let mean = logs.iter().sum::<f64>() / k as f64;
        std +=
            (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / k as f64).sqrt();
        entropy -= row
            .iter()
            .zip(&logs)
            .map(|(&a, l)| f64::from(a) * l)
            .sum::<f64>();
        max += f64::from(row.iter().copied().fold(0.0, f32::max));
    }
    let rows = rows as f64;
    WeightStats {
        score_std: (std / rows) as f32,
        entropy_ratio: (entropy / rows / (k as f64).ln()) as f32,
        max_times_k: (max / rows * k as f64) as f32,
    }
}
// ANCHOR_END: weight_stats
