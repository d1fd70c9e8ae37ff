//! Bad input gives a message naming the module, the argument and the shapes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, BahdanauAttention,
    BahdanauAttentionConfig, CausalSelfAttention, CausalSelfAttentionConfig,
    DotProductAttention, DotProductAttentionConfig, Fill, Mask,
    MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig, MultiHeadAttention,
    MultiHeadAttentionConfig, scaled_dot_product_attention,
};
use engine::Tensor;

use crate::common::panic_message as message;
use engine::nn::Module;

fn z(shape: &[usize]) -> Tensor {
    Tensor::zeros(shape)
}

fn additive(
    query_size: usize,
    key_size: usize,
    num_hiddens: usize,
) -> AdditiveAttention {
    AdditiveAttention::new(AdditiveAttentionConfig {
        query_size,
        key_size,
        num_hiddens,
        ..Default::default()
    })
}

/// Bahdanau attention with query, key and value sizes 4 and hidden size 8.
fn bahdanau() -> BahdanauAttention {
    BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 8,
        ..Default::default()
    })
}

fn multi_head(num_hiddens: usize, num_heads: usize) -> MultiHeadAttention {
    MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens,
        num_heads,
        ..Default::default()
    })
}

fn multi_head_additive(
    num_hiddens: usize,
    num_heads: usize,
) -> MultiHeadAdditiveAttention {
    MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens,
        num_heads,
        ..Default::default()
    })
}

fn causal(num_hiddens: usize, num_heads: usize) -> CausalSelfAttention {
    CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens,
        num_heads,
        ..Default::default()
    })
}

#[test]
fn dot_product_queries_and_keys_of_different_sizes() {
    let msg = message(|| {
        DotProductAttention::new(DotProductAttentionConfig::default()).forward(
            &z(&[2, 3, 8]),
            &z(&[2, 5, 6]),
            &z(&[2, 5, 4]),
            &Mask::none(),
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
            &Mask::none(),
        );
    });
    assert_eq!(
        msg,
        "scaled_dot_product_attention: keys [2, 5, 8] and values [2, 4, 8] must hold the same number of entries (dimension -2), found 5 keys and 4 values"
    );
    let msg = message(|| {
        additive(3, 3, 4).forward(
            &z(&[1, 2, 3]),
            &z(&[1, 5, 3]),
            &z(&[1, 6, 2]),
            &Mask::none(),
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
        additive(3, 2, 4).forward(
            &z(&[1, 2, 5]),
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &Mask::none(),
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
        let mask = Mask::keep(&Tensor::ones([1, 1, 3]));
        additive(3, 2, 4).forward(
            &z(&[1, 2, 3]),
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &mask,
        );
    });
    assert!(
        msg.starts_with("AdditiveAttention: a keep mask must have the rank of the attention scores [1, 2, 4] with each dimension equal or 1, found [1, 1, 3]"),
        "{msg}"
    );
}

#[test]
fn bahdanau_query_must_be_one_per_example() {
    let msg = message(|| {
        bahdanau().forward(
            &z(&[2, 1, 4]),
            &z(&[2, 3, 4]),
            &z(&[2, 3, 4]),
            &Mask::none(),
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
        bahdanau().forward(
            &z(&[2, 4]),
            &z(&[3, 3, 4]),
            &z(&[3, 3, 4]),
            &Mask::none(),
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
        let mask = Mask::key_padding(&Tensor::ones([2, 5]));
        bahdanau().forward(&z(&[2, 4]), &z(&[2, 3, 4]), &z(&[2, 3, 4]), &mask);
    });
    assert_eq!(
        msg,
        "BahdanauAttention: a key-padding mask must have shape [B, K] = [2, 3] for attention scores [2, 1, 3], found [2, 5]"
    );
}

#[test]
fn heads_that_do_not_divide_the_model_size() {
    let msg = message(|| {
        multi_head(10, 3);
    });
    assert_eq!(
        msg,
        "MultiHeadAttention::new: num_hiddens (10) is not divisible by num_heads (3); each head gets num_hiddens / num_heads features"
    );
    let msg = message(|| {
        multi_head_additive(10, 4);
    });
    assert!(
        msg.starts_with(
            "MultiHeadAdditiveAttention::new: num_hiddens (10) is not divisible by num_heads (4)"
        ),
        "{msg}"
    );
    let msg = message(|| {
        causal(6, 4);
    });
    assert!(
        msg.starts_with(
            "CausalSelfAttention::new: num_hiddens (6) is not divisible by num_heads (4)"
        ),
        "{msg}"
    );
}

#[test]
fn multi_head_attention_value_of_the_wrong_size() {
    let msg = message(|| {
        multi_head(8, 2).forward(
            &z(&[1, 2, 8]),
            &z(&[1, 3, 8]),
            &z(&[1, 3, 5]),
            &Mask::none(),
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
        let lens = Mask::valid_lens(&Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]));
        multi_head(8, 2).forward(
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
        causal(8, 2).forward(&z(&[1, 3, 6]), &Mask::none());
    });
    assert_eq!(
        msg,
        "CausalSelfAttention::forward: x must be [B, T, num_hiddens] with num_hiddens = 8, found [1, 3, 6]"
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
    let attention = multi_head(8, 2);
    let expected_line = line!() + 2;
    let result = catch_unwind(AssertUnwindSafe(|| {
        attention.forward(
            &z(&[1, 2, 8]),
            &z(&[1, 3, 8]),
            &z(&[1, 4, 8]),
            &Mask::none(),
        );
    }));
    std::panic::set_hook(previous);
    assert!(result.is_err());
    let (file, line) = seen.lock().unwrap().clone().expect("a panic location");
    assert_eq!((file.as_str(), line), (file!(), expected_line));
}

#[test]
fn a_non_finite_constant_fill_is_refused() {
    let msg = message(|| {
        let lens = Mask::valid_lens(&Tensor::from_vec(vec![1.0], [1]));
        attention::masked_softmax(
            &z(&[1, 1, 2]),
            &lens,
            Fill::Constant(f32::NEG_INFINITY),
        );
    });
    assert!(
        msg.starts_with(
            "masked_softmax: Fill::Constant needs a finite value, found -inf"
        ),
        "{msg}"
    );
}

#[test]
fn valid_lengths_need_scores_with_a_batch_dimension() {
    let msg = message(|| {
        let lens = Mask::valid_lens(&Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]));
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
        bahdanau().forward(
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
    let attention = multi_head_additive(8, 2);
    let msg = message(|| {
        attention.forward(&z(&[2, 5]), &z(&[2, 3, 4]), &z(&[2, 3, 4]), &Mask::none());
    });
    assert_eq!(
        msg,
        "MultiHeadAdditiveAttention: query [2, 5] has 5 at dimension 1 but query_size is 4"
    );
    let msg = message(|| {
        let mask = Mask::key_padding(&Tensor::ones([2, 7]));
        attention.forward(&z(&[2, 4]), &z(&[2, 3, 4]), &z(&[2, 3, 4]), &mask);
    });
    assert_eq!(
        msg,
        "MultiHeadAdditiveAttention: a key-padding mask must have shape [B, K] = [2, 3] for attention scores [2, 1, 3], found [2, 7]"
    );
}

#[test]
fn multi_head_additive_heads_must_agree() {
    // Every head takes the sizes of the config: a head whose weights have another query size
    // is reported by name, with the shape it should have.
    let attention = multi_head_additive(4, 2);
    let mut state = attention.state_dict();
    state.insert("heads.1.W_q.weight", z(&[2, 5]));
    let err = MultiHeadAdditiveAttention::from_state_dict(
        MultiHeadAdditiveAttentionConfig {
            query_size: 4,
            key_size: 4,
            value_size: 4,
            num_hiddens: 4,
            num_heads: 2,
            ..Default::default()
        },
        &state,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "load_state_dict: the state does not fit the module\n  heads.1.W_q.weight: expected shape [2, 4], found [2, 5]"
    );
}

#[test]
fn scaled_dot_product_batches_that_do_not_broadcast() {
    let msg = message(|| {
        scaled_dot_product_attention(
            &z(&[2, 3, 8]),
            &z(&[3, 5, 8]),
            &z(&[3, 5, 8]),
            &Mask::none(),
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
        multi_head(8, 2).transpose_qkv(&z(&[4, 8]));
    });
    assert!(
        msg.starts_with(
            "MultiHeadAttention::transpose_qkv: x must be [B, T, num_hiddens]"
        ),
        "{msg}"
    );
}
