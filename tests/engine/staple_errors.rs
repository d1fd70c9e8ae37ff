//! The messages of the PyTorch staples on bad input: each names the op, the shapes or
//! values involved and what was expected, at the caller's line.

use crate::common;

use common::panic_at;
use engine::{Reduction, Tensor};

/// Runs `f`, which must panic in this file, on `line` or one of the two after it (where a
/// formatted macro call puts its arguments), and returns the message.
#[track_caller]
fn message_at(line: u32, f: impl FnOnce()) -> String {
    let raised = panic_at(f);
    assert!(
        raised.file == file!() && (line..=line + 2).contains(&raised.line),
        "reported at {}:{}, not at the caller's line {line}: {}",
        raised.file,
        raised.line,
        raised.message
    );
    raised.message
}

macro_rules! refused_with {
    ($call:expr, $expected:expr) => {{
        let line = line!();
        let message = message_at(line, || drop($call));
        assert_eq!(message, $expected);
    }};
}

#[test]
fn clamp_refuses_crossed_or_nan_bounds() {
    let x = Tensor::zeros([2]);
    refused_with!(
        x.clamp(1.0, -1.0),
        "clamp: needs min ≤ max (neither NaN), found min = 1, max = -1; hint: for one bound only, use clamp_min or clamp_max"
    );
    refused_with!(x.clamp_min(f32::NAN), "clamp_min: the bound is NaN");
}

#[test]
fn topk_refuses_k_larger_than_the_dimension() {
    let x = Tensor::zeros([2, 3]);
    refused_with!(
        x.topk(4, -1).0,
        "topk: k = 4 is larger than dimension 1 of shape [2, 3], which has 3 entries"
    );
}

#[test]
fn argmax_and_max_with_indices_refuse_an_empty_dimension() {
    let x = Tensor::zeros([2, 0]);
    refused_with!(
        x.argmax(1),
        "argmax: dimension 1 of shape [2, 0] is empty, so it has no maximum"
    );
    refused_with!(
        x.min_dim_with_indices(-1).1,
        "min_dim_with_indices: dimension 1 of shape [2, 0] is empty, so it has no minimum"
    );
}

#[test]
fn gather_refuses_a_rank_mismatch_a_larger_index_and_a_position_out_of_range() {
    let x = Tensor::zeros([2, 3]);
    refused_with!(
        x.gather(1, &Tensor::zeros([2])),
        "gather: the index has shape [2] (rank 1) but the tensor has shape [2, 3] (rank 2); they must have the same rank. hint: unsqueeze the index"
    );
    refused_with!(
        x.gather(1, &Tensor::zeros([3, 1])),
        "gather: the index has shape [3, 1] and the tensor [2, 3]: dimension 0 of the index (3) is larger than the tensor's (2); only dimension 1, the one gathered along, may differ freely"
    );
    refused_with!(
        x.gather(1, &Tensor::full([2, 1], 3.0)),
        "gather: index 3 at position 0 is not a whole number in 0..3 (dimension size)"
    );
}

#[test]
fn max_min_and_logsumexp_refuse_an_empty_tensor_or_dimension() {
    let empty = Tensor::zeros([2, 0]);
    refused_with!(empty.max(), "max: the tensor is empty");
    refused_with!(empty.min(), "min: the tensor is empty");
    refused_with!(
        empty.logsumexp(1),
        "logsumexp: dimension 1 of shape [2, 0] is empty"
    );
}

#[test]
fn flatten_refuses_a_start_after_the_end() {
    refused_with!(
        Tensor::zeros([2, 3, 4]).flatten(2, 1),
        "flatten: start_dim (2) comes after end_dim (1) in a tensor of rank 3; hint: flatten(0, -1) flattens everything"
    );
}

#[test]
fn tril_and_triu_need_a_matrix() {
    refused_with!(
        Tensor::zeros([3]).triu(0),
        "triu: needs a matrix or a batch of matrices (rank ≥ 2), found shape [3]"
    );
}

#[test]
fn mse_loss_refuses_shapes_that_would_only_broadcast() {
    refused_with!(
        Tensor::zeros([4, 1]).mse_loss(&Tensor::zeros([4]), Reduction::Mean),
        "mse_loss: the prediction has shape [4, 1] but the target has [4]; they must be equal. hint: a missing or extra size-1 dimension (e.g. [N, 1] against [N]) is a common cause: reshape or squeeze one of them"
    );
}

#[test]
fn the_staples_on_edge_values_follow_pytorch() {
    // A NaN wins argmax and argmin, and propagates through max, min, maximum and clamp.
    let x = Tensor::from_vec(vec![1.0, f32::NAN, 3.0], [3]);
    assert_eq!(x.argmax(0).item(), 1.0);
    assert_eq!(x.argmin(0).item(), 1.0);
    assert!(x.max().item().is_nan() && x.min().item().is_nan());
    assert!(x.maximum(&Tensor::scalar(0.0)).to_vec()[1].is_nan());
    assert!(x.minimum(&Tensor::scalar(5.0)).to_vec()[1].is_nan());
    assert!(Tensor::scalar(5.0).minimum(&x).to_vec()[1].is_nan());
    assert!(x.clamp(0.0, 2.0).to_vec()[1].is_nan());
    // logsumexp of a line of -inf is -inf, not NaN; cumsum of a scalar is itself.
    let minus_inf = Tensor::full([2], f32::NEG_INFINITY);
    assert_eq!(minus_inf.logsumexp(0).item(), f32::NEG_INFINITY);
    assert_eq!(Tensor::scalar(2.5).cumsum(0).item(), 2.5);
    assert_eq!(Tensor::scalar(2.5).flatten(0, -1).shape(), &[1]);
    // The gradient of abs at exactly 0 is 0, and of clamp at a bound is 1 (as PyTorch).
    let at_kinks = Tensor::from_vec(vec![0.0, 1.0], [2]).requires_grad_();
    (at_kinks.abs() + at_kinks.clamp(-1.0, 1.0))
        .sum()
        .backward();
    assert_eq!(at_kinks.grad().unwrap().to_vec(), vec![1.0, 2.0]);
}
