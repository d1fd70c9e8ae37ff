//! How far each approximation's output is from exact attention, on three kinds of
//! input: random vectors, a task where what matters is nearby, and one where it is
//! far away.

use attention::{LshOptions, lsh_attention};
use engine::Tensor;

use crate::methods::{FEATURES, LSH, Method};

/// The sequence length of the accuracy experiments.
pub const ACCURACY_N: usize = 1024;

/// One input of the accuracy experiments: queries, keys and values for the methods
/// with separate queries and keys, and shared vectors for LSH, whose queries are its
/// keys.
#[derive(Clone, Debug)]
pub struct Task {
    /// The task's name in the table.
    pub name: &'static str,
    /// Queries `[1, n, 64]`.
    pub queries: Tensor,
    /// Keys `[1, n, 64]`.
    pub keys: Tensor,
    /// The shared queries and keys of LSH, `[1, n, 64]`, made to ask the same
    /// question as `queries` and `keys` do.
    pub shared: Tensor,
    /// Values `[1, n, 64]`, standard normal.
    pub values: Tensor,
}

// ANCHOR: positions
/// Smooth positional vectors `[n, d]`: row `i` holds `cos(ωₜ i)` and `sin(ωₜ i)` for
/// `d / 2` frequencies `ωₜ = 10000^(−2t/d)`, the sinusoidal encoding of chapter 8.
/// The dot product of rows `i` and `j` depends on `i − j` only, and is largest at
/// `i = j`: `Σₜ cos(ωₜ (i − j))`.
pub fn positions(n: usize, d: usize) -> Tensor {
    let mut p = Vec::with_capacity(n * d);
    for i in 0..n {
        for t in 0..d / 2 {
            let omega = 10000f64.powf(-2.0 * t as f64 / d as f64);
            let angle = omega * i as f64;
            p.push(angle.cos() as f32);
            p.push(angle.sin() as f32);
        }
    }
    Tensor::from_vec(p, [n, d])
}
// ANCHOR_END: positions

/// How strongly the local task's queries prefer nearby keys: queries are this
/// multiple of the positional vectors.
pub const LOCAL_SHARPNESS: f32 = 4.0;

/// How strongly a far-match query prefers its partner key.
pub const FAR_SHARPNESS: f32 = 1.5;

/// Random queries, keys and values, standard normal.
pub fn random_task(n: usize, seed: u64) -> Task {
    engine::manual_seed(seed);
    let shape = [1, n, FEATURES];
    let (queries, keys) = (Tensor::randn(shape), Tensor::randn(shape));
    let shared = Tensor::randn(shape);
    Task {
        name: "random",
        queries,
        keys,
        shared,
        values: Tensor::randn(shape),
    }
}

// ANCHOR: local_task
/// The local task: queries `4·p(i)` and keys `p(i)` from [`positions`], so each
/// query's weight falls off with the distance to the key. For LSH, whose keys are
/// normalised to length 1, the shared vectors are `4·√32·p(i)`, which gives the same
/// scores (`‖p(i)‖ = √32`). Values are random.
pub fn local_task(n: usize, seed: u64) -> Task {
    let p = positions(n, FEATURES).unsqueeze(0);
    engine::manual_seed(seed);
    Task {
        name: "local",
        queries: &p * LOCAL_SHARPNESS,
        keys: p.clone(),
        shared: &p * (LOCAL_SHARPNESS * (FEATURES as f32 / 2.0).sqrt()),
        values: Tensor::randn([1, n, FEATURES]),
    }
}
// ANCHOR_END: local_task

// ANCHOR: partners
/// A partner for every position, at least `n / 4` away: the first quarter of the
/// positions is paired with the third, the second with the fourth, each in a seeded
/// random order. Pairs are mutual: `partners[partners[i]] == i`. `n` must be a
/// multiple of 4.
pub fn partners(n: usize, seed: u64) -> Vec<usize> {
    assert!(
        n.is_multiple_of(4),
        "partners: n must be a multiple of 4, found {n}"
    );
    let quarter = n / 4;
    let mut partner = vec![0; n];
    for (from, to) in [(0, 2 * quarter), (quarter, 3 * quarter)] {
        // A seeded shuffle of the target quarter: sort it by random keys.
        engine::manual_seed(seed + from as u64);
        let keys = Tensor::rand([quarter], 0.0, 1.0).to_vec();
        let mut order: Vec<usize> = (0..quarter).collect();
        order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
        for (t, &o) in order.iter().enumerate() {
            let (i, j) = (from + t, to + o);
            partner[i] = j;
            partner[j] = i;
        }
    }
    partner
}
// ANCHOR_END: partners

// ANCHOR: far_task
/// The far-match task: random keys `x`, and query `i` is `1.5·x[π(i)]`, its partner's
/// key ([`partners`]), so each query matches one key at least `n / 4` away. For LSH,
/// whose queries are its keys, the two positions of a pair share one random direction
/// `u` (plus a little noise): `12·(u + 0.1·noise)`.
pub fn far_task(n: usize, seed: u64) -> Task {
    let partner = partners(n, seed);
    let index = Tensor::from_vec(partner.iter().map(|&j| j as f32).collect(), [n]);
    engine::manual_seed(seed);
    let keys = Tensor::randn([n, FEATURES]);
    let queries = keys.index_select(0, &index) * FAR_SHARPNESS;
    // One direction per pair, read from the lower position of the pair.
    let lower: Vec<f32> = (0..n).map(|i| i.min(partner[i]) as f32).collect();
    let directions = Tensor::randn([n, FEATURES]);
    let pair = directions.index_select(0, &Tensor::from_vec(lower, [n]));
    let shared = (pair + Tensor::randn([n, FEATURES]) * 0.1) * 12.0;
    Task {
        name: "far match",
        queries: queries.unsqueeze(0),
        keys: keys.unsqueeze(0),
        shared: shared.unsqueeze(0),
        values: Tensor::randn([1, n, FEATURES]),
    }
}
// ANCHOR_END: far_task

// ANCHOR: relative_error
/// `‖approx − exact‖ / ‖exact‖` over all entries (Frobenius norms), in `f64`.
pub fn relative_error(approx: &Tensor, exact: &Tensor) -> f64 {
    assert_eq!(
        approx.shape(),
        exact.shape(),
        "relative_error: shapes differ"
    );
    let (a, e) = (approx.to_vec(), exact.to_vec());
    let diff: f64 = a
        .iter()
        .zip(&e)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    let norm: f64 = e.iter().map(|&y| f64::from(y).powi(2)).sum();
    (diff / norm).sqrt()
}
// ANCHOR_END: relative_error

// ANCHOR: exact_lsh
/// LSH's own exact counterpart: one bucket and one chunk of all `n` positions, so
/// every query sees every key (itself only when it has no other), with the same
/// shared queries and keys, normalised keys and scale.
pub fn exact_lsh(shared: &Tensor, values: &Tensor) -> Tensor {
    let n = shared.size(1);
    let options = LshOptions {
        n_buckets: 1,
        chunk: n,
        ..LSH
    };
    lsh_attention(shared, values, &options)
}
// ANCHOR_END: exact_lsh

/// The relative error of `method` on `task`: against full attention of the same
/// queries, keys and values, or, for LSH, against [`exact_lsh`] of its shared
/// vectors.
pub fn task_error(method: Method, task: &Task) -> f64 {
    engine::no_grad(|| {
        if method == Method::Lsh {
            let approx = method.attend(&task.shared, &task.shared, &task.values);
            relative_error(&approx, &exact_lsh(&task.shared, &task.values))
        } else {
            let (q, k, v) = (&task.queries, &task.keys, &task.values);
            relative_error(&method.attend(q, k, v), &Method::Full.attend(q, k, v))
        }
    })
}

/// Full attention's weights of `task`, `[n, n]` (one sequence), row-major.
fn full_weights(task: &Task) -> Vec<f32> {
    let (q, k, v) = (&task.queries, &task.keys, &task.values);
    let none = attention::Mask::none();
    engine::no_grad(|| attention::scaled_dot_product_attention(q, k, v, &none).1)
        .to_vec()
}

/// The mean, over the queries of `task`, of the share of full attention's weight on
/// keys at most `distance` positions away.
pub fn weight_within(task: &Task, distance: usize) -> f64 {
    let n = task.queries.size(1);
    let w = full_weights(task);
    let total: f64 = (0..n)
        .flat_map(|i| {
            let (lo, hi) = (i.saturating_sub(distance), (i + distance + 1).min(n));
            w[i * n + lo..i * n + hi].iter().map(|&x| f64::from(x))
        })
        .sum();
    total / n as f64
}

/// The mean, over the queries of `task`, of full attention's weight on the key
/// `partner[i]`.
pub fn weight_on(task: &Task, partner: &[usize]) -> f64 {
    let n = task.queries.size(1);
    let w = full_weights(task);
    (0..n)
        .map(|i| f64::from(w[i * n + partner[i]]))
        .sum::<f64>()
        / n as f64
}

/// The three tasks at `n` positions, seeded.
pub fn tasks(n: usize) -> [Task; 3] {
    [random_task(n, 11), local_task(n, 12), far_task(n, 13)]
}

/// The relative error of every approximation (rows, in the order of
/// [`Method::APPROXIMATIONS`]) on every task (columns, in the order of [`tasks`]), at
/// [`ACCURACY_N`] positions.
pub fn error_table() -> Vec<(Method, [f64; 3])> {
    let tasks = tasks(ACCURACY_N);
    Method::APPROXIMATIONS
        .into_iter()
        .map(|m| (m, [0, 1, 2].map(|t| task_error(m, &tasks[t]))))
        .collect()
}
