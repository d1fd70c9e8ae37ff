// ANCHOR: all
//! Reference solutions to the chapter 7 exercises. Try `src/exercises.rs` first; the
//! tests in `tests/exercises.rs` hold both to the same assertions.

use attention::prelude::*;

// ANCHOR: per_head_weights
/// Exercise 1. The attention weights of every head, with the heads kept as their own
/// dimension: `[B, Q, H·d]` and `[B, K, H·d]` become `[B, H, Q, d]` and `[B, H, K,
/// d]`, and `matmul` multiplies the last two dimensions for every `(b, h)` at once,
/// giving `[B, H, Q, K]`. This is the layout a KV cache keeps (chapter 8); folding
/// into the batch is one `reshape` away from it.
pub fn per_head_weights(queries: &Tensor, keys: &Tensor, num_heads: usize) -> Tensor {
    let heads = |x: &Tensor| {
        let (b, t, n) = (x.size(0), x.size(1), x.size(2));
        x.reshape([b, t, num_heads, n / num_heads]) // [B, T, H, d]
            .permute([0, 2, 1, 3]) //                    [B, H, T, d]
    };
    let (q, k) = (heads(queries), heads(keys));
    let d = q.size(-1) as f32;
    (q.matmul(&k.transpose(-2, -1)) * (1.0 / d.sqrt())).softmax(-1)
}
// ANCHOR_END: per_head_weights

// ANCHOR: key_padding_for_heads
/// Exercise 2. A key-padding mask `[B, K]` for the `B·H` rows of the folded batch: a
/// head axis *after* the batch axis, stretched to `H`, then folded. `unsqueeze(0)`
/// instead (the head axis in front) would tile: `[B, K] → [H, B, K] → [H·B, K]`.
pub fn key_padding_for_heads(pad: &Tensor, num_heads: usize) -> Tensor {
    let (b, k) = (pad.size(0), pad.size(1));
    pad.unsqueeze(1) //                    [B, 1, K]
        .expand([b, num_heads, k]) //      [B, H, K]
        .reshape([b * num_heads, k]) //    [B·H, K]: row b·H + h is example b
}
// ANCHOR_END: key_padding_for_heads

// ANCHOR: prune_head
/// Exercise 3. Prunes head `head`: the merged heads are `[…, H·d]` with head `h` in
/// features `h·d .. h·d + d`, and `W_o` (`[num_hiddens, H·d]`, PyTorch's `[out, in]`)
/// reads feature `j` through its column `j`. Zeroing those columns removes the head
/// from the output and leaves everything else, the attention weights included, as it
/// was.
pub fn prune_head(mha: &MultiHeadAttention, head: usize) {
    let mut state = mha.state_dict();
    let w_o = state.get("W_o.weight").expect("a W_o").clone();
    let n = w_o.size(1);
    let d = n / mha.num_heads();
    let keep: Vec<f32> = (0..n)
        .map(|j| if j / d == head { 0.0 } else { 1.0 })
        .collect();
    state.insert("W_o.weight", &w_o * &Tensor::from_vec(keep, [1, n]));
    mha.load_state_dict(&state)
        .expect("the same names and shapes");
}
// ANCHOR_END: prune_head

// ANCHOR: sum_of_heads
/// Exercise 4. Multi-head attention one head at a time: head `i` projects with rows
/// `i·d .. i·d + d` of `W_q`, `W_k` and `W_v` (its `d` output features), attends, and
/// is projected by columns `i·d .. i·d + d` of `W_o`. Concatenating and then
/// projecting by `W_o` is the same as projecting each head by its block of columns
/// and adding.
pub fn sum_of_heads(
    mha: &MultiHeadAttention,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
) -> Tensor {
    let state = mha.state_dict();
    let weight = |name: &str| state.get(name).expect("a weight").clone();
    let (w_q, w_k, w_v, w_o) = (
        weight("W_q.weight"),
        weight("W_k.weight"),
        weight("W_v.weight"),
        weight("W_o.weight"),
    );
    let heads = mha.num_heads();
    let d = w_o.size(1) / heads;
    let parts: Vec<Tensor> = (0..heads)
        .map(|i| {
            // [d, in]: head i's projection
            let rows = |w: &Tensor| w.narrow(0, i * d, d);
            let q = queries.matmul_t(&rows(&w_q)); //          [B, Q, d]
            let k = keys.matmul_t(&rows(&w_k)); //             [B, K, d]
            let v = values.matmul_t(&rows(&w_v)); //           [B, K, d]
            let (head, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
            head.matmul_t(&w_o.narrow(1, i * d, d)) //         [B, Q, num_hiddens]
        })
        .collect();
    Tensor::stack(&parts, 0).sum_dim(0)
}
// ANCHOR_END: sum_of_heads
// ANCHOR_END: all
