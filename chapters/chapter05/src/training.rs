//! A toy task that additive attention can learn, to see what training does to weights
//! that start almost uniform.

use attention::{AdditiveAttention, AdditiveAttentionConfig, AttentionWeights, Mask};
use engine::Tensor;
use engine::nn::Module;
use engine::optim::{Adam, AdamConfig, Optimizer};

use crate::init::{Init, initialise};

/// The number of features of a key; the first [`QUERIES`] of them can be asked about.
pub const KEY_SIZE: usize = 5;
/// The number of queries per example, each a one-hot vector asking about one feature.
pub const QUERIES: usize = 3;
/// The number of key slots per example (the last ones may be padding).
pub const KEYS: usize = 8;
/// The hidden size of the score network.
pub const HIDDENS: usize = 8;

/// A batch of the task "which key has the largest feature `i`?": query `i` is the
/// one-hot vector `eᵢ` (`q_size = 3`), the keys are random vectors with 5 features,
/// of which only the first `lens[b]` are real, and the answer to query `i` is the
/// real key whose feature `i` is largest. The values are one-hot positions, so the
/// output of attention *is* the weights, and a loss on the output trains them.
#[derive(Debug)]
pub struct ToyBatch {
    /// `[B, 3, 3]`: one one-hot query per feature that can be asked about.
    pub queries: Tensor,
    /// `[B, 8, 5]`: random keys, real up to `lens`.
    pub keys: Tensor,
    /// `[B, 8, 8]`: value `j` is the one-hot vector `eⱼ`.
    pub values: Tensor,
    /// `[B]`: how many keys of each example are real (5 to 8).
    pub lens: Tensor,
    /// `[B, 3, 8]`: 1 at the key each query should attend to.
    pub targets: Tensor,
}

impl ToyBatch {
    /// `batch` examples drawn from this thread's seeded generator.
    pub fn draw(batch: usize) -> ToyBatch {
        let queries = eye(QUERIES).expand([batch, QUERIES, QUERIES]);
        let values = eye(KEYS).expand([batch, KEYS, KEYS]);
        let keys = Tensor::randn([batch, KEYS, KEY_SIZE]);
        // Lengths 5..=8: floor of uniform [5, 9).
        let lens: Vec<f32> = Tensor::rand([batch], 5.0, 9.0)
            .to_vec()
            .iter()
            .map(|l| l.floor().min(KEYS as f32))
            .collect();
        let k = keys.to_vec();
        let mut targets = vec![0.0; batch * QUERIES * KEYS];
        for b in 0..batch {
            for i in 0..QUERIES {
                let feature = |j: usize| k[(b * KEYS + j) * KEY_SIZE + i];
                let best = (0..lens[b] as usize)
                    .max_by(|&x, &y| feature(x).total_cmp(&feature(y)))
                    .expect("at least one real key");
                targets[(b * QUERIES + i) * KEYS + best] = 1.0;
            }
        }
        ToyBatch {
            queries,
            keys,
            values,
            lens: Tensor::from_vec(lens, [batch]),
            targets: Tensor::from_vec(targets, [batch, QUERIES, KEYS]),
        }
    }

    /// The mask of the real keys.
    pub fn mask(&self) -> Mask {
        Mask::valid_lens(&self.lens)
    }
}

/// The identity matrix `[1, n, n]`.
fn eye(n: usize) -> Tensor {
    let values = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    Tensor::from_vec(values, [1, n, n])
}

/// The module the toy task trains: d2l's form, `q_size = 3`, `k_size = 5`, `h = 8`.
pub fn toy_model() -> AdditiveAttention {
    AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: QUERIES,
        key_size: KEY_SIZE,
        num_hiddens: HIDDENS,
        ..Default::default()
    })
}

// ANCHOR: toy_loss
/// The weights of `model` on `batch` under `mask`, `[B, 3, 8]`, and the loss
/// `−mean log α_target`: the cross-entropy of the weights against the right key. With
/// one-hot values the output of `forward` is the weights, in the graph.
pub fn toy_loss(
    model: &AdditiveAttention,
    batch: &ToyBatch,
    mask: &Mask,
) -> (Tensor, Tensor) {
    let weights = model.forward(&batch.queries, &batch.keys, &batch.values, mask);
    let on_target = (&weights * &batch.targets).sum_dim(-1);
    let loss = on_target.log().mean().neg();
    (weights, loss)
}
// ANCHOR_END: toy_loss

/// How a model does on a batch: the loss, the fraction of queries whose largest
/// weight is on the right key, and the mean over queries of the entropy of the
/// weights divided by `log(len)` (1 when uniform over the real keys).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToyScore {
    /// `−mean log α_target`.
    pub loss: f32,
    /// Fraction of queries whose largest weight is on the target key.
    pub accuracy: f32,
    /// Mean entropy of the weights relative to `log` of the number of real keys.
    pub entropy_ratio: f32,
    /// Mean weight on padding keys (0 when they are masked).
    pub padding_weight: f32,
}

/// Scores `model` on `batch` under `mask` (without recording gradients).
pub fn toy_score(
    model: &AdditiveAttention,
    batch: &ToyBatch,
    mask: &Mask,
) -> ToyScore {
    let (weights, loss) = engine::no_grad(|| toy_loss(model, batch, mask));
    let (w, t, lens) = (
        weights.to_vec(),
        batch.targets.to_vec(),
        batch.lens.to_vec(),
    );
    let most_attended = weights.argmax(-1).to_vec(); // one key per query
    let rows = w.len() / KEYS;
    let (mut hits, mut entropy, mut padding) = (0usize, 0.0f64, 0.0f64);
    for (r, (row, target)) in w.chunks(KEYS).zip(t.chunks(KEYS)).enumerate() {
        let len = lens[r / QUERIES] as usize;
        hits += usize::from(target[most_attended[r] as usize] == 1.0);
        let h: f64 = row
            .iter()
            .filter(|&&a| a > 0.0)
            .map(|&a| -f64::from(a) * f64::from(a).ln())
            .sum();
        entropy += h / (len as f64).ln();
        padding += row[len..].iter().map(|&a| f64::from(a)).sum::<f64>();
    }
    ToyScore {
        loss: loss.item(),
        accuracy: hits as f32 / rows as f32,
        entropy_ratio: (entropy / rows as f64) as f32,
        padding_weight: (padding / rows as f64) as f32,
    }
}

/// The number of training steps of [`toy_run`].
pub const STEPS: usize = 100;
/// How often [`toy_run`] scores the model on the held-out batch.
pub const EVAL_EVERY: usize = 25;

/// Everything the page shows of one training run on the toy task.
#[derive(Debug)]
pub struct ToyRun {
    /// The held-out loss at steps 0, 25, 50, …, [`STEPS`].
    pub curve: Vec<(usize, f32)>,
    /// The freshly initialised model on the held-out batch.
    pub before: ToyScore,
    /// The trained model on the held-out batch.
    pub after: ToyScore,
    /// The trained model on the held-out batch with no mask: padding keys compete.
    pub after_unmasked: ToyScore,
    /// Which held-out example the weights are shown for: the first with padding.
    pub example: usize,
    /// How many keys of that example are real.
    pub len: usize,
    /// `[8, 5]`: that example's keys.
    pub keys: Tensor,
    /// `[3, 8]`: its weights before training.
    pub weights_before: Tensor,
    /// `[3, 8]`: its weights after training.
    pub weights_after: Tensor,
}

// ANCHOR: toy_run
/// Seeds, builds the model with the initialisation `scheme`, draws a held-out batch
/// of 64 examples, and trains for [`STEPS`] steps of Adam (learning rate 0.1) on
/// fresh batches of 16 examples, scoring on the held-out batch every [`EVAL_EVERY`]
/// steps.
pub fn toy_run(scheme: Init) -> ToyRun {
    engine::manual_seed(5);
    let model = toy_model();
    initialise(&model, scheme);
    let held_out = ToyBatch::draw(64);
    let mask = held_out.mask();
    let lens = held_out.lens.to_vec();
    let example = lens.iter().position(|&l| l < KEYS as f32).unwrap_or(0);
    let shown = |m: &AdditiveAttention| {
        let weights = m.last_attention_weights().expect("scored");
        weights.narrow(0, example, 1).squeeze(0)
    };
    let before = toy_score(&model, &held_out, &mask);
    let weights_before = shown(&model);

    let config = AdamConfig {
        lr: 0.1,
        ..Default::default()
    };
    let mut optimizer = Adam::new(model.parameters(), config);
    let mut curve = vec![(0, before.loss)];
    for step in 1..=STEPS {
        let batch = ToyBatch::draw(16);
        let (_, loss) = toy_loss(&model, &batch, &batch.mask());
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        if step % EVAL_EVERY == 0 {
            curve.push((step, toy_score(&model, &held_out, &mask).loss));
        }
    }

    let after = toy_score(&model, &held_out, &mask);
    let weights_after = shown(&model);
    let after_unmasked = toy_score(&model, &held_out, &Mask::none());
    ToyRun {
        curve,
        before,
        after,
        after_unmasked,
        example,
        len: lens[example] as usize,
        keys: held_out.keys.narrow(0, example, 1).squeeze(0),
        weights_before,
        weights_after,
    }
}
// ANCHOR_END: toy_run
