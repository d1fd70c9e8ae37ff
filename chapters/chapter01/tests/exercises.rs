//! The exercises of chapter 1, held to hand-computed values. They run against the reference
//! solutions by default and against `src/exercises.rs` with `--features exercises`.

use chapter01::exercises::{normalise_rows, one_query_scores, pairwise_differences};
use engine::Tensor;

#[test]
fn exercise_1_pairwise_differences_has_one_entry_per_pair() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 10.0, 20.0], [2, 2]);
    let y = Tensor::from_vec(vec![0.0, 1.0, 3.0, 3.0, 5.0, 0.0], [3, 2]);
    let d = pairwise_differences(&x, &y);
    assert_eq!(d.shape(), &[2, 3, 2]);
    assert_eq!(
        d.to_vec(),
        vec![
            1.0, 1.0, -2.0, -1.0, -4.0, 2.0, 10.0, 19.0, 7.0, 17.0, 5.0, 20.0
        ]
    );
}

#[test]
fn exercise_2_normalise_rows_makes_every_row_sum_to_one() {
    let x = Tensor::from_vec(vec![1.0, 3.0, 2.0, 2.0, 4.0, 2.0], [2, 3]);
    let n = normalise_rows(&x);
    assert_eq!(n.shape(), &[2, 3]);
    assert_eq!(n.to_vec(), vec![1.0 / 6.0, 0.5, 1.0 / 3.0, 0.25, 0.5, 0.25]);
    // Square: `x / x.sum_dim(-1)` broadcasts here (the sums line up with the columns) and
    // divides each column by a row's sum; only the kept dimension gives rows that sum to 1.
    let square = Tensor::from_vec(vec![1.0, 3.0, 4.0, 4.0], [2, 2]);
    let wrong = &square / &square.sum_dim(-1); // [[1/4, 3/8], [4/4, 4/8]]
    assert_ne!(wrong.sum_dim(-1).to_vec(), vec![1.0, 1.0]);
    let n = normalise_rows(&square);
    assert_eq!(n.to_vec(), vec![0.25, 0.75, 0.5, 0.5]);
}

#[test]
fn exercise_3_one_query_scores_are_dot_products_with_each_key() {
    let query = Tensor::from_vec(vec![1.0, 2.0, 0.0, 1.0], [2, 2]);
    let keys = Tensor::from_vec(
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        [2, 3, 2],
    );
    let s = one_query_scores(&query, &keys);
    assert_eq!(s.shape(), &[2, 3]);
    assert_eq!(s.to_vec(), vec![1.0, 2.0, 3.0, 3.0, 5.0, 7.0]);
}
