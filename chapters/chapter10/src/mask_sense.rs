//! Pitfall 5: masks the wrong way round.
//!
//! Three mistakes that give weights of the right shape, with no error and no NaN, and
//! the check that catches each. The example is self-attention over a padded batch,
//! scores `[B, T, T]` with `T = 4` tokens and lengths `[3, 2]`: the score matrix is
//! square, so no shape check can tell the query axis from the key axis.
//!
//! 1. **The padding mask in the other sense.** PyTorch has both conventions:
//!    `nn.MultiheadAttention`'s `key_padding_mask` is True where a key is *padding*
//!    (to ignore), while the articles' `masked_fill(mask == 0, …)` and a boolean
//!    `attn_mask` of `F.scaled_dot_product_attention` keep where the mask is 1.
//!    [`Mask::key_padding`] reads 1 as a real key; [`Mask::key_padding_ignore`] reads
//!    PyTorch's `key_padding_mask` as it is. Pass PyTorch's mask to the first, and
//!    every real token is hidden while the padding is visible: the weights land on
//!    padding only ([`pytorch_mask_as_keep`]). [`no_weight_on_padding`] catches it;
//!    [`rows_sum_to_one`] does not, the rows still sum to 1. (A full-length example
//!    has no padding, so it becomes a fully masked row: pitfall 4.)
//! 2. **The mask applied after the softmax**: `softmax(scores) * keep`. The padding
//!    gets no weight, but it took its share of the softmax first, so the rows sum to
//!    less than 1 ([`mask_after_softmax`]). [`rows_sum_to_one`] catches it;
//!    [`no_weight_on_padding`] does not. (Dividing by the row sum afterwards gives
//!    the masked softmax back, [`mask_after_softmax_renormalised`]: the mistake is
//!    the missing normalisation, not the order as such.)
//! 3. **The softmax over the query axis**: `F.softmax(scores, dim=1)` on `[B, Q, K]`
//!    instead of `dim=-1`. Each *column* sums to 1 ([`columns_sum_to_one`] passes),
//!    the rows do not, and every padding column gets `1/Q` from each query, since its
//!    filled scores are all equal ([`softmax_over_queries`]). Both checks catch it.
//!
//! Run both checks: each of the first two mistakes passes one of them.

use std::fmt;

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

/// Examples in the batch.
pub const BATCH: usize = 2;
/// Tokens per example (padded length): queries and keys alike.
pub const TOKENS: usize = 4;
/// The real length of each example.
pub const LENGTHS: [usize; BATCH] = [3, 2];
/// The fill of the by-hand versions, the article's.
pub const FILL: f32 = -1e9;

/// Self-attention scores of the padded batch, `[B, T, T]`, drawn from seed 5.
pub fn scores() -> Tensor {
    engine::manual_seed(5);
    Tensor::randn([BATCH, TOKENS, TOKENS])
}

/// The padding mask as PyTorch's `key_padding_mask` writes it, `[B, T]`: 1 (True) for
/// a padding key, to ignore.
pub fn key_padding_mask() -> Tensor {
    let values = LENGTHS
        .iter()
        .flat_map(|&len| (0..TOKENS).map(move |k| f32::from(u8::from(k >= len))))
        .collect();
    Tensor::from_vec(values, [BATCH, TOKENS])
}

/// The same positions in the library's sense, `[B, T]`: 1 for a real key.
pub fn keep_mask() -> Tensor {
    1.0 - &key_padding_mask()
}

// ANCHOR: sense
/// Wrong: PyTorch's `key_padding_mask` (1 = ignore) passed where 1 means keep.
pub fn pytorch_mask_as_keep(scores: &Tensor, key_padding_mask: &Tensor) -> Tensor {
    masked_softmax(scores, &Mask::key_padding(key_padding_mask), Fill::Safe)
}

/// Right: the same mask through the constructor that reads PyTorch's sense.
pub fn pytorch_mask_as_ignore(scores: &Tensor, key_padding_mask: &Tensor) -> Tensor {
    masked_softmax(
        scores,
        &Mask::key_padding_ignore(key_padding_mask),
        Fill::Safe,
    )
}
// ANCHOR_END: sense

// ANCHOR: order
/// Wrong: the softmax over every key, then the padding multiplied away.
pub fn mask_after_softmax(scores: &Tensor, keep: &Tensor) -> Tensor {
    &scores.softmax(-1) * &keep.unsqueeze(1)
}

/// Right: the mask before the softmax, which then normalises over the real keys only.
pub fn mask_before_softmax(scores: &Tensor, keep: &Tensor) -> Tensor {
    masked_softmax(scores, &Mask::key_padding(keep), Fill::Safe)
}

/// The after-the-softmax version divided by its row sums: the masked softmax again.
pub fn mask_after_softmax_renormalised(scores: &Tensor, keep: &Tensor) -> Tensor {
    let kept = mask_after_softmax(scores, keep);
    &kept / &kept.sum_dim_keepdim(-1)
}
// ANCHOR_END: order

// ANCHOR: axis
/// Wrong: `scores.masked_fill(mask == 0, -1e9).softmax(dim=1)`, over the queries.
pub fn softmax_over_queries(scores: &Tensor, keep: &Tensor) -> Tensor {
    let padding = keep.unsqueeze(1).eq_mask(&Tensor::scalar(0.0));
    scores.masked_fill(&padding, FILL).softmax(1)
}

/// Right: the same line with `softmax(dim=-1)`, over the keys.
pub fn softmax_over_keys(scores: &Tensor, keep: &Tensor) -> Tensor {
    let padding = keep.unsqueeze(1).eq_mask(&Tensor::scalar(0.0));
    scores.masked_fill(&padding, FILL).softmax(-1)
}
// ANCHOR_END: axis

/// What a check found: whether it passed, and the numbers it looked at.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The check's name.
    pub name: &'static str,
    /// Whether every number is within `1e-5` of what it should be.
    pub passed: bool,
    /// The numbers checked, one per row (or per column), in order.
    pub values: Vec<f32>,
    /// What the numbers are.
    pub what: &'static str,
}

impl fmt::Display for Check {
    /// `rows_sum_to_one: FAILED, row sums: 0.9712 0.8841 …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed { "passed" } else { "FAILED" };
        let values: Vec<String> =
            self.values.iter().map(|v| format!("{v:.4}")).collect();
        write!(
            f,
            "{}: {verdict}, {}: {}",
            self.name,
            self.what,
            values.join(" ")
        )
    }
}

/// The check's tolerance.
const TOL: f32 = 1e-5;

// ANCHOR: checks
/// Every row of `weights` (`[..., Q, K]`) sums to 1: the weights are a distribution
/// over the keys of each query.
pub fn rows_sum_to_one(weights: &Tensor) -> Check {
    let values = weights.sum_dim(-1).to_vec();
    Check {
        name: "rows_sum_to_one",
        passed: values.iter().all(|s| (s - 1.0).abs() <= TOL),
        values,
        what: "row sums",
    }
}

/// Every column of `weights` (`[B, Q, K]`) sums to 1: what a softmax over the queries
/// gives, and what a softmax over the keys does not.
pub fn columns_sum_to_one(weights: &Tensor) -> Check {
    let values = weights.sum_dim(-2).to_vec();
    Check {
        name: "columns_sum_to_one",
        passed: values.iter().all(|s| (s - 1.0).abs() <= TOL),
        values,
        what: "column sums",
    }
}

/// No query gives weight to a padding key: the weight each row of `weights`
/// (`[B, Q, K]`) puts on the keys that PyTorch's `key_padding_mask` (`[B, K]`, 1 =
/// padding) marks must be 0.
pub fn no_weight_on_padding(weights: &Tensor, key_padding_mask: &Tensor) -> Check {
    let on_padding = weights * &key_padding_mask.unsqueeze(1);
    let values = on_padding.sum_dim(-1).to_vec();
    Check {
        name: "no_weight_on_padding",
        passed: values.iter().all(|s| s.abs() <= TOL),
        values,
        what: "weight on padding per row",
    }
}
// ANCHOR_END: checks

/// One mistake: its name, the weights it gives and the weights it should give.
#[derive(Clone, Debug)]
pub struct Pitfall {
    /// What was done wrong.
    pub name: &'static str,
    /// The weights of the wrong version, `[B, T, T]`.
    pub wrong: Tensor,
    /// The weights of the right version, `[B, T, T]`.
    pub right: Tensor,
}

impl Pitfall {
    /// Both checks on the wrong version, then on the right one:
    /// `[rows_sum_to_one, no_weight_on_padding]` each.
    pub fn checks(&self) -> [[Check; 2]; 2] {
        let padding = key_padding_mask();
        [&self.wrong, &self.right]
            .map(|w| [rows_sum_to_one(w), no_weight_on_padding(w, &padding)])
    }
}

// ANCHOR: pitfalls
/// The three mistakes on the example batch, each with its fix.
pub fn pitfalls() -> [Pitfall; 3] {
    let (scores, padding, keep) = (scores(), key_padding_mask(), keep_mask());
    [
        Pitfall {
            name: "PyTorch's padding mask read as keep",
            wrong: pytorch_mask_as_keep(&scores, &padding),
            right: pytorch_mask_as_ignore(&scores, &padding),
        },
        Pitfall {
            name: "mask applied after the softmax",
            wrong: mask_after_softmax(&scores, &keep),
            right: mask_before_softmax(&scores, &keep),
        },
        Pitfall {
            name: "softmax over the queries",
            wrong: softmax_over_queries(&scores, &keep),
            right: softmax_over_keys(&scores, &keep),
        },
    ]
}
// ANCHOR_END: pitfalls
