// ANCHOR: all
//! Reference solutions to the chapter 4 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::Mask;
use engine::Tensor;

// ANCHOR: sliding_window_keep
/// Exercise 1. A sliding-window (local) keep mask `[len, len]`: query `i` may see key
/// `j` when `|i − j| ≤ window`, that is `j ≤ i + window` (on or below the diagonal
/// `window`, `tril`) and `j ≥ i − window` (on or above the diagonal `−window`,
/// `triu`): a band of a matrix of ones.
pub fn sliding_window_keep(len: usize, window: usize) -> Tensor {
    let w = window as i64;
    Tensor::ones([len, len]).tril(w).triu(-w)
}
// ANCHOR_END: sliding_window_keep

// ANCHOR: key_padding_from_ids
/// Exercise 2. The key-padding mask `[B, K]` of token ids `ids: [B, K]`: 1 where the
/// id is a real token, 0 where it equals `pad_id`. Works for padding on either side.
pub fn key_padding_from_ids(ids: &Tensor, pad_id: f32) -> Tensor {
    1.0 - ids.eq_mask(&Tensor::scalar(pad_id))
}
// ANCHOR_END: key_padding_from_ids

// ANCHOR: prefix_lm_mask
/// Exercise 3. A prefix-LM mask: every query sees the whole prefix of `prefix_len`
/// tokens, and beyond it causal order; keys at or past `lens[b]` are padding. "The
/// prefix *or* the past" is itself a prefix of the keys, `0..max(q + 1, prefix_len)`:
/// a valid length per query, which `&` then combines with the padding.
pub fn prefix_lm_mask(prefix_len: usize, queries: usize, lens: &Tensor) -> Mask {
    let batch = lens.size(0);
    let per_query: Vec<f32> = (0..batch)
        .flat_map(|_| (0..queries).map(|q| (q + 1).max(prefix_len) as f32))
        .collect();
    let per_query = Tensor::from_vec(per_query, [batch, queries]); // [B, Q]
    let visible = Mask::valid_lens(&per_query);
    visible & Mask::valid_lens(lens) // [B]: the padding
}
// ANCHOR_END: prefix_lm_mask
// ANCHOR_END: all
