//! Your solutions to the chapter 4 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter04 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use attention::Mask;
use engine::Tensor;

/// Exercise 1. A sliding-window (local) keep mask `[len, len]`: query `i` may see key `j`
/// when `|i − j| ≤ window`.
pub fn sliding_window_keep(len: usize, window: usize) -> Tensor {
    let _ = (len, window);
    todo!(
        "exercise 1: positions as a column and as a row, two comparisons, one product"
    )
}

/// Exercise 2. The key-padding mask `[B, K]` of token ids `ids: [B, K]`: 1 where the id is
/// a real token, 0 where it equals `pad_id`.
pub fn key_padding_from_ids(ids: &Tensor, pad_id: f32) -> Tensor {
    let _ = (ids, pad_id);
    todo!(
        "exercise 2: compare with pad_id, then turn the 1s into 0s and the 0s into 1s"
    )
}

/// Exercise 3. A prefix-LM mask for `queries` queries over as many keys: every query sees
/// the whole prefix of `prefix_len` tokens, and beyond it causal order; keys at or past
/// `lens[b]` (`lens: [B]`) are padding and never seen.
pub fn prefix_lm_mask(prefix_len: usize, queries: usize, lens: &Tensor) -> Mask {
    let _ = (prefix_len, queries, lens);
    todo!(
        "exercise 3: query q sees keys 0..max(q + 1, prefix_len): a valid length per query, & the padding"
    )
}
