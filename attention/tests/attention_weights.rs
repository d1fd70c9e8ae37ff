//! Every module keeps its last attention weights for plotting, detached and shaped as
//! documented.

use attention::{
    AdditiveAttention, AttentionWeights, BahdanauAttention, CausalSelfAttention,
    DotProductAttention, Mask, MultiHeadAdditiveAttention, MultiHeadAttention,
};
use engine::Tensor;

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
    assert!(
        DotProductAttention::new(0.0)
            .last_attention_weights()
            .is_none()
    );
    assert!(
        MultiHeadAttention::new(4, 2, 0.0, false)
            .last_attention_weights()
            .is_none()
    );
}

#[test]
fn each_module_keeps_weights_of_the_documented_shape() {
    engine::manual_seed(21);
    let (q, k, v) = (
        Tensor::randn(&[2, 3, 4]),
        Tensor::randn(&[2, 5, 4]),
        Tensor::randn(&[2, 5, 4]),
    );

    let dot = DotProductAttention::new(0.0);
    dot.forward(&q, &k, &v, &Mask::None);
    let w = dot.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 3, 5]);
    assert_rows_sum_to_one(&w);

    let additive = AdditiveAttention::new(4, 4, 6, 0.0);
    additive.forward(&q, &k, &v, &Mask::None);
    assert_eq!(
        additive.last_attention_weights().unwrap().shape(),
        &[2, 3, 5]
    );

    let mha = MultiHeadAttention::new(4, 2, 0.0, false);
    mha.forward(&q, &k, &v, &Mask::None);
    let w = mha.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 2, 3, 5]);
    assert_rows_sum_to_one(&w);

    let single = BahdanauAttention::new(4, 4, 4, 6);
    let (_, returned) = single.forward(&q.narrow(1, 0, 1).squeeze(1), &k, &v, &Mask::None);
    assert_eq!(
        single.last_attention_weights().unwrap().to_vec(),
        returned.to_vec()
    );
    assert_eq!(returned.shape(), &[2, 5]);

    let heads = MultiHeadAdditiveAttention::new(4, 4, 4, 6, 3);
    let (_, returned) = heads.forward(&q.narrow(1, 0, 1).squeeze(1), &k, &v, &Mask::None);
    assert_eq!(returned.shape(), &[2, 3, 5]);
    assert_eq!(
        heads.last_attention_weights().unwrap().to_vec(),
        returned.to_vec()
    );

    let causal = CausalSelfAttention::new(4, 2, true);
    causal.forward(&q);
    let w = causal.last_attention_weights().unwrap();
    assert_eq!(w.shape(), &[2, 2, 3, 3]);
    assert_eq!(w.to_vec()[1], 0.0, "query 0 cannot see key 1");
}

#[test]
fn kept_weights_are_detached_from_the_graph() {
    let q = Tensor::randn(&[1, 2, 4]).requires_grad_();
    let dot = DotProductAttention::new(0.0);
    let out = dot.forward(&q, &q, &q, &Mask::None);
    assert!(out.requires_grad());
    assert!(!dot.last_attention_weights().unwrap().requires_grad());
}

#[test]
fn multi_head_weights_keep_batch_elements_apart() {
    // Different valid lengths per batch element must land on the right element's heads.
    engine::manual_seed(22);
    let mha = MultiHeadAttention::new(4, 2, 0.0, false);
    let x = Tensor::randn(&[2, 1, 4]);
    let kv = Tensor::randn(&[2, 3, 4]);
    mha.forward(
        &x,
        &kv,
        &kv,
        &Mask::ValidLens(Tensor::from_vec(vec![1.0, 3.0], &[2])),
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
    let mha = MultiHeadAttention::new(4, 2, 0.0, false);
    let kv = Tensor::randn(&[2, 3, 4]);
    let y = mha.forward(&Tensor::zeros(&[2, 0, 4]), &kv, &kv, &Mask::None);
    assert_eq!(y.shape(), &[2, 0, 4]);
    assert_eq!(mha.last_attention_weights().unwrap().shape(), &[2, 2, 0, 3]);
}
