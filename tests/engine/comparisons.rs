//! Comparisons build 0/1 masks (with broadcasting, ties included) and carry no gradient.

use engine::Tensor;

fn pair() -> (Tensor, Tensor) {
    // Below, equal, above: each comparison must get all three right.
    (
        Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]),
        Tensor::from_vec(vec![2.0, 2.0, 2.0], [3]),
    )
}

#[test]
fn gt_ge_lt_le_eq_on_below_equal_above() {
    let (a, b) = pair();
    assert_eq!(a.gt(&b).to_vec(), vec![0.0, 0.0, 1.0]);
    assert_eq!(a.ge(&b).to_vec(), vec![0.0, 1.0, 1.0]);
    assert_eq!(a.lt(&b).to_vec(), vec![1.0, 0.0, 0.0]);
    assert_eq!(a.le(&b).to_vec(), vec![1.0, 1.0, 0.0]);
    assert_eq!(a.eq_mask(&b).to_vec(), vec![0.0, 1.0, 0.0]);
}

#[test]
fn comparisons_broadcast_like_arithmetic() {
    // positions [0, 1, 2] against lengths [[1], [3]]: the valid-length mask of attention.
    let positions = Tensor::arange(3).reshape([1, 3]);
    let lengths = Tensor::from_vec(vec![1.0, 3.0], [2, 1]);
    let mask = positions.lt(&lengths);
    assert_eq!(mask.shape(), &[2, 3]);
    assert_eq!(mask.to_vec(), vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
}

#[test]
fn a_mask_is_a_constant_with_no_gradient() {
    let a = Tensor::from_vec(vec![1.0, 3.0], [2]).requires_grad_();
    let mask = a.gt(&Tensor::scalar(2.0));
    assert!(!mask.requires_grad());
    assert!(mask.is_leaf());
}

#[test]
#[should_panic(expected = "lt: cannot broadcast [2] with [3]")]
fn a_comparison_names_itself_in_shape_errors() {
    Tensor::zeros([2]).lt(&Tensor::zeros([3]));
}
