//! A second solution to each chapter 7 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use attention::prelude::*;

/// Exercise 1, one head at a time: head `h`'s features cut out with `narrow`, its
/// `[B, Q, K]` weights computed on their own, and the heads stacked as dimension 1.
pub fn per_head_weights(queries: &Tensor, keys: &Tensor, num_heads: usize) -> Tensor {
    let d = queries.size(-1) / num_heads;
    let scale = 1.0 / (d as f32).sqrt();
    let heads: Vec<Tensor> = (0..num_heads)
        .map(|h| {
            let q = queries.narrow(-1, h * d, d); // [B, Q, d]
            let k = keys.narrow(-1, h * d, d); //    [B, K, d]
            (q.bmm(&k.transpose(1, 2)) * scale).softmax(-1)
        })
        .collect();
    Tensor::stack(&heads, 1) // [B, H, Q, K]
}

/// Exercise 2, on the host: each example's row written out `H` times, in order.
pub fn key_padding_for_heads(pad: &Tensor, num_heads: usize) -> Tensor {
    let (b, k) = (pad.size(0), pad.size(1));
    let values = pad.to_vec();
    let mut folded = Vec::with_capacity(b * num_heads * k);
    for row in values.chunks(k) {
        for _ in 0..num_heads {
            folded.extend_from_slice(row);
        }
    }
    Tensor::from_vec(folded, [b * num_heads, k])
}

/// Exercise 3, by rebuilding `W_o` from three column blocks: the columns before the
/// head, zeros in its place, and the columns after it.
pub fn prune_head(mha: &MultiHeadAttention, head: usize) {
    let mut state = mha.state_dict();
    let w_o = state.get("W_o.weight").expect("a W_o").clone();
    let (rows, n) = (w_o.size(0), w_o.size(1));
    let d = n / mha.num_heads();
    let before = w_o.narrow(1, 0, head * d);
    let after = w_o.narrow(1, (head + 1) * d, n - (head + 1) * d);
    let pruned = Tensor::concat(&[before, Tensor::zeros([rows, d]), after], 1);
    state.insert("W_o.weight", pruned);
    mha.load_state_dict(&state)
        .expect("the same names and shapes");
}

/// Exercise 4, with each head's attention written out (scores, softmax, weighted sum)
/// and its projected output added to a running total.
pub fn sum_of_heads(
    mha: &MultiHeadAttention,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
) -> Tensor {
    let state = mha.state_dict();
    let w = |name: &str| state.get(name).expect("a weight").clone();
    let (w_q, w_k, w_v, w_o) = (
        w("W_q.weight"),
        w("W_k.weight"),
        w("W_v.weight"),
        w("W_o.weight"),
    );
    let heads = mha.num_heads();
    let d = w_q.size(0) / heads;
    let mut total: Option<Tensor> = None;
    for h in 0..heads {
        // Wᵀ's columns h·d .. h·d + d are W's rows.
        let project = |x: &Tensor, weight: &Tensor| {
            x.matmul(&weight.transpose(0, 1).narrow(1, h * d, d))
        };
        let q = project(queries, &w_q); // [B, Q, d]
        let k = project(keys, &w_k); //    [B, K, d]
        let v = project(values, &w_v); //  [B, K, d]
        let weights = (q.bmm(&k.transpose(1, 2)) / (d as f32).sqrt()).softmax(-1);
        let head = weights.bmm(&v); // [B, Q, d]
        // W_o's columns h·d .. h·d + d read this head: head · (those columns)ᵀ.
        let part = head.matmul(&w_o.narrow(1, h * d, d).transpose(0, 1));
        total = Some(match total {
            Some(sum) => sum + part,
            None => part,
        });
    }
    total.expect("at least one head")
}
