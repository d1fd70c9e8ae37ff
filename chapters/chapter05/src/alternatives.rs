//! A second solution to each chapter 5 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::Tensor;

/// Exercise 1, with `matmul_t` for the projections (`x · Wᵀ` without a transposed
/// copy) and `w_v` applied by a broadcast product and a sum over the hidden units.
pub fn additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
) -> Tensor {
    let q = queries.matmul_t(w_q); // [B, Q, h]
    let k = keys.matmul_t(w_k); //    [B, K, h]
    let features = (q.unsqueeze(2) + k.unsqueeze(1)).tanh(); // [B, Q, K, h]
    (features * w_v).sum_dim(-1)
}

/// Exercise 2, with `W` applied to the keys instead of the queries: `q · (W k)`, the
/// keys mapped to `[B, K, dq]` first.
pub fn general_scores(queries: &Tensor, keys: &Tensor, w: &Tensor) -> Tensor {
    let wk = keys.matmul_t(w); // [B, K, dk] · [dq, dk]ᵀ → [B, K, dq]
    queries.bmm(&wk.transpose(1, 2))
}

/// Exercise 3, with the pairwise differences of chapter 1: `[B, Q, K, d]`, squared and
/// summed over the features.
pub fn distance_scores(queries: &Tensor, keys: &Tensor) -> Tensor {
    let diff = queries.unsqueeze(2) - keys.unsqueeze(1); // [B, Q, K, d]
    -diff.square().sum_dim(-1)
}

/// Exercise 4, with the keys projected once for every chunk, the queries cut with
/// `slice` in a `while` loop, and each chunk's scores written out with exercise 1's
/// formula.
pub fn chunked_additive_scores(
    queries: &Tensor,
    keys: &Tensor,
    w_q: &Tensor,
    w_k: &Tensor,
    w_v: &Tensor,
    chunk: usize,
) -> Tensor {
    assert!(
        chunk >= 1,
        "chunked_additive_scores: a chunk holds at least one query"
    );
    let k = keys.matmul_t(w_k).unsqueeze(1); // [B, 1, K, h], shared by every chunk
    let total = queries.size(1);
    let mut parts = Vec::new();
    let mut start = 0;
    while start < total {
        let end = (start + chunk).min(total);
        let q = queries.slice(1, start..end).matmul_t(w_q).unsqueeze(2); // [B, c, 1, h]
        let features = (q + &k).tanh(); //                                  [B, c, K, h]
        parts.push((features * w_v).sum_dim(-1)); //                        [B, c, K]
        start = end;
    }
    Tensor::concat(&parts, 1)
}
