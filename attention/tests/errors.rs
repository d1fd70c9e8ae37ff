//! Bad input gives a message naming the module, the argument and the shapes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use attention::{
    AdditiveAttention, BahdanauAttention, CausalSelfAttention, DotProductAttention, Fill, Mask,
    MultiHeadAdditiveAttention, MultiHeadAttention, scaled_dot_product_attention,
};
use engine::Tensor;

fn message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn z(shape: &[usize]) -> Tensor {
    Tensor::zeros(shape)
}

#[test]
fn dot_product_queries_and_keys_of_different_sizes() {
    let msg = message(|| {
        DotProductAttention::new(0.0).forward(
            &z(&[2, 3, 8]),
            &z(&[2, 5, 6]),
            &z(&[2, 5, 4]),
            &Mask::None,
        );
    });
    assert!(
        msg.starts_with("DotProductAttention: queries [2, 3, 8] and keys [2, 5, 6] must have the same last dimension"),
        "{msg}"
    );
    assert!(msg.contains("found 8 and 6"), "{msg}");
    assert!(
        msg.contains("hint: additive attention accepts different sizes"),
        "{msg}"
    );
}

#[test]
fn keys_and_values_of_different_lengths() {
    let msg = message(|| {
        scaled_dot_product_attention(
            &z(&[2, 3, 8]),
            &z(&[2, 5, 8]),
            &z(&[2, 4, 8]),
            &Mask::None,
            Fill::Safe,
            None,
        );
    });
    assert_eq!(
        msg,
        "scaled_dot_product_attention: keys [2, 5, 8] and values [2, 4, 8] must hold the same number of entries (dimension -2), found 5 keys and 4 values"
    );
    let msg = message(|| {
        AdditiveAttention::new(3, 3, 4, 0.0).forward(
            &z(&[1, 2, 3]),
            &z(&[1, 5, 3]),
            &z(&[1, 6, 2]),
            &Mask::None,
        );
    });
    assert!(
        msg.starts_with("AdditiveAttention: keys [1, 5, 3] and values [1, 6, 2]"),
        "{msg}"
    );
}

#[test]
fn additive_attention_query_of_the_wrong_size() {
    let msg = message(|| {
        AdditiveAttention::new(3, 2, 4, 0.0).forward(
            &z(&[1, 2, 5]),
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &Mask::None,
        );
    });
    assert_eq!(
        msg,
        "AdditiveAttention: queries [1, 2, 5] has 5 at dimension 2 but query_size is 3"
    );
}

#[test]
fn additive_attention_mask_of_the_wrong_shape() {
    let msg = message(|| {
        let mask = Mask::Keep(Tensor::ones(&[1, 3]));
        AdditiveAttention::new(3, 2, 4, 0.0).forward(
            &z(&[1, 2, 3]),
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &mask,
        );
    });
    assert!(
        msg.starts_with("AdditiveAttention: the mask has shape [1, 3], which does not broadcast to the attention scores [1, 2, 4]"),
        "{msg}"
    );
}

#[test]
fn bahdanau_query_must_be_one_per_example() {
    let msg = message(|| {
        BahdanauAttention::new(4, 4, 4, 8).forward(
            &z(&[2, 1, 4]),
            &z(&[2, 3, 4]),
            &z(&[2, 3, 4]),
            &Mask::None,
        );
    });
    assert_eq!(
        msg,
        "BahdanauAttention: query must have shape [B, query_size], found [2, 1, 4]"
    );
}

#[test]
fn bahdanau_batch_sizes_must_agree() {
    let msg = message(|| {
        BahdanauAttention::new(4, 4, 4, 8).forward(
            &z(&[2, 4]),
            &z(&[3, 3, 4]),
            &z(&[3, 3, 4]),
            &Mask::None,
        );
    });
    assert_eq!(
        msg,
        "BahdanauAttention: keys [3, 3, 4] has 3 at dimension 0 but the batch size of the query is 2"
    );
}

#[test]
fn bahdanau_mask_of_the_wrong_shape() {
    let msg = message(|| {
        let mask = Mask::Keep(Tensor::ones(&[2, 5]));
        BahdanauAttention::new(4, 4, 4, 8).forward(
            &z(&[2, 4]),
            &z(&[2, 3, 4]),
            &z(&[2, 3, 4]),
            &mask,
        );
    });
    assert!(msg.starts_with("BahdanauAttention: the mask has shape [2, 1, 5], which does not broadcast to the attention scores [2, 1, 3]"), "{msg}");
}

#[test]
fn heads_that_do_not_divide_the_model_size() {
    let msg = message(|| {
        MultiHeadAttention::new(10, 3, 0.0, false);
    });
    assert_eq!(
        msg,
        "MultiHeadAttention::new: num_hiddens (10) is not divisible by num_heads (3); each head gets num_hiddens / num_heads features"
    );
    let msg = message(|| {
        MultiHeadAdditiveAttention::new(4, 4, 4, 10, 4);
    });
    assert!(
        msg.starts_with(
            "MultiHeadAdditiveAttention::new: hidden (10) is not divisible by num_heads (4)"
        ),
        "{msg}"
    );
    let msg = message(|| {
        CausalSelfAttention::new(6, 4, true);
    });
    assert!(
        msg.starts_with("CausalSelfAttention::new: d_model (6) is not divisible by num_heads (4)"),
        "{msg}"
    );
}

#[test]
fn multi_head_attention_value_of_the_wrong_size() {
    let msg = message(|| {
        MultiHeadAttention::new(8, 2, 0.0, false).forward(
            &z(&[1, 2, 8]),
            &z(&[1, 3, 8]),
            &z(&[1, 3, 5]),
            &Mask::None,
        );
    });
    assert_eq!(
        msg,
        "MultiHeadAttention: values [1, 3, 5] has 5 at dimension 2 but value_size is 8"
    );
}

#[test]
fn multi_head_attention_valid_lengths_of_the_wrong_batch() {
    let msg = message(|| {
        let lens = Mask::ValidLens(Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3]));
        MultiHeadAttention::new(8, 2, 0.0, false).forward(
            &z(&[2, 2, 8]),
            &z(&[2, 3, 8]),
            &z(&[2, 3, 8]),
            &lens,
        );
    });
    assert_eq!(
        msg,
        "MultiHeadAttention: valid lengths must have shape [2] (one per batch element) or [2, 2] (one per query) for attention scores [2, 2, 3], found [3]"
    );
}

#[test]
fn causal_self_attention_input_of_the_wrong_width() {
    let msg = message(|| {
        CausalSelfAttention::new(8, 2, true).forward(&z(&[1, 3, 6]));
    });
    assert_eq!(
        msg,
        "CausalSelfAttention::forward: x must be [B, T, d_model] with d_model = 8, found [1, 3, 6]"
    );
}

#[test]
fn a_module_error_points_at_the_callers_line() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Option<(String, u32)>>> = Arc::default();
    let slot = Arc::clone(&seen);
    let this_test = std::thread::current().id();
    // The hook is process-wide and other tests panic on purpose in parallel: record only
    // this thread's panic.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let here = std::thread::current().id() == this_test;
        if let Some(l) = info.location().filter(|_| here) {
            slot.lock()
                .unwrap()
                .get_or_insert((l.file().to_string(), l.line()));
        }
    }));
    let attention = MultiHeadAttention::new(8, 2, 0.0, false);
    let expected_line = line!() + 2;
    let result = catch_unwind(AssertUnwindSafe(|| {
        attention.forward(&z(&[1, 2, 8]), &z(&[1, 3, 8]), &z(&[1, 4, 8]), &Mask::None);
    }));
    std::panic::set_hook(previous);
    assert!(result.is_err());
    let (file, line) = seen.lock().unwrap().clone().expect("a panic location");
    assert_eq!((file.as_str(), line), (file!(), expected_line));
}

#[test]
fn a_non_finite_constant_fill_is_refused() {
    let msg = message(|| {
        let lens = Mask::ValidLens(Tensor::from_vec(vec![1.0], &[1]));
        attention::masked_softmax(&z(&[1, 1, 2]), &lens, Fill::Constant(f32::NEG_INFINITY));
    });
    assert!(
        msg.starts_with("masked_softmax: Fill::Constant needs a finite value, found -inf"),
        "{msg}"
    );
}

#[test]
fn valid_lengths_need_scores_with_a_batch_dimension() {
    let msg = message(|| {
        let lens = Mask::ValidLens(Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3]));
        attention::masked_softmax(&z(&[3, 4]), &lens, Fill::Safe);
    });
    assert!(
        msg.starts_with("masked_softmax: valid lengths need attention scores with a batch dimension, [B, ..., Q, K], found [3, 4]"),
        "{msg}"
    );
}

#[test]
fn bahdanau_refuses_a_causal_mask() {
    let msg = message(|| {
        BahdanauAttention::new(4, 4, 4, 8).forward(
            &z(&[2, 4]),
            &z(&[2, 3, 4]),
            &z(&[2, 3, 4]),
            &Mask::causal(),
        );
    });
    assert!(
        msg.starts_with(
            "BahdanauAttention: a causal mask has no meaning for one query per example"
        ),
        "{msg}"
    );
}

#[test]
fn multi_head_additive_attention_names_itself() {
    let attention = MultiHeadAdditiveAttention::new(4, 4, 4, 8, 2);
    let msg = message(|| {
        attention.forward(&z(&[2, 5]), &z(&[2, 3, 4]), &z(&[2, 3, 4]), &Mask::None);
    });
    assert_eq!(
        msg,
        "MultiHeadAdditiveAttention: query [2, 5] has 5 at dimension 1 but query_size is 4"
    );
    let msg = message(|| {
        let mask = Mask::Keep(Tensor::ones(&[2, 7]));
        attention.forward(&z(&[2, 4]), &z(&[2, 3, 4]), &z(&[2, 3, 4]), &mask);
    });
    assert!(
        msg.starts_with("MultiHeadAdditiveAttention: the mask has shape [2, 1, 7]"),
        "{msg}"
    );
}

#[test]
fn multi_head_additive_heads_must_agree() {
    let msg = message(|| {
        let heads = vec![
            BahdanauAttention::new(4, 4, 4, 2),
            BahdanauAttention::new(5, 4, 4, 2),
        ];
        MultiHeadAdditiveAttention::from_parts(heads, engine::nn::Linear::new(8, 4, true));
    });
    assert_eq!(
        msg,
        "MultiHeadAdditiveAttention: head 1 takes [query_size, key_size, value_size] = [5, 4, 4] but head 0 takes [4, 4, 4]"
    );
}

#[test]
fn scaled_dot_product_batches_that_do_not_broadcast() {
    let msg = message(|| {
        scaled_dot_product_attention(
            &z(&[2, 3, 8]),
            &z(&[3, 5, 8]),
            &z(&[3, 5, 8]),
            &Mask::None,
            Fill::Safe,
            None,
        );
    });
    assert!(
        msg.starts_with("scaled_dot_product_attention: the leading (batch) dimensions of queries [2, 3, 8], keys [3, 5, 8] and values [3, 5, 8] do not broadcast"),
        "{msg}"
    );
}

#[test]
fn transpose_qkv_wants_three_dimensions() {
    let msg = message(|| {
        MultiHeadAttention::new(8, 2, 0.0, false).transpose_qkv(&z(&[4, 8]));
    });
    assert!(
        msg.starts_with("MultiHeadAttention::transpose_qkv: x must be [B, T, num_hiddens]"),
        "{msg}"
    );
}
