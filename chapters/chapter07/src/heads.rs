//! Splitting queries, keys and values into heads and merging the heads back, with the
//! engine's `reshape` and `permute`; the valid lengths repeated once per head; and
//! d2l's multi-head attention written out one op at a time ([`MultiHeadByHand`]).

use attention::{Fill, Mask, masked_softmax, scaled_dot_product_attention};
use engine::Tensor;
use engine::nn::{Linear, StateDict};

use lesson::Trace;

// ANCHOR: split_heads
/// `[B, T, H·d] → [B·H, T, d]`: the features of every token are cut into `num_heads`
/// slices of `d`, and head `h` of example `b` becomes row `b·H + h` of a larger batch
/// (d2l's `transpose_qkv`).
///
/// # Panics
/// When `x` is not `[B, T, features]` with `features` divisible by `num_heads`.
#[track_caller]
pub fn split_heads(x: &Tensor, num_heads: usize) -> Tensor {
    assert!(
        x.rank() == 3 && num_heads > 0 && x.size(2).is_multiple_of(num_heads),
        "split_heads: x must be [B, T, H·d] with H = {num_heads} dividing the \
         features, found {:?}",
        x.shape()
    );
    let (b, t, d) = (x.size(0), x.size(1), x.size(2) / num_heads);
    x.reshape([b, t, num_heads, d]) //  [B, T, H, d]: cut each token's features
        .permute([0, 2, 1, 3]) //        [B, H, T, d]: heads before tokens
        .reshape([b * num_heads, t, d]) // [B·H, T, d]: fold the heads into the batch
}
// ANCHOR_END: split_heads

// ANCHOR: merge_heads
/// The inverse of [`split_heads`], `[B·H, T, d] → [B, T, H·d]`: the heads of each
/// token are concatenated again (d2l's `transpose_output`).
///
/// # Panics
/// When `x` is not `[B·H, T, d]` with `num_heads` dividing its first dimension.
#[track_caller]
pub fn merge_heads(x: &Tensor, num_heads: usize) -> Tensor {
    assert!(
        x.rank() == 3 && num_heads > 0 && x.size(0).is_multiple_of(num_heads),
        "merge_heads: x must be [B·H, T, d] with H = {num_heads} dividing its first \
         dimension, found {:?}",
        x.shape()
    );
    let (b, t, d) = (x.size(0) / num_heads, x.size(1), x.size(2));
    x.reshape([b, num_heads, t, d]) //  [B, H, T, d]: unfold the batch
        .permute([0, 2, 1, 3]) //        [B, T, H, d]: tokens before heads
        .reshape([b, t, num_heads * d]) // [B, T, H·d]: concatenate the heads
}
// ANCHOR_END: merge_heads

// ANCHOR: split_without_permute
/// **A bug, kept for the page and the tests**: `[B, T, H·d] → [B·H, T, d]` by one
/// `reshape`, without the `permute`. The shape is right; the rows are not heads: row
/// 0 holds the first `T` slices of `d` features read in memory order, which are the
/// heads of the first tokens, not head 0 of every token.
pub fn split_without_permute(x: &Tensor, num_heads: usize) -> Tensor {
    let (b, t, d) = (x.size(0), x.size(1), x.size(2) / num_heads);
    x.reshape([b * num_heads, t, d])
}
// ANCHOR_END: split_without_permute

/// The inverse of [`split_without_permute`]: `[B·H, T, d] → [B, T, H·d]` by one
/// `reshape`.
pub fn merge_without_permute(x: &Tensor, num_heads: usize) -> Tensor {
    let (b, t, d) = (x.size(0) / num_heads, x.size(1), x.size(2));
    x.reshape([b, t, num_heads * d])
}

// ANCHOR: lens_order
/// How one valid length per example, `[B]`, becomes one per row of the folded batch,
/// `[B·H]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LensOrder {
    /// `[a, b] → [a, a, a, b, b, b]` (for `H = 3`): each example's length `H` times
    /// in a row, matching rows `b·H .. b·H + H`. Right.
    Interleaved,
    /// `[a, b] → [a, b, a, b, a, b]`: the whole list `H` times. Wrong: row `b·H + h`
    /// gets the length of example `(b·H + h) mod B`.
    Tiled,
}

impl LensOrder {
    /// The lengths of the `B·H` rows.
    pub fn repeat(self, lens: &Tensor, num_heads: usize) -> Tensor {
        match self {
            LensOrder::Interleaved => lens.repeat_interleave(num_heads, 0),
            LensOrder::Tiled => Tensor::concat(&vec![lens.clone(); num_heads], 0),
        }
    }

    /// The expression, as the trace prints it.
    pub fn expression(self) -> &'static str {
        match self {
            LensOrder::Interleaved => "lens.repeat_interleave(H, 0)",
            LensOrder::Tiled => "concat([lens; H], 0)",
        }
    }
}
// ANCHOR_END: lens_order

/// What [`MultiHeadByHand::forward`] returns.
#[derive(Clone, Debug)]
pub struct Attended {
    /// `[B, Q, num_hiddens]`.
    pub output: Tensor,
    /// The attention weights of every head, folded as the computation holds them:
    /// `[B·H, Q, K]`, row `b·H + h` for head `h` of example `b`.
    pub weights: Tensor,
}

/// d2l's multi-head attention written out with the engine's ops: the same computation
/// as [`attention::MultiHeadAttention`] (without dropout), with the shape of every
/// intermediate tensor recorded in a [`Trace`].
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `lens` | `[B]`, one valid length per example |
/// | output | `[B, Q, num_hiddens]` |
#[derive(Debug)]
pub struct MultiHeadByHand {
    num_heads: usize,
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    w_o: Linear,
}

// ANCHOR: by_hand_from_state
impl MultiHeadByHand {
    /// The four projections, taken by name from a state such as
    /// `MultiHeadAttention::state_dict()`: `W_q`, `W_k`, `W_v` and `W_o`, each a
    /// `.weight` and, when the module has them, a `.bias`.
    ///
    /// # Panics
    /// When a weight is missing.
    pub fn from_state_dict(state: &StateDict, num_heads: usize) -> MultiHeadByHand {
        let layer = |name: &str| {
            let weight = state
                .get(&format!("{name}.weight"))
                .unwrap_or_else(|| panic!("the state has no {name}.weight"));
            Linear::from_weights(weight, state.get(&format!("{name}.bias")))
        };
        MultiHeadByHand {
            num_heads,
            w_q: layer("W_q"),
            w_k: layer("W_k"),
            w_v: layer("W_v"),
            w_o: layer("W_o"),
        }
    }
}
// ANCHOR_END: by_hand_from_state

impl MultiHeadByHand {
    // ANCHOR: by_hand_forward
    /// Projects, splits into heads, attends in every head with the lengths repeated
    /// in `order`, merges the heads and projects again.
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        lens: &Tensor,
        order: LensOrder,
        trace: &mut Trace,
    ) -> Attended {
        let h = self.num_heads;
        trace.record("queries", "[B, Q, q_size]", queries);
        trace.record("keys", "[B, K, k_size]", keys);
        trace.record("values", "[B, K, v_size]", values);

        // 1. Project: one matrix per role computes every head at once.
        let q = self.w_q.forward(queries);
        trace.record("q = W_q(queries)", "[B, Q, H·d]", &q);
        let k = self.w_k.forward(keys);
        trace.record("k = W_k(keys)", "[B, K, H·d]", &k);
        let v = self.w_v.forward(values);
        trace.record("v = W_v(values)", "[B, K, H·d]", &v);

        // 2. Split the queries into heads, one op at a time (split_heads does the
        //    same).
        let (b, n_q, d) = (q.size(0), q.size(1), q.size(2) / h);
        let q = q.reshape([b, n_q, h, d]);
        trace.record("q.reshape(B, Q, H, d)", "[B, Q, H, d]", &q);
        let q = q.permute([0, 2, 1, 3]);
        trace.record("q.permute(0, 2, 1, 3)", "[B, H, Q, d]", &q);
        let q = q.reshape([b * h, n_q, d]);
        trace.record("q.reshape(B·H, Q, d)", "[B·H, Q, d]", &q);
        let k = split_heads(&k, h);
        trace.record("split_heads(k)", "[B·H, K, d]", &k);
        let v = split_heads(&v, h);
        trace.record("split_heads(v)", "[B·H, K, d]", &v);

        // 3. One valid length per row of the folded batch.
        let head_lens = order.repeat(lens, h);
        trace.record(order.expression(), "[B·H]", &head_lens);

        // 4. Scaled dot-product attention in every row at once: chapter 6, unchanged.
        let scores = q.matmul(&k.transpose(-2, -1)) * (1.0 / (d as f32).sqrt());
        trace.record("q kᵀ / √d", "[B·H, Q, K]", &scores);
        let weights =
            masked_softmax(&scores, &Mask::valid_lens(&head_lens), Fill::Safe);
        trace.record("weights", "[B·H, Q, K]", &weights);
        let heads = weights.matmul(&v);
        trace.record("heads = weights v", "[B·H, Q, d]", &heads);

        // 5. Merge the heads (merge_heads does the same) and mix them with W_o.
        let merged = heads.reshape([b, h, n_q, d]);
        trace.record("heads.reshape(B, H, Q, d)", "[B, H, Q, d]", &merged);
        let merged = merged.permute([0, 2, 1, 3]);
        trace.record("heads.permute(0, 2, 1, 3)", "[B, Q, H, d]", &merged);
        let merged = merged.reshape([b, n_q, h * d]);
        trace.record("heads.reshape(B, Q, H·d)", "[B, Q, H·d]", &merged);
        let output = self.w_o.forward(&merged);
        trace.record("output = W_o(heads)", "[B, Q, num_hiddens]", &output);
        Attended { output, weights }
    }
    // ANCHOR_END: by_hand_forward
}

/// A way to split `[B, T, H·d]` into heads or to merge them back (`fn(x,
/// num_heads)`).
pub type Reshaper = fn(&Tensor, usize) -> Tensor;

impl MultiHeadByHand {
    // ANCHOR: forward_split_by
    /// [`forward`](Self::forward)'s computation, lengths interleaved, with the split
    /// and the merge given: [`split_heads`] and [`merge_heads`] give `forward`'s
    /// output, and [`split_without_permute`] with [`merge_without_permute`] show what
    /// the missing `permute` does.
    pub fn forward_split_by(
        &self,
        split: Reshaper,
        merge: Reshaper,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        lens: &Tensor,
    ) -> Tensor {
        let h = self.num_heads;
        let q = split(&self.w_q.forward(queries), h);
        let k = split(&self.w_k.forward(keys), h);
        let v = split(&self.w_v.forward(values), h);
        let mask = Mask::valid_lens(&lens.repeat_interleave(h, 0));
        let (heads, _) = scaled_dot_product_attention(&q, &k, &v, &mask);
        self.w_o.forward(&merge(&heads, h))
    }
    // ANCHOR_END: forward_split_by
}
