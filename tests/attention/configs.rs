//! What the configs set and what the accessors report: initial ranges, head counts, and
//! refused settings; and the shapes the functional form accepts.

use attention::prelude::*;

#[test]
fn bahdanau_draws_its_score_vector_from_plus_or_minus_one_over_root_h() {
    manual_seed(11);
    let attention = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 3,
        key_size: 3,
        value_size: 3,
        num_hiddens: 64,
        ..Default::default()
    });
    let bound = 1.0 / 8.0; // 1/√64
    let v = attention.v().to_vec();
    assert_eq!(v.len(), 64);
    assert!(v.iter().all(|x| x.abs() <= bound), "{v:?}");
    // 64 uniform draws reach past half the bound on both sides.
    assert!(
        v.iter().any(|&x| x > bound / 2.0) && v.iter().any(|&x| x < -bound / 2.0)
    );
}

#[test]
fn causal_self_attention_reports_its_sizes() {
    let layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 12,
        num_heads: 3,
        ..Default::default()
    });
    assert_eq!((layer.num_hiddens(), layer.num_heads()), (12, 3));
}

#[test]
fn multi_head_modules_report_their_head_counts() {
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 12,
        num_heads: 4,
        ..Default::default()
    });
    let additive =
        MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
            query_size: 2,
            key_size: 2,
            value_size: 2,
            num_hiddens: 6,
            num_heads: 3,
            ..Default::default()
        });
    assert_eq!((mha.num_heads(), additive.num_heads()), (4, 3));
}

#[test]
#[should_panic(
    expected = "MultiHeadAttention::new: dropout must be a probability in [0, 1], found 1.5"
)]
fn a_dropout_above_one_is_refused_by_name() {
    MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        dropout: 1.5,
        ..Default::default()
    });
}

#[test]
#[should_panic(
    expected = "CausalSelfAttention::new: dropout must be a probability in [0, 1], found -0.1"
)]
fn a_negative_dropout_is_refused_by_name() {
    CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        dropout: -0.1,
        ..Default::default()
    });
}

#[test]
fn scaled_dot_product_attention_takes_unbatched_queries_and_keys() {
    // [Q, d] against [K, d] with Q ≠ K: no leading dimension at all.
    let q = Tensor::zeros([2, 4]);
    let k = Tensor::zeros([3, 4]);
    let v = Tensor::from_vec(vec![0.0, 3.0, 6.0], [3, 1]);
    let (out, w) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    assert_eq!(w.shape(), &[2, 3]);
    assert_eq!(out.to_vec(), vec![3.0, 3.0]); // equal weights: the mean of the values
}

#[test]
fn multi_head_attention_shares_a_batch_one_keep_mask_across_examples_and_heads() {
    // One [1, Q, K] mask for a batch of 2 and 2 heads gives the same output as the same
    // mask written out for each example.
    manual_seed(12);
    let mut mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    mha.eval();
    let x = Tensor::randn([2, 3, 4]);
    let shared = Tensor::from_vec(
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        [1, 3, 3],
    );
    let out_shared = mha.forward(&x, &x, &x, &Mask::keep(&shared));
    let out_each = mha.forward(&x, &x, &x, &Mask::keep(&shared.expand([2, 3, 3])));
    assert_eq!(out_shared.to_vec(), out_each.to_vec());
    let w = mha.last_attention_weights().unwrap().to_vec();
    // Every [Q, K] panel (2 examples × 2 heads) hides exactly the masked keys.
    for panel in w.chunks(9) {
        for (i, &m) in shared.to_vec().iter().enumerate() {
            assert_eq!(panel[i] == 0.0, m == 0.0, "{panel:?}");
        }
    }
}

#[test]
fn bias_defaults_to_false_where_d2l_defines_the_module_and_true_elsewhere() {
    // d2l's MultiHeadAttention(..., bias=False) is the definition.
    assert!(!MultiHeadAttentionConfig::default().bias);
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    assert_eq!(mha.num_parameters(), 4 * 4 * 4);
    // No d2l definition: biases, as GPT-2 and nn.MultiheadAttention have them.
    assert!(CausalSelfAttentionConfig::default().bias);
    let causal = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    assert_eq!(causal.num_parameters(), 4 * (4 * 4 + 4));
}

#[test]
fn every_config_names_the_model_size_num_hiddens() {
    // One name for the same size in every config (d2l's), the accessors included.
    let causal = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 6,
        num_heads: 3,
        ..Default::default()
    });
    let bahdanau = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 2,
        key_size: 2,
        value_size: 2,
        num_hiddens: 6,
        ..Default::default()
    });
    assert_eq!((causal.num_hiddens(), bahdanau.num_hiddens()), (6, 6));
    let additive = AdditiveAttentionConfig {
        num_hiddens: 6,
        ..Default::default()
    };
    let multi_head = MultiHeadAttentionConfig {
        num_hiddens: 6,
        ..Default::default()
    };
    let multi_head_additive = MultiHeadAdditiveAttentionConfig {
        num_hiddens: 6,
        ..Default::default()
    };
    assert_eq!(
        (
            additive.num_hiddens,
            multi_head.num_hiddens,
            multi_head_additive.num_hiddens
        ),
        (6, 6, 6)
    );
}
