//! The lesson's code: shapes, the broadcasting rule by hand against the engine's, the
//! query-by-key broadcast, and the shape error the page reads.

use chapter01::{
    a_batch_of_sequences, broadcast_by_hand, every_query_against_every_key,
    shape_error,
};
use engine::Tensor;
use engine::shape::broadcast_shapes;

#[test]
fn the_batch_is_row_major_with_the_last_index_fastest() {
    let x = a_batch_of_sequences();
    assert_eq!(x.shape(), &[2, 3, 4]);
    // Element [1, 2, 3] sits at 1·12 + 2·4 + 3 = 23.
    assert_eq!(
        x.narrow(0, 1, 1).narrow(1, 2, 1).narrow(2, 3, 1).item(),
        23.0
    );
}

#[test]
fn broadcasting_by_hand_agrees_with_the_engine_on_every_small_pair() {
    // Every pair of shapes of rank 0..=3 with sizes from {1, 2, 3}.
    let mut shapes = vec![vec![]];
    for rank in 1..=3 {
        let mut next = Vec::new();
        for s in shapes.iter().filter(|s: &&Vec<usize>| s.len() == rank - 1) {
            for size in 1..=3 {
                let mut t = s.clone();
                t.push(size);
                next.push(t);
            }
        }
        shapes.extend(next);
    }
    assert_eq!(shapes.len(), 1 + 3 + 9 + 27);
    for a in &shapes {
        for b in &shapes {
            assert_eq!(
                broadcast_by_hand(a, b),
                broadcast_shapes(a, b),
                "{a:?} with {b:?}"
            );
        }
    }
}

#[test]
fn every_query_meets_every_key() {
    let queries = Tensor::from_vec(vec![1.0, 2.0], [1, 2, 1]);
    let keys = Tensor::from_vec(vec![10.0, 20.0, 30.0], [1, 3, 1]);
    let f = every_query_against_every_key(&queries, &keys);
    assert_eq!(f.shape(), &[1, 2, 3, 1]);
    assert_eq!(f.to_vec(), vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
}

#[test]
fn the_shape_error_names_the_op_the_shapes_and_a_fix() {
    let message = shape_error(|| {
        let _ = &Tensor::zeros([4, 64]) + &Tensor::zeros([4, 10, 64]);
    });
    assert!(
        message.starts_with("add: cannot broadcast [4, 64] with [4, 10, 64]"),
        "{message}"
    );
    assert!(message.contains("dimension 1"), "{message}");
    assert!(
        message.contains("unsqueeze(1) the left operand"),
        "{message}"
    );
}
