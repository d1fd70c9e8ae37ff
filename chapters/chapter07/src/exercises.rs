//! Your solutions to the chapter 7 exercises. Replace each `todo!()` with your code, then
//! check it with `cargo test -p chapter07 --features exercises` (the same tests the
//! reference solutions pass). The page's "Exercises" section explains each one.

use attention::prelude::*;

/// Exercise 1. The attention weights of every head, with the heads kept as their own
/// dimension instead of folded into the batch: `queries: [B, Q, H·d]` and
/// `keys: [B, K, H·d]` (already projected) give `softmax(q kᵀ / √d)` per head,
/// `[B, H, Q, K]`. No mask.
pub fn per_head_weights(queries: &Tensor, keys: &Tensor, num_heads: usize) -> Tensor {
    let _ = (queries, keys, num_heads);
    todo!(
        "exercise 1: reshape to [B, T, H, d], permute to [B, H, T, d], then matmul over the last two dimensions"
    )
}

/// Exercise 2. A key-padding mask `[B, K]` (1 = a real key) for the `B·H` rows of the
/// folded batch: `[B·H, K]`, row `b·H + h` holding example `b`'s mask. Without
/// `repeat_interleave`.
pub fn key_padding_for_heads(pad: &Tensor, num_heads: usize) -> Tensor {
    let _ = (pad, num_heads);
    todo!("exercise 2: unsqueeze(1), expand to [B, H, K], reshape to [B·H, K]")
}

/// Exercise 3. Prunes head `head` of `mha` in place: zeroes the columns of `W_o` that read
/// that head's `d` features, so the head no longer reaches the output.
pub fn prune_head(mha: &MultiHeadAttention, head: usize) {
    let _ = (mha, head);
    todo!(
        "exercise 3: take the state_dict, zero columns head·d .. head·d + d of W_o.weight, load it back"
    )
}

/// Exercise 4. The output of `mha` (a module without biases, no mask) computed one head at
/// a time: head `i` attends with its own rows of `W_q`, `W_k`, `W_v`, and its output is
/// projected by its own columns of `W_o`; the result is the sum over the heads,
/// `[B, Q, num_hiddens]`.
pub fn sum_of_heads(
    mha: &MultiHeadAttention,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
) -> Tensor {
    let _ = (mha, queries, keys, values);
    todo!(
        "exercise 4: narrow W_q, W_k, W_v on dimension 0 and W_o on dimension 1 for each head, and add the parts"
    )
}
