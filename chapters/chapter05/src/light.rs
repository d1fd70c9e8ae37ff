//! Lighter forms of additive attention: fewer parameters and fewer multiply-adds than
//! `w_vᵀ tanh(W_q q + W_k k)` with a full hidden size, each counted, and compared with
//! the full form on the toy task.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;
use engine::nn::init;
use engine::optim::{Adam, AdamConfig, Optimizer};

use crate::training::{KEYS, QUERIES, ToyBatch};

// ANCHOR: variant
/// A form of the additive score `w_vᵀ tanh(q̃ + k̃)`, by how it projects the query
/// and the key to the hidden size `h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `q̃ = W_q q`, `k̃ = W_k k`: the chapter's form, at any hidden size.
    Full {
        /// The hidden size `h`.
        hidden: usize,
    },
    /// `q̃ = q`: the query enters unprojected, so `h` is the query's size and only
    /// the key is projected, `W_k: [q_size, k_size]`.
    NoQueryProjection,
    /// `k̃ = U (V k)`: the key's projection is the product of `V: [r, k_size]` and
    /// `U: [h, r]`, of rank at most `r`.
    LowRankKeys {
        /// The hidden size `h`.
        hidden: usize,
        /// The rank `r`.
        rank: usize,
    },
    /// `q̃ = W q`, `k̃ = W k`: one projection for both, which needs queries and keys
    /// of one size.
    Tied {
        /// The hidden size `h`.
        hidden: usize,
    },
}
// ANCHOR_END: variant

/// The sizes a form is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Features of a query.
    pub query: usize,
    /// Features of a key.
    pub key: usize,
}

impl Variant {
    /// What the page's tables call it.
    pub fn name(self) -> String {
        match self {
            Variant::Full { hidden } => format!("full, h = {hidden}"),
            Variant::NoQueryProjection => "no W_q (h = q_size)".into(),
            Variant::LowRankKeys { hidden, rank } => {
                format!("low-rank W_k, h = {hidden}, r = {rank}")
            }
            Variant::Tied { hidden } => format!("tied W_q = W_k, h = {hidden}"),
        }
    }

    /// The hidden size `h` for queries and keys of `sizes`.
    pub fn hidden(self, sizes: Sizes) -> usize {
        match self {
            Variant::Full { hidden }
            | Variant::LowRankKeys { hidden, .. }
            | Variant::Tied { hidden } => hidden,
            Variant::NoQueryProjection => sizes.query,
        }
    }

    // ANCHOR: counts
    /// The number of parameters, from the sizes alone.
    pub fn parameters(self, s: Sizes) -> usize {
        let h = self.hidden(s);
        let projections = match self {
            Variant::Full { .. } => h * s.query + h * s.key,
            Variant::NoQueryProjection => h * s.key,
            Variant::LowRankKeys { rank, .. } => {
                h * s.query + rank * s.key + h * rank
            }
            Variant::Tied { .. } => h * s.query,
        };
        projections + h // and w_v
    }

    /// The multiply-adds of one forward pass over `b` examples of `q` queries and `k`
    /// keys with values of `dv` features: the projections, the `h` terms of each of
    /// the `b·q·k` scores, and the pooling of the values.
    pub fn multiply_adds(self, s: Sizes, [b, q, k, dv]: [usize; 4]) -> usize {
        let h = self.hidden(s);
        let queries = match self {
            Variant::NoQueryProjection => 0,
            _ => b * q * s.query * h,
        };
        let keys = match self {
            Variant::LowRankKeys { rank, .. } => b * k * (s.key * rank + rank * h),
            _ => b * k * s.key * h,
        };
        queries + keys + b * q * k * h + b * q * k * dv
    }
    // ANCHOR_END: counts

    /// Fresh parameters in the order [`scores`] takes them, each uniform in
    /// `±1/√fan_in` as PyTorch's `Linear` draws a weight, and requiring gradients.
    ///
    /// # Panics
    /// For [`Variant::Tied`] with queries and keys of different sizes.
    pub fn init(self, s: Sizes) -> Vec<Tensor> {
        let h = self.hidden(s);
        let linear = |out: usize, inp: usize| {
            let bound = 1.0 / (inp as f32).sqrt();
            init::uniform([out, inp], -bound, bound).requires_grad_()
        };
        let w_v = {
            let bound = 1.0 / (h as f32).sqrt();
            init::uniform([h], -bound, bound).requires_grad_()
        };
        match self {
            Variant::Full { .. } => vec![linear(h, s.query), linear(h, s.key), w_v],
            Variant::NoQueryProjection => vec![linear(h, s.key), w_v],
            Variant::LowRankKeys { rank, .. } => {
                vec![
                    linear(h, s.query),
                    linear(rank, s.key),
                    linear(h, rank),
                    w_v,
                ]
            }
            Variant::Tied { .. } => {
                assert_eq!(
                    s.query, s.key,
                    "Variant::Tied: one projection for queries and keys needs one size, found query_size {} and key_size {}",
                    s.query, s.key
                );
                vec![linear(h, s.query), w_v]
            }
        }
    }
}

/// The multiply-adds of one product `x Wᵀ`, counted from the shapes: every row of `x`
/// times every output feature, `in` each.
fn product_count(x: &Tensor, w: &Tensor) -> usize {
    x.numel() / x.size(-1) * w.size(0) * w.size(1)
}

// ANCHOR: scores
/// The scores `[B, Q, K]` of `queries: [B, Q, q_size]` against `keys: [B, K, k_size]`
/// under `variant` with `params` (as [`Variant::init`] orders them), and the
/// multiply-adds of the projections and scores, counted from the tensors' shapes.
pub fn scores(
    variant: Variant,
    queries: &Tensor,
    keys: &Tensor,
    params: &[Tensor],
) -> (Tensor, usize) {
    let project =
        |x: &Tensor, w: &Tensor| (x.matmul(&w.transpose(0, 1)), product_count(x, w));
    let ((q, nq), (k, nk), w_v) = match (variant, params) {
        (Variant::Full { .. }, [w_q, w_k, w_v]) => {
            (project(queries, w_q), project(keys, w_k), w_v)
        }
        (Variant::NoQueryProjection, [w_k, w_v]) => {
            ((queries.clone(), 0), project(keys, w_k), w_v)
        }
        (Variant::LowRankKeys { .. }, [w_q, v, u, w_v]) => {
            let (low, n1) = project(keys, v); //          [B, K, r]
            let (k, n2) = project(&low, u); //            [B, K, h]
            (project(queries, w_q), (k, n1 + n2), w_v)
        }
        (Variant::Tied { .. }, [w, w_v]) => {
            (project(queries, w), project(keys, w), w_v)
        }
        _ => panic!("scores: {} takes other parameters", variant.name()),
    };
    let pairs = q.size(0) * q.size(1) * k.size(1) * q.size(2); // h per (query, key)
    (q.additive_scores(&k, w_v), nq + nk + pairs)
}
// ANCHOR_END: scores

/// Attention under `variant`: the weights `[B, Q, K]` (masked, `Fill::Safe`), the
/// output `weights · values`, and the multiply-adds of the whole pass counted from
/// the shapes.
pub fn attend(
    variant: Variant,
    params: &[Tensor],
    [queries, keys, values]: [&Tensor; 3],
    mask: &Mask,
) -> (Tensor, Tensor, usize) {
    let (scores, count) = scores(variant, queries, keys, params);
    let weights = masked_softmax(&scores, mask, Fill::Safe);
    let pooled = weights.size(0) * weights.size(1) * weights.size(2) * values.size(2);
    let output = weights.bmm(values);
    (weights, output, count + pooled)
}

/// How one form did on the toy task's held-out batch after training.
#[derive(Clone, Debug)]
pub struct LightRun {
    /// `−mean ln α_target` on the held-out batch.
    pub loss: f32,
    /// The share of held-out queries whose largest weight is on the right key.
    pub accuracy: f32,
    /// The held-out weights `[64, 3, 8]`.
    pub weights: Tensor,
}

// ANCHOR: light_run
/// Trains `variant` on the toy task as [`toy_run`](crate::toy_run) trains the full
/// form (Adam at 0.1, 100 steps of 16 fresh examples) and scores it on a held-out
/// batch of 64 examples. `seed` draws the held-out batch and the parameters, and
/// `seed + 1000` the training batches, so every form sees the same examples.
pub fn light_run(variant: Variant, seed: u64) -> LightRun {
    engine::manual_seed(seed);
    let sizes = Sizes {
        query: QUERIES,
        key: crate::training::KEY_SIZE,
    };
    let held_out = ToyBatch::draw(64);
    let params = variant.init(sizes);
    // The training batches from a seed of their own, the same for every form.
    engine::manual_seed(seed + 1000);
    let mut optimizer = Adam::new(
        params.clone(),
        AdamConfig {
            lr: 0.1,
            ..Default::default()
        },
    );
    let loss_of = |batch: &ToyBatch| {
        let inputs = [&batch.queries, &batch.keys, &batch.values];
        let (weights, _, _) = attend(variant, &params, inputs, &batch.mask());
        let on_target = (&weights * &batch.targets).sum_dim(-1);
        (weights, on_target.log().mean().neg())
    };
    for _ in 0..crate::training::STEPS {
        let (_, loss) = loss_of(&ToyBatch::draw(16));
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
    }
    let (weights, loss) = engine::no_grad(|| loss_of(&held_out));
    let most = weights.argmax(-1).to_vec();
    let targets = held_out.targets.to_vec();
    let hits = most
        .iter()
        .enumerate()
        .filter(|&(row, &key)| targets[row * KEYS + key as usize] == 1.0)
        .count();
    LightRun {
        loss: loss.item(),
        accuracy: hits as f32 / most.len() as f32,
        weights,
    }
}
// ANCHOR_END: light_run

/// The mean over queries of the total-variation distance between two sets of weights
/// `[B, Q, K]`, `½ Σⱼ |αⱼ − βⱼ|`: 0 when they agree, 1 when they share no key.
pub fn weight_distance(a: &Tensor, b: &Tensor) -> f32 {
    let rows = a.numel() / a.size(-1);
    ((a - b).abs().sum().item() / 2.0) / rows as f32
}

/// The seeds the toy comparison trains from.
pub const SEEDS: [u64; 3] = [5, 6, 7];

/// The forms the toy comparison trains; the first is the chapter's toy model's form.
pub const TOY_FORMS: [Variant; 5] = [
    Variant::Full { hidden: 8 },
    Variant::Full { hidden: 3 },
    Variant::NoQueryProjection,
    Variant::LowRankKeys { hidden: 8, rank: 2 },
    Variant::LowRankKeys { hidden: 8, rank: 3 },
];

/// `lo–hi` of some values, three decimals.
fn range(values: &[f32]) -> (f32, f32) {
    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    (lo, hi)
}

// ANCHOR: toy_table
/// Each of [`TOY_FORMS`] trained on the toy task from each of [`SEEDS`]: its
/// parameters and multiply-adds on the held-out batch, its accuracy there, and how
/// far its weights are from those of the full form trained from the same seed.
pub fn toy_table() -> String {
    let sizes = Sizes {
        query: QUERIES,
        key: crate::training::KEY_SIZE,
    };
    let shape = [64, QUERIES, KEYS, KEYS];
    let runs: Vec<Vec<LightRun>> = TOY_FORMS
        .iter()
        .map(|&form| SEEDS.iter().map(|&seed| light_run(form, seed)).collect())
        .collect();
    let mut out = format!(
        "the toy task, after {} steps; ranges over the seeds {SEEDS:?}\n",
        crate::training::STEPS
    );
    out += &format!(
        "{:<29} {:>6} {:>9} {:>12} {:>8} {:>12}\n",
        "form", "params", "mult-adds", "accuracy", "vs full", "distance"
    );
    let accuracies = |runs: &[LightRun]| {
        range(&runs.iter().map(|r| r.accuracy).collect::<Vec<_>>())
    };
    let full = accuracies(&runs[0]);
    for (form, these) in TOY_FORMS.iter().zip(&runs) {
        let acc = accuracies(these);
        // Ranges apart, or not: a difference within the seeds' spread is noise.
        let verdict = if *form == TOY_FORMS[0] {
            "—"
        } else if acc.1 < full.0 {
            "lower"
        } else if acc.0 > full.1 {
            "higher"
        } else {
            "overlap"
        };
        let distance: Vec<f32> = these
            .iter()
            .zip(&runs[0])
            .map(|(r, f)| weight_distance(&r.weights, &f.weights))
            .collect();
        let distance = range(&distance);
        out += &format!(
            "{:<29} {:>6} {:>9} {:>12} {verdict:>8} {:>12}\n",
            form.name(),
            form.parameters(sizes),
            form.multiply_adds(sizes, shape),
            format!("{:.3}–{:.3}", acc.0, acc.1),
            format!("{:.3}–{:.3}", distance.0, distance.1),
        );
    }
    out +=
        "(distance: ½ Σ |α − β| per query against full, h = 8 from the same seed)\n";
    out
}
// ANCHOR_END: toy_table

// ANCHOR: counts_table
/// Parameters and multiply-adds of every form at a size where they matter.
pub fn counts_table() -> String {
    let sizes = Sizes {
        query: 512,
        key: 512,
    };
    let shape = [1, 128, 128, 512];
    let forms = [
        Variant::Full { hidden: 512 },
        Variant::Full { hidden: 128 },
        Variant::NoQueryProjection,
        Variant::LowRankKeys {
            hidden: 512,
            rank: 64,
        },
        Variant::Tied { hidden: 512 },
    ];
    let base = forms[0];
    let mut out = String::from(
        "q_size = k_size = 512, one example of Q = K = 128 queries and keys, dv = 512:\n",
    );
    out += &format!(
        "{:<29} {:>9} {:>8} {:>11} {:>8}\n",
        "form", "params", "of full", "mult-adds", "of full"
    );
    for form in forms {
        let (p, m) = (form.parameters(sizes), form.multiply_adds(sizes, shape));
        out += &format!(
            "{:<29} {p:>9} {:>8.3} {m:>11} {:>8.3}\n",
            form.name(),
            p as f64 / base.parameters(sizes) as f64,
            m as f64 / base.multiply_adds(sizes, shape) as f64,
        );
    }
    out.trim_end().to_string()
}
// ANCHOR_END: counts_table
