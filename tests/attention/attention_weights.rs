//! Every module keeps its last attention weights for plotting, detached and shaped as
//! documented.

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, AttentionWeights, BahdanauAttention,
    BahdanauAttentionConfig, CausalSelfAttention, CausalSelfAttentionConfig,
    DotProductAttention, DotProductAttentionConfig, Mask, MultiHeadAdditiveAttention,
    MultiHeadAdditiveAttentionConfig, MultiHeadAttention, MultiHeadAttentionConfig,
};
use engine::Tensor;

fn dot() -> DotProductAttention {
    DotProductAttention::new(DotProductAttentionConfig::default())
}

/// `num_hiddens` 4, two heads, no dropout, no bias.
fn mha() -> MultiHeadAttention {
    MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    })
}

fn assert_rows_sum_to_one(w: &Tensor) {
    let k = w.size(-1);
    for (r, row) in w.to_vec().chunks(k).enumerate() {
        assert!(
            (row.iter().sum::<f32>() - 1.0).abs() < 1e-5,
            "row {r} of {:?}",
            w.shape()
        );
    }
}

#[test]
fn weights_are_none_before_the_first_forward() {
    assert!(dot().last_attention_weights().is_none());
    assert!(mha().last_attention_weights().is_none());
}

#[test]
fn each_module_keeps_weights_of_the_documented_shape() {
    engine::manual_seed(21);
    let (q, k, v) = (
        Tensor::randn([2, 3, 4]),
        Tensor::randn([2, 5, 4]),
        Tensor::randn([2, 5, 4]),
    );

    let dot = dot();
    dot.forward(&q, &k, &v, &Mask::none());
    let w = dot.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 3, 5]);
    assert_rows_sum_to_one(&w);

    let additive = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        num_hiddens: 6,
        ..Default::default()
    });
    additive.forward(&q, &k, &v, &Mask::none());
    assert_eq!(
        additive.last_attention_weights().unwrap().shape(),
        &[2, 3, 5]
    );

    let mha = mha();
    mha.forward(&q, &k, &v, &Mask::none());
    let w = mha.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 2, 3, 5]);
    assert_rows_sum_to_one(&w);

    let single = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 6,
        ..Default::default()
    });
    let (_, returned) =
        single.forward(&q.narrow(1, 0, 1).squeeze(1), &k, &v, &Mask::none());
    assert_eq!(
        single.last_attention_weights().unwrap().to_vec(),
        returned.to_vec()
    );
    assert_eq!(returned.shape(), &[2, 5]);

    let heads = MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 6,
        num_heads: 3,
        ..Default::default()
    });
    let (_, returned) =
        heads.forward(&q.narrow(1, 0, 1).squeeze(1), &k, &v, &Mask::none());
    assert_eq!(returned.shape(), &[2, 3, 5]);
    assert_eq!(
        heads.last_attention_weights().unwrap().to_vec(),
        returned.to_vec()
    );

    let causal = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    causal.forward(&q, &Mask::none());
    let w = causal.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 2, 3, 3]);
    assert_eq!(w.to_vec()[1], 0.0, "query 0 cannot see key 1");
}

#[test]
fn kept_weights_are_detached_from_the_graph() {
    let q = Tensor::randn([1, 2, 4]).requires_grad_();
    let dot = dot();
    let out = dot.forward(&q, &q, &q, &Mask::none());
    assert!(out.requires_grad());
    assert!(!dot.last_attention_weights().unwrap().requires_grad());
}

#[test]
fn multi_head_weights_keep_batch_elements_apart() {
    // Different valid lengths per batch element must land on the right element's heads.
    engine::manual_seed(22);
    let mha = mha();
    let x = Tensor::randn([2, 1, 4]);
    let kv = Tensor::randn([2, 3, 4]);
    mha.forward(
        &x,
        &kv,
        &kv,
        &Mask::valid_lens(&Tensor::from_vec(vec![1.0, 3.0], [2])),
    );
    let w = mha.last_attention_weights().unwrap().to_vec(); // [2, 2, 1, 3]
    assert_eq!(&w[0..3], &[1.0, 0.0, 0.0], "element 0, head 0 sees one key");
    assert_eq!(&w[3..6], &[1.0, 0.0, 0.0], "element 0, head 1 sees one key");
    assert!(
        w[6..].iter().all(|&x| x > 0.0),
        "element 1 sees all three keys in both heads"
    );
}

#[test]
fn multi_head_attention_handles_zero_queries() {
    let mha = mha();
    let kv = Tensor::randn([2, 3, 4]);
    let y = mha.forward(&Tensor::zeros([2, 0, 4]), &kv, &kv, &Mask::none());
    assert_eq!(y.shape(), &[2, 0, 4]);
    assert_eq!(mha.last_attention_weights().unwrap().shape(), &[2, 2, 0, 3]);
}
