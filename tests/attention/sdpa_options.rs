//! `scaled_dot_product_attention_with`: each of PyTorch's named options against the plain
//! call or numbers worked out by hand, and the refused arguments.

use attention::prelude::*;

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

fn qkv(seed: u64) -> (Tensor, Tensor, Tensor) {
    manual_seed(seed);
    (
        Tensor::randn([2, 3, 4]),
        Tensor::randn([2, 5, 4]),
        Tensor::randn([2, 5, 2]),
    )
}

#[test]
fn default_options_are_the_plain_call() {
    let (q, k, v) = qkv(60);
    let (out, w) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    let (out_with, w_with) =
        scaled_dot_product_attention_with(&q, &k, &v, &SdpaOptions::default());
    assert_eq!(out_with.to_vec(), out.to_vec());
    assert_eq!(w_with.to_vec(), w.to_vec());
}

#[test]
fn a_dropout_p_of_zero_draws_no_random_numbers() {
    // p = 0 is no dropout at all: the generator is left where it was, so the numbers drawn
    // after the call are the ones drawn without it.
    let (q, k, v) = qkv(66);
    manual_seed(7);
    let options = SdpaOptions {
        dropout_p: 0.0,
        ..Default::default()
    };
    let (out, _) = scaled_dot_product_attention_with(&q, &k, &v, &options);
    let after_the_call = Tensor::randn([4]).to_vec();
    manual_seed(7);
    let untouched = Tensor::randn([4]).to_vec();
    assert_eq!(after_the_call, untouched);
    let (plain, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    assert_eq!(out.to_vec(), plain.to_vec());
}

#[test]
fn the_mask_option_is_the_plain_calls_mask() {
    let (q, k, v) = qkv(61);
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 4.0], [2]));
    let (out, w) = scaled_dot_product_attention(&q, &k, &v, &lens);
    let options = SdpaOptions {
        mask: lens,
        ..Default::default()
    };
    let (out_with, w_with) = scaled_dot_product_attention_with(&q, &k, &v, &options);
    assert_eq!(out_with.to_vec(), out.to_vec());
    assert_eq!(w_with.to_vec(), w.to_vec());
}

#[test]
fn is_causal_aligns_to_the_first_key_as_pytorch_does() {
    // Equal scores: each query spreads its weight evenly over the keys it may see.
    let q = Tensor::zeros([1, 2, 2]);
    let k = Tensor::zeros([1, 3, 2]);
    let v = Tensor::from_vec(vec![3.0, 6.0, 9.0], [1, 3, 1]);
    let options = SdpaOptions {
        is_causal: true,
        ..Default::default()
    };
    let (out, w) = scaled_dot_product_attention_with(&q, &k, &v, &options);
    // torch.ones(2, 3).tril(): query 0 sees key 0, query 1 keys 0 and 1.
    assert_eq!(w.to_vec(), vec![1.0, 0.0, 0.0, 0.5, 0.5, 0.0]);
    assert_eq!(out.to_vec(), vec![3.0, 4.5]);
    // The same as the plain call with causal order from offset 0; Mask::causal() is
    // aligned to the last key instead (queries 1 and 2 of 3 tokens).
    let (_, top_left) =
        scaled_dot_product_attention(&q, &k, &v, &Mask::causal_with_offset(0));
    assert_eq!(top_left.to_vec(), w.to_vec());
    let (_, last) = scaled_dot_product_attention(&q, &k, &v, &Mask::causal());
    assert_eq!(
        last.to_vec(),
        vec![0.5, 0.5, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]
    );
}

#[test]
fn is_causal_combines_with_the_mask() {
    let q = Tensor::zeros([1, 3, 2]);
    let v = Tensor::from_vec(vec![3.0, 6.0, 9.0], [1, 3, 1]);
    let pad = Tensor::from_vec(vec![0.0, 1.0, 1.0], [1, 3]); // key 0 is padding
    let options = SdpaOptions {
        mask: Mask::key_padding(&pad),
        is_causal: true,
        ..Default::default()
    };
    let (_, w) = scaled_dot_product_attention_with(&q, &q, &v, &options);
    // Query 0 sees no key (safe fill: zeros), query 1 key 1, query 2 keys 1 and 2.
    assert_eq!(
        w.to_vec(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.5]
    );
}

#[test]
fn scale_multiplies_the_scores_in_place_of_one_over_root_d() {
    // Scores ln 3 and 0 at scale ln 3: weights 3/4 and 1/4.
    let q = Tensor::from_vec(vec![1.0, 0.0], [1, 1, 2]);
    let k = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0], [1, 2, 2]);
    let v = Tensor::from_vec(vec![1.0, 2.0], [1, 2, 1]);
    let options = SdpaOptions {
        scale: Some(3f32.ln()),
        ..Default::default()
    };
    let (out, w) = scaled_dot_product_attention_with(&q, &k, &v, &options);
    assert!(close(&w.to_vec(), &[0.75, 0.25], 1e-6), "{w:?}");
    assert!(close(&out.to_vec(), &[1.25], 1e-6), "{out:?}");
    // The plain call reaches the same weights with queries multiplied by scale·√d.
    let scaled_q = &q * (3f32.ln() * 2f32.sqrt());
    let (_, plain) = scaled_dot_product_attention(&scaled_q, &k, &v, &Mask::none());
    assert!(close(&plain.to_vec(), &w.to_vec(), 1e-6));
}

#[test]
fn fill_decides_what_a_fully_masked_row_gets() {
    let (q, k, v) = qkv(62);
    let nothing = Mask::valid_lens(&Tensor::from_vec(vec![0.0, 5.0], [2]));
    let options = SdpaOptions {
        mask: nothing.clone(),
        fill: Fill::D2l,
        ..Default::default()
    };
    let (_, d2l) = scaled_dot_product_attention_with(&q, &k, &v, &options);
    let (_, safe) = scaled_dot_product_attention(&q, &k, &v, &nothing);
    // Example 0 sees no key: uniform over all five under d2l's -1e6, zeros under Safe.
    assert!(close(&d2l.to_vec()[..15], &[0.2; 15], 1e-6));
    assert_eq!(&safe.to_vec()[..15], &[0.0; 15]);
    // Example 1 sees every key: the same either way.
    assert!(close(&d2l.to_vec()[15..], &safe.to_vec()[15..], 1e-7));
}

#[test]
fn dropout_p_drops_weights_before_the_values_and_returns_them_undropped() {
    let (q, k, _) = qkv(63);
    // Values that are the identity, so the output is the dropped weights themselves.
    let eye = Tensor::from_vec(
        (0..25)
            .map(|i| if i % 6 == 0 { 1.0 } else { 0.0 })
            .collect(),
        [1, 5, 5],
    );
    let options = SdpaOptions {
        dropout_p: 0.5,
        ..Default::default()
    };
    manual_seed(7);
    let (out, w) = scaled_dot_product_attention_with(&q, &k, &eye, &options);
    let (_, plain) = scaled_dot_product_attention(&q, &k, &eye, &Mask::none());
    assert_eq!(
        w.to_vec(),
        plain.to_vec(),
        "the weights returned are before dropout"
    );
    let (mut kept, mut dropped) = (0, 0);
    for (o, w) in out.to_vec().iter().zip(w.to_vec()) {
        if *o == 0.0 {
            dropped += 1;
        } else {
            assert!(
                (o - 2.0 * w).abs() < 1e-6,
                "a survivor is scaled by 1/(1 − p)"
            );
            kept += 1;
        }
    }
    assert!(kept > 0 && dropped > 0, "{kept} kept, {dropped} dropped");
    // The same draw as the engine's dropout from the same seed.
    manual_seed(7);
    let expected = plain.dropout(0.5, true).matmul(&eye);
    assert_eq!(out.to_vec(), expected.to_vec());
}

#[test]
#[should_panic(
    expected = "scaled_dot_product_attention_with: dropout_p must be a probability in [0, 1], found 1.5"
)]
fn a_dropout_p_above_one_is_refused() {
    let (q, k, v) = qkv(64);
    let options = SdpaOptions {
        dropout_p: 1.5,
        ..Default::default()
    };
    scaled_dot_product_attention_with(&q, &k, &v, &options);
}

#[test]
#[should_panic(
    expected = "scaled_dot_product_attention_with: scale must be finite and greater than 0, found 0; hint: None uses 1/√d"
)]
fn a_zero_scale_is_refused() {
    let (q, k, v) = qkv(65);
    let options = SdpaOptions {
        scale: Some(0.0),
        ..Default::default()
    };
    scaled_dot_product_attention_with(&q, &k, &v, &options);
}

#[test]
#[should_panic(
    expected = "scaled_dot_product_attention: queries [2, 3, 0] and keys [2, 4, 0] have no features (d = 0): every score Q Kᵀ would be an empty sum and the scale 1/√d infinite; hint: check the size that was split or narrowed to make them"
)]
fn a_feature_size_of_zero_is_refused_instead_of_giving_nan_weights() {
    let q = Tensor::zeros([2, 3, 0]);
    let k = Tensor::zeros([2, 4, 0]);
    let v = Tensor::ones([2, 4, 2]);
    scaled_dot_product_attention(&q, &k, &v, &Mask::none());
}

#[test]
#[should_panic(
    expected = "DotProductAttention: queries [1, 1, 0] and keys [1, 2, 0] have no features"
)]
fn the_module_refuses_a_feature_size_of_zero_too() {
    let attention = DotProductAttention::new(DotProductAttentionConfig::default());
    attention.forward(
        &Tensor::zeros([1, 1, 0]),
        &Tensor::zeros([1, 2, 0]),
        &Tensor::ones([1, 2, 1]),
        &Mask::none(),
    );
}
