//! A second solution to each chapter 1 exercise, written apart from `src/solutions.rs`
//! (`--features alternatives`): the exercise tests must accept it too, which shows that
//! they accept any correct answer and not only the reference's.

use engine::Tensor;

/// Exercise 1, by explicit broadcasting: both operands expanded to `[n, m, d]` first,
/// instead of leaving the stretch to the subtraction.
pub fn pairwise_differences(x: &Tensor, y: &Tensor) -> Tensor {
    let (n, m, d) = (x.size(0), y.size(0), x.size(1));
    let xs = x.reshape([n, 1, d]).broadcast_to([n, m, d]);
    let ys = y.reshape([1, m, d]).broadcast_to([n, m, d]);
    xs - ys
}

/// Exercise 2, by multiplying with the reciprocal of each row's sum, the sums made a
/// column with `reshape` rather than `sum_dim_keepdim`.
pub fn normalise_rows(x: &Tensor) -> Tensor {
    let n = x.size(0);
    let inverse = 1.0 / x.sum_dim(-1).reshape([n, 1]);
    x * &inverse
}

/// Exercise 3, by a broadcast product and a sum over the features instead of `bmm`.
pub fn one_query_scores(query: &Tensor, keys: &Tensor) -> Tensor {
    (query.unsqueeze(1) * keys).sum_dim(-1)
}
