//! What the character model's loss should be compared with: the loss of models that
//! know only how often each character occurs (unigram), or only which character came
//! just before (bigram), counted on the training text and scored on the validation
//! text, in nats per character like the model's.

// ANCHOR: counts
/// Character counts on a training text, turned into probabilities with add-α
/// smoothing: every count is raised by `alpha` before normalising, so a character
/// (or a pair) never seen in training keeps a probability above zero and a loss below
/// infinity. `alpha = 1` is add-one (Laplace's rule); `alpha = 0` gives the counts'
/// own frequencies, the maximum-likelihood estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct CharCounts {
    vocab: usize,
    alpha: f64,
    /// `unigram[c]`: how often `c` occurs.
    unigram: Vec<u64>,
    /// `bigram[p * vocab + c]`: how often `c` follows `p`.
    bigram: Vec<u64>,
    /// `after[p]`: how many characters follow `p` (its count, less one if it ends the
    /// text).
    after: Vec<u64>,
}

impl CharCounts {
    /// Counts the ids of `train` (each below `vocab`).
    ///
    /// # Panics
    /// When an id is not below `vocab`, or `alpha` is negative.
    pub fn new(train: &[usize], vocab: usize, alpha: f64) -> CharCounts {
        assert!(alpha >= 0.0, "CharCounts: alpha {alpha} is negative");
        let mut counts = CharCounts {
            vocab,
            alpha,
            unigram: vec![0; vocab],
            bigram: vec![0; vocab * vocab],
            after: vec![0; vocab],
        };
        for &c in train {
            assert!(c < vocab, "CharCounts: id {c} is not below {vocab}");
            counts.unigram[c] += 1;
        }
        for pair in train.windows(2) {
            counts.bigram[pair[0] * vocab + pair[1]] += 1;
            counts.after[pair[0]] += 1;
        }
        counts
    }

    /// `P(c) = (count(c) + α) / (N + α · V)`.
    pub fn unigram_probability(&self, c: usize) -> f64 {
        let total: u64 = self.unigram.iter().sum();
        (self.unigram[c] as f64 + self.alpha)
            / (total as f64 + self.alpha * self.vocab as f64)
    }

    /// `P(c | p) = (count(p, c) + α) / (count(p, ·) + α · V)`.
    pub fn bigram_probability(&self, previous: usize, c: usize) -> f64 {
        (self.bigram[previous * self.vocab + c] as f64 + self.alpha)
            / (self.after[previous] as f64 + self.alpha * self.vocab as f64)
    }

    /// The unigram model's loss on `targets`: the mean of `−ln P(c)`, nats per
    /// character.
    pub fn unigram_loss(&self, targets: &[usize]) -> f64 {
        let total: f64 = targets
            .iter()
            .map(|&c| -self.unigram_probability(c).ln())
            .sum();
        total / targets.len() as f64
    }

    /// The bigram model's loss on `(previous, target)` pairs: the mean of
    /// `−ln P(target | previous)`.
    pub fn bigram_loss(&self, pairs: &[(usize, usize)]) -> f64 {
        let total: f64 = pairs
            .iter()
            .map(|&(p, c)| -self.bigram_probability(p, c).ln())
            .sum();
        total / pairs.len() as f64
    }

    /// How many of `pairs` never occur in the training text: without smoothing
    /// (`alpha = 0`) each would cost an infinite loss.
    pub fn unseen(&self, pairs: &[(usize, usize)]) -> usize {
        pairs
            .iter()
            .filter(|&&(p, c)| self.bigram[p * self.vocab + c] == 0)
            .count()
    }
}
// ANCHOR_END: counts

/// The consecutive pairs of `ids`: `(ids[i], ids[i + 1])`.
pub fn pairs(ids: &[usize]) -> Vec<(usize, usize)> {
    ids.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The `(input, target)` pairs of every position of `batches` (each `[B, T]` inputs
/// and targets, ids as `f32`): what the model's validation loss averages over, and
/// what a bigram model would predict each target from.
pub fn batch_pairs(
    batches: &[(engine::Tensor, engine::Tensor)],
) -> Vec<(usize, usize)> {
    batches
        .iter()
        .flat_map(|(x, y)| {
            x.to_vec()
                .into_iter()
                .zip(y.to_vec())
                .map(|(p, c)| (p as usize, c as usize))
                .collect::<Vec<_>>()
        })
        .collect()
}
