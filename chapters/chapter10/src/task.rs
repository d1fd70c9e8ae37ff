//! A seeded task whose right alignment is known: "which key holds the largest value
//! of feature `i`?"
//!
//! Each example has [`KEYS`] keys of [`KEY_SIZE`] features, of which the first `len`
//! (6 to 12) are real, and [`QUERIES`] queries. Query `i` asks about feature `i`; it
//! is the one-hot vector `eᵢ` plus a little noise, of [`QUERY_SIZE`] features. The
//! right answer to a query is the real key whose feature `i` is largest, so the right
//! attention puts all its weight on that one key, and how far the weights are from it
//! is measured directly: their entropy, and whether their largest entry is the right
//! key.

use attention::Mask;
use engine::Tensor;

/// The size of a query: one feature per question that can be asked, plus noise.
pub const QUERY_SIZE: usize = 16;
/// The number of features of a key.
pub const KEY_SIZE: usize = 16;
/// Queries per example.
pub const QUERIES: usize = 4;
/// Key slots per example; the last ones may be padding.
pub const KEYS: usize = 12;
/// The fewest real keys of an example.
pub const MIN_LEN: usize = 6;

/// A batch of the task.
#[derive(Debug)]
pub struct Batch {
    /// `[B, Q, QUERY_SIZE]`: query `i` is `eᵢ` (for the feature it asks about) plus
    /// noise of standard deviation 0.1.
    pub queries: Tensor,
    /// `[B, K, KEY_SIZE]`: standard normal features, real up to `lens`.
    pub keys: Tensor,
    /// `[B]`: the real keys of each example, 6 to 12.
    pub lens: Tensor,
    /// For every example and query, the index of the right key.
    pub targets: Vec<usize>,
    /// `[B, Q, K]`: 1 at the right key of each query, 0 elsewhere.
    pub one_hot: Tensor,
}

impl Batch {
    /// `batch` examples drawn from this thread's seeded generator; the queries ask
    /// about features `0..QUERIES` in a random order.
    pub fn draw(batch: usize) -> Batch {
        let keys = Tensor::randn([batch, KEYS, KEY_SIZE]);
        let lens: Vec<f32> = Tensor::rand([batch], MIN_LEN as f32, KEYS as f32 + 1.0)
            .to_vec()
            .iter()
            .map(|l| l.floor().min(KEYS as f32))
            .collect();
        let asked: Vec<usize> = Tensor::rand([batch * QUERIES], 0.0, QUERIES as f32)
            .to_vec()
            .iter()
            .map(|f| (*f as usize).min(QUERIES - 1))
            .collect();
        let mut queries = Tensor::randn([batch, QUERIES, QUERY_SIZE]).to_vec();
        for (i, q) in queries.iter_mut().enumerate() {
            let (row, feature) = (i / QUERY_SIZE, i % QUERY_SIZE);
            *q = 0.1 * *q + if asked[row] == feature { 1.0 } else { 0.0 };
        }
        let k = keys.to_vec();
        let mut targets = Vec::with_capacity(batch * QUERIES);
        let mut one_hot = vec![0.0; batch * QUERIES * KEYS];
        for b in 0..batch {
            for i in 0..QUERIES {
                let feature = asked[b * QUERIES + i];
                let value = |j: usize| k[(b * KEYS + j) * KEY_SIZE + feature];
                let best = (0..lens[b] as usize)
                    .max_by(|&x, &y| value(x).total_cmp(&value(y)))
                    .expect("at least one real key");
                targets.push(best);
                one_hot[(b * QUERIES + i) * KEYS + best] = 1.0;
            }
        }
        Batch {
            queries: Tensor::from_vec(queries, [batch, QUERIES, QUERY_SIZE]),
            keys,
            lens: Tensor::from_vec(lens, [batch]),
            targets,
            one_hot: Tensor::from_vec(one_hot, [batch, QUERIES, KEYS]),
        }
    }

    /// The padding mask of the batch: each example's keys after its length are not
    /// real.
    pub fn mask(&self) -> Mask {
        Mask::valid_lens(&self.lens)
    }
}

/// How far the weights `[B, Q, K]` of a batch are from the right alignment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alignment {
    /// The mean entropy of a query's weights divided by its largest possible value,
    /// `ln(len)`: 1 for uniform weights over the real keys, 0 for all weight on one.
    pub entropy: f32,
    /// The share of queries whose largest weight is on the right key.
    pub accuracy: f32,
}

/// The [`Alignment`] of `weights: [B, Q, K]` on `batch`.
pub fn alignment(weights: &Tensor, batch: &Batch) -> Alignment {
    let w = weights.to_vec();
    let lens = batch.lens.to_vec();
    let (mut entropy, mut right) = (0.0f64, 0usize);
    for (row, weights) in w.chunks(KEYS).enumerate() {
        let len = lens[row / QUERIES] as usize;
        let h: f64 = weights[..len]
            .iter()
            .filter(|&&p| p > 0.0)
            .map(|&p| -(p as f64) * libm::log(p as f64))
            .sum();
        entropy += h / libm::log(len as f64);
        let best = (0..len)
            .max_by(|&x, &y| weights[x].total_cmp(&weights[y]))
            .expect("a real key");
        right += usize::from(best == batch.targets[row]);
    }
    let rows = batch.targets.len();
    Alignment {
        entropy: (entropy / rows as f64) as f32,
        accuracy: right as f32 / rows as f32,
    }
}
