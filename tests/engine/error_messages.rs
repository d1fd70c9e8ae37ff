//! Shape errors name the op, the shapes, the offending dimension, what was expected and a
//! hint; and they point at the caller's line, not at a line inside the engine.

use engine::{Reduction, Tensor};

use crate::common::panic_at;

/// Runs `f`, which must panic, and returns the message with the file and line the panic
/// was reported at.
fn failure(f: impl FnOnce()) -> (String, String, u32) {
    let raised = panic_at(f);
    (raised.message, raised.file, raised.line)
}

#[test]
fn the_classic_broadcast_mistake_is_explained_better_than_pytorch() {
    // PyTorch says: "The size of tensor a (64) must match the size of tensor b (128) at
    // non-singleton dimension 2". It names neither the op nor the shapes.
    let a = Tensor::zeros([2, 3, 64]);
    let b = Tensor::zeros([2, 3, 128]);
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = &a * &b;
    });
    assert_eq!(
        (file.as_str(), line),
        (file!(), expected_line),
        "the panic points at the `*` line"
    );
    assert!(
        msg.starts_with("mul: cannot broadcast [2, 3, 64] with [2, 3, 128]"),
        "{msg}"
    );
    assert!(msg.contains("dimension 2"), "{msg}");
    assert!(
        msg.contains("the left operand has size 64, the right operand has size 128"),
        "{msg}"
    );
    assert!(
        msg.contains("expected: equal sizes, or one of them 1"),
        "{msg}"
    );
}

#[test]
fn a_missing_axis_gets_an_unsqueeze_hint() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([4, 64]).add(&Tensor::zeros([4, 10, 64]));
    });
    assert!(
        msg.starts_with("add: cannot broadcast [4, 64] with [4, 10, 64]"),
        "{msg}"
    );
    assert!(
        msg.contains("hint: did you mean to unsqueeze(1) the left operand"),
        "{msg}"
    );
}

#[test]
fn matmul_inner_mismatch_names_both_sizes_and_suggests_transpose() {
    let q = Tensor::zeros([2, 5, 8]);
    let k = Tensor::zeros([2, 7, 8]);
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = q.matmul(&k);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line));
    assert!(
        msg.starts_with("matmul: cannot multiply [2, 5, 8] by [2, 7, 8]"),
        "{msg}"
    );
    assert!(msg.contains("8 columns") && msg.contains("7 rows"), "{msg}");
    assert!(
        msg.contains(
            "hint: the last dimensions agree; did you mean rhs.transpose(-2, -1)?"
        ),
        "{msg}"
    );
}

#[test]
fn matmul_batch_mismatch_is_a_broadcast_error() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([3, 2, 4]).matmul(&Tensor::zeros([5, 4, 2]));
    });
    assert!(
        msg.starts_with("matmul (batch dimensions): cannot broadcast [3] with [5]"),
        "{msg}"
    );
}

#[test]
fn matmul_of_a_vector_asks_for_two_dimensions() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([4]).matmul(&Tensor::zeros([4, 2]));
    });
    assert!(
        msg.contains(
            "matmul: both operands need at least 2 dimensions, found [4] and [4, 2]"
        ),
        "{msg}"
    );
    assert!(msg.contains("unsqueeze(0)"), "{msg}");
}

#[test]
fn bmm_wants_equal_batches() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3, 4]).bmm(&Tensor::zeros([3, 4, 5]));
    });
    assert_eq!(
        msg,
        "bmm: batch sizes differ: [2, 3, 4] has 2, [3, 4, 5] has 3"
    );
}

#[test]
fn bmm_wants_rank_three() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([3, 4]).bmm(&Tensor::zeros([4, 5]));
    });
    assert_eq!(
        msg,
        "bmm: the left operand must have 3 dimensions, found shape [3, 4] (rank 2)"
    );
}

#[test]
fn reshape_reports_both_element_counts() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).reshape([4, 2]);
    });
    assert_eq!(
        msg,
        "reshape: cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements)"
    );
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).reshape([4, -1]);
    });
    assert!(msg.contains("6 is not a multiple of 4"), "{msg}");
}

#[test]
fn an_out_of_range_dimension_lists_the_valid_ones() {
    let x = Tensor::zeros([2, 3]);
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = x.softmax(2);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line));
    assert_eq!(
        msg,
        "softmax: dimension 2 is out of range for a tensor of rank 2 (valid dimensions are 0..=1 or -2..=-1)"
    );
}

#[test]
fn squeeze_of_a_dimension_that_is_not_one() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).squeeze(1);
    });
    assert!(
        msg.starts_with("squeeze: dimension 1 of [2, 3] has size 3, not 1"),
        "{msg}"
    );
}

#[test]
fn concat_names_the_tensor_that_disagrees() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::concat(&[Tensor::zeros([2, 3]), Tensor::zeros([4, 3])], 1);
    });
    assert_eq!(
        msg,
        "concat: tensor 1 has shape [4, 3] but tensor 0 has [2, 3]; all dimensions except 1 must match"
    );
}

#[test]
fn narrow_outside_the_dimension() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 5]).narrow(1, 3, 4);
    });
    assert_eq!(
        msg,
        "narrow: the range 3..7 is outside dimension 1 of [2, 5], which has size 5"
    );
}

#[test]
fn an_index_out_of_range_is_caught_before_any_kernel_runs() {
    let weight = Tensor::zeros([10, 4]);
    let ids = Tensor::from_vec(vec![1.0, 10.0], [2]);
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = Tensor::embedding(&ids, &weight);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line));
    assert_eq!(
        msg,
        "embedding: index 10 at position 1 is not a whole number in 0..10 (the vocabulary size)"
    );
}

#[test]
fn cross_entropy_targets_must_drop_the_class_dimension() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([4, 3])
            .cross_entropy(&Tensor::zeros([4, 3]), Reduction::Mean);
    });
    assert!(
        msg.starts_with("cross_entropy: logits [4, 3] need targets of shape [4]"),
        "{msg}"
    );
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3])
            .cross_entropy(&Tensor::from_vec(vec![0.0, 3.0], [2]), Reduction::Mean);
    });
    assert!(
        msg.contains(
            "index 3 at position 1 is not a whole number in 0..3 (class count)"
        ),
        "{msg}"
    );
}

#[test]
fn masked_fill_mask_must_broadcast_to_the_tensor() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).masked_fill(&Tensor::zeros([4, 2, 3]), 0.0);
    });
    assert!(
        msg.starts_with(
            "masked_fill: the mask [4, 2, 3] must broadcast to the tensor's shape [2, 3]"
        ),
        "{msg}"
    );
}

#[test]
fn item_and_backward_explain_how_to_get_a_scalar() {
    let x = Tensor::zeros([3]).requires_grad_();
    let (msg, _, _) = failure(|| {
        let _ = x.item();
    });
    assert!(
        msg.contains(
            "item: only a tensor with one element has an item, found shape [3]"
        ),
        "{msg}"
    );
    let y = &x * 2.0;
    let expected_line = line!() + 1;
    let (msg, file, line) = failure(|| y.backward());
    assert_eq!((file.as_str(), line), (file!(), expected_line));
    assert!(
        msg.starts_with("backward: called on a tensor of shape [3]"),
        "{msg}"
    );
    assert!(msg.contains("hint: reduce with .sum() or .mean()"), "{msg}");
}

#[test]
fn backward_without_anything_to_differentiate() {
    let (msg, _, _) = failure(|| Tensor::ones([1]).sum().backward());
    assert!(
        msg.starts_with("backward: this tensor does not require a gradient"),
        "{msg}"
    );
}

#[test]
fn from_vec_with_the_wrong_count() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::from_vec(vec![1.0; 5], [2, 3]);
    });
    assert_eq!(
        msg,
        "from_vec: 5 values cannot fill shape [2, 3], which holds 6"
    );
}

#[test]
fn requires_grad_on_a_computed_tensor_suggests_detach() {
    let y = &Tensor::ones([2]).requires_grad_() * 2.0;
    let (msg, _, _) = failure(|| {
        let _ = y.clone().requires_grad_();
    });
    assert!(msg.contains("hint: call .detach() first"), "{msg}");
}

#[test]
fn mean_dim_names_itself_when_the_dimension_is_out_of_range() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).mean_dim(5);
    });
    assert!(
        msg.starts_with("mean_dim: dimension 5 is out of range"),
        "{msg}"
    );
}

#[test]
fn unsqueeze_and_stack_name_the_valid_insert_positions() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::zeros([2, 3]).unsqueeze(5);
    });
    assert_eq!(
        msg,
        "unsqueeze: cannot insert a dimension at 5 in a tensor of rank 2 (valid positions are 0..=2 or -3..=-1)"
    );
    let (msg, _, _) = failure(|| {
        let _ = Tensor::stack(&[Tensor::zeros([2])], -3);
    });
    assert!(
        msg.starts_with(
            "stack: cannot insert a dimension at -3 in a tensor of rank 1"
        ),
        "{msg}"
    );
}

#[test]
fn expand_refuses_negative_sizes_instead_of_making_an_empty_tensor() {
    let (msg, _, _) = failure(|| {
        let _ = Tensor::ones([3]).expand([-1, 3]);
    });
    assert!(
        msg.starts_with(
            "expand: size -1 at position 0 of [-1, 3] is invalid for shape [3]"
        ),
        "{msg}"
    );
    let (msg, _, _) = failure(|| {
        let _ = Tensor::ones([1, 3]).expand([-2, 3]);
    });
    assert!(msg.starts_with("expand: size -2 at position 0"), "{msg}");
    assert_eq!(Tensor::ones([1, 3]).expand([4, -1]).shape(), &[4, 3]);
}

#[test]
fn errors_raised_inside_loops_and_helpers_still_point_at_the_caller() {
    let x = Tensor::zeros([2, 3]);
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = x.sum_dims([0, 7]);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line), "{msg}");
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = x.permute([0, 9]);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line), "{msg}");
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = x.expand([-3, 2, 3]);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line), "{msg}");
    let expected_line = line!() + 2;
    let (msg, file, line) = failure(|| {
        let _ = Tensor::rand([2], 1.0, 0.0);
    });
    assert_eq!((file.as_str(), line), (file!(), expected_line), "{msg}");
    assert_eq!(
        msg,
        "rand: needs finite low < high, found low = 1, high = 0"
    );
}

#[test]
fn matmul_t_names_both_shapes_and_suggests_matmul_when_the_right_is_not_transposed() {
    let (message, _, _) = failure(|| {
        engine::Tensor::zeros([2, 3]).matmul_t(&engine::Tensor::zeros([3, 4]));
    });
    assert!(
        message.starts_with(
            "matmul_t: cannot multiply [2, 3] by the transpose of [3, 4]"
        ),
        "{message}"
    );
    assert!(message.contains("did you mean matmul?"), "{message}");
}

#[test]
fn matmul_t_equals_matmul_with_the_transpose_exactly() {
    engine::manual_seed(7);
    let a = engine::Tensor::randn([2, 3, 5]);
    let b = engine::Tensor::randn([4, 5]);
    assert_eq!(
        a.matmul_t(&b).to_vec(),
        a.matmul(&b.transpose(0, 1)).to_vec()
    );
}
