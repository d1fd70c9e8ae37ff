//! Tensors print like PyTorch's: nested brackets, four decimals, long tensors abbreviated.

use engine::Tensor;

#[test]
fn a_scalar_prints_its_value_and_empty_shape() {
    assert_eq!(Tensor::scalar(2.5).to_string(), "tensor(2.5000, shape=[])");
}

#[test]
fn a_vector_prints_on_one_line() {
    let t = Tensor::from_vec(vec![1.0, -0.5, 3.25], [3]);
    assert_eq!(
        t.to_string(),
        "tensor([ 1.0000, -0.5000,  3.2500], shape=[3])"
    );
}

#[test]
fn a_three_dimensional_tensor_separates_its_blocks_with_a_blank_line() {
    let t = Tensor::arange(8).reshape([2, 2, 2]);
    assert_eq!(
        t.to_string(),
        "tensor([[[0.0000, 1.0000],\n         [2.0000, 3.0000]],\n\n        [[4.0000, 5.0000],\n         [6.0000, 7.0000]]], shape=[2, 2, 2])"
    );
}

#[test]
fn a_long_tensor_shows_three_entries_at_each_end() {
    let printed = Tensor::arange(2000).to_string();
    assert_eq!(
        printed,
        "tensor([   0.0000,    1.0000,    2.0000, ..., 1997.0000, 1998.0000, 1999.0000], shape=[2000])"
    );
}

#[test]
fn a_long_matrix_abbreviates_rows_and_columns() {
    let printed = Tensor::zeros([100, 100]).to_string();
    assert_eq!(
        printed.lines().count(),
        7,
        "3 rows, '...', 3 rows:\n{printed}"
    );
    assert!(
        printed.contains("[0.0000, 0.0000, 0.0000, ..., 0.0000, 0.0000, 0.0000]"),
        "{printed}"
    );
}

#[test]
fn a_tensor_that_requires_grad_says_so() {
    let t = Tensor::ones([1]).requires_grad_();
    assert_eq!(
        t.to_string(),
        "tensor([1.0000], shape=[1], requires_grad=true)"
    );
}

#[test]
fn special_values_print_as_in_pytorch() {
    let t = Tensor::from_vec(
        vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-6, -2e9],
        [5],
    );
    assert_eq!(
        t.to_string(),
        "tensor([        nan,         inf,        -inf,  1.0000e-06, -2.0000e+09], shape=[5])"
    );
}
