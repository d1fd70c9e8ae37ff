//! One test per point of the API redesign ("One clear API before the book quotes it"), each
//! pinned to real values or exact messages.

use attention::{
    AdditiveAttention, AdditiveAttentionConfig, AttentionWeights, BahdanauAttention,
    BahdanauAttentionConfig, CausalSelfAttention, CausalSelfAttentionConfig,
    DotProductAttention, DotProductAttentionConfig, Fill, KvCache, Mask,
    MultiHeadAdditiveAttention, MultiHeadAdditiveAttentionConfig, MultiHeadAttention,
    MultiHeadAttentionConfig, masked_softmax, scaled_dot_product_attention,
};
use engine::gradcheck::gradcheck;
use engine::nn::{Module, StateDict};
use engine::{Tensor, no_grad};

use crate::common::panic_message;

#[track_caller]
fn assert_contains(message: &str, fragment: &str) {
    assert!(
        message.contains(fragment),
        "expected {fragment:?} in the message:\n{message}"
    );
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[track_caller]
fn assert_close(actual: &[f32], expected: &[f32], tol: f32, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tol,
            "{what}: element {i} is {a}, expected {e} (actual {actual:?})"
        );
    }
}

fn causal_layer(num_hiddens: usize, num_heads: usize) -> CausalSelfAttention {
    CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens,
        num_heads,
        ..Default::default()
    })
}

// ---------------------------------------------------------------------------------------
// Item 2: decoding with a KV cache is inference; training goes through `forward`.
// ---------------------------------------------------------------------------------------

#[test]
fn prefill_while_recording_gradients_panics_and_points_to_no_grad() {
    engine::manual_seed(30);
    let layer = causal_layer(4, 2);
    let x = Tensor::randn([1, 3, 4]);
    let mut cache = KvCache::new(4);
    let msg = panic_message(|| {
        layer.prefill(&x, &mut cache, &Mask::none());
    });
    assert_contains(
        &msg,
        "CausalSelfAttention::prefill: gradients are being recorded",
    );
    assert_contains(&msg, "run it inside engine::no_grad(|| ...)");
    assert_contains(&msg, "to train, use forward()");
    assert!(cache.is_empty(), "nothing was stored");
    let msg = panic_message(|| {
        layer.step(&x.narrow(1, 0, 1), &mut cache, &Mask::none());
    });
    assert_contains(
        &msg,
        "CausalSelfAttention::step: gradients are being recorded",
    );
}

#[test]
fn prefill_and_step_under_no_grad_equal_forward() {
    engine::manual_seed(31);
    let layer = causal_layer(4, 2);
    let x = Tensor::randn([2, 4, 4]);
    let full = layer.forward(&x, &Mask::none());
    let mut cache = KvCache::new(1);
    let decoded = no_grad(|| {
        let first = layer.prefill(&x.narrow(1, 0, 2), &mut cache, &Mask::none());
        let third = layer.step(&x.narrow(1, 2, 1), &mut cache, &Mask::none());
        let fourth = layer.step(&x.narrow(1, 3, 1), &mut cache, &Mask::none());
        Tensor::concat(&[first, third, fourth], 1)
    });
    assert_eq!(cache.len(), 4);
    assert!(!decoded.requires_grad());
    assert!(max_abs_diff(&full, &decoded) < 1e-5);
}

#[test]
fn kv_cache_append_refuses_tensors_that_require_grad_while_recording() {
    let keys = Tensor::ones([1, 1, 2, 3]).requires_grad_();
    let values = Tensor::ones([1, 1, 2, 3]);
    let msg = panic_message(|| KvCache::new(4).append(&keys, &values));
    assert_contains(
        &msg,
        "KvCache::append: the keys or values require a gradient",
    );
    assert_contains(&msg, "engine::no_grad");
    // Under no_grad the same tensors are plain values.
    let mut cache = KvCache::new(4);
    no_grad(|| cache.append(&keys, &values));
    assert_eq!(cache.keys().to_vec(), vec![1.0; 6]);
}

#[test]
fn forward_gives_w_k_and_w_v_gradients_on_the_layers_own_parameters() {
    // (tests/gradients.rs holds every parameter's gradient to finite differences.)
    engine::manual_seed(32);
    let d = 4;
    let names = ["W_q", "W_k", "W_v", "W_o"];
    let state: StateDict = names
        .iter()
        .flat_map(|n| {
            [
                (format!("{n}.weight"), Tensor::randn([d, d]) * 0.5),
                (format!("{n}.bias"), Tensor::randn([d]) * 0.5),
            ]
        })
        .map(|(n, t)| (n, t.requires_grad_()))
        .collect();
    let config = CausalSelfAttentionConfig {
        num_hiddens: d,
        num_heads: 2,
        ..Default::default()
    };
    let layer = CausalSelfAttention::from_state_dict(config, &state).unwrap();
    let x = Tensor::randn([2, 3, d]) * 0.5;
    gradcheck(
        |t| layer.forward(&t[0], &Mask::none()),
        std::slice::from_ref(&x),
    )
    .unwrap();

    layer.zero_grad();
    (layer.forward(&x, &Mask::none()) * Tensor::randn([2, 3, d]))
        .sum()
        .backward();
    let params = layer.named_parameters();
    for name in ["W_k.weight", "W_v.weight"] {
        let (_, p) = params.iter().find(|(n, _)| n == name).unwrap();
        let g = p.grad().unwrap().to_vec();
        assert!(g.iter().any(|&v| v != 0.0), "{name}: {g:?}");
        // The layer owns its parameters: the state's tensors get nothing.
        assert!(state.get(name).unwrap().grad().is_err(), "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Item 3: a [B, K] padding mask cannot be read as a [Q, K] mask.
// ---------------------------------------------------------------------------------------

/// B = Q = 2 and K = 3: example 0 pads key 2, example 1 pads key 1. Read as a [Q, K] mask
/// it would instead hide key 2 from query 0 and key 1 from query 1, in both examples.
fn padding_b_equals_q() -> Tensor {
    Tensor::from_vec(vec![1.0, 1.0, 0.0, 1.0, 0.0, 1.0], [2, 3])
}

/// Checks `masked` (`[B, ..., K]`, rows of the same example consecutive) against `full`
/// (the same without a mask): padded keys get exactly 0, visible keys the unmasked weights
/// renormalised over the visible keys.
#[track_caller]
fn assert_padding_renormalises(
    masked: &Tensor,
    full: &Tensor,
    pad: &Tensor,
    what: &str,
) {
    let k = pad.shape()[1];
    let batch = pad.shape()[0];
    let pad = pad.to_vec();
    let rows_per_example = masked.numel() / (batch * k);
    let (masked, full) = (masked.to_vec(), full.to_vec());
    for (r, (row, unmasked)) in masked.chunks(k).zip(full.chunks(k)).enumerate() {
        let keep = &pad[(r / rows_per_example) * k..][..k];
        let visible: f32 = unmasked.iter().zip(keep).map(|(w, m)| w * m).sum();
        for key in 0..k {
            if keep[key] == 0.0 {
                assert_eq!(row[key], 0.0, "{what}: row {r} key {key} is padding");
            } else {
                let expected = unmasked[key] / visible;
                assert!(
                    (row[key] - expected).abs() < 1e-5,
                    "{what}: row {r} key {key}: {} vs {expected}",
                    row[key]
                );
            }
        }
    }
}

#[test]
fn a_b_by_k_tensor_as_a_keep_mask_is_refused_with_a_key_padding_hint() {
    let pad = padding_b_equals_q();
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    let x = Tensor::randn([2, 2, 4]);
    let kv = Tensor::randn([2, 3, 4]);
    let msg = panic_message(|| {
        mha.forward(&x, &kv, &kv, &Mask::keep(&pad));
    });
    assert_contains(
        &msg,
        "MultiHeadAttention: a keep mask must have the rank of the attention scores [2, 2, 3]",
    );
    assert_contains(&msg, "hint: a [B, K] padding mask is Mask::key_padding");
    let msg = panic_message(|| {
        scaled_dot_product_attention(&x, &kv, &kv, &Mask::keep(&pad));
    });
    assert_contains(
        &msg,
        "scaled_dot_product_attention: a keep mask must have the rank of the attention scores [2, 2, 3]",
    );
    assert_contains(&msg, "Mask::key_padding");
}

#[test]
fn key_padding_hides_the_same_keys_from_every_query_in_mha_sdpa_and_bahdanau() {
    engine::manual_seed(33);
    let pad = padding_b_equals_q();
    let padding = Mask::key_padding(&pad);

    // Scaled dot-product attention, scores [B, Q, K]: a hand-computed softmax. Queries and
    // keys are chosen so that the scores are q·k / √2 with simple values.
    let q = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0], [2, 2, 2]);
    let k = Tensor::from_vec(
        vec![1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0],
        [2, 3, 2],
    );
    let v = Tensor::randn([2, 3, 2]);
    let (_, w) = scaled_dot_product_attention(&q, &k, &v, &padding);
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let softmax2 = |a: f32, b: f32| {
        let (ea, eb) = (a.exp(), b.exp());
        (ea / (ea + eb), eb / (ea + eb))
    };
    // Example 0 sees keys 0 and 1: query 0 scores (1, 0)·s, query 1 scores (0, 1)·s.
    let (a, b) = softmax2(s, 0.0);
    // Example 1 sees keys 0 and 2: query 0 ([1, 1]) scores (2, 0)·s, query 1 (zeros) (0, 0).
    let (c, d) = softmax2(2.0 * s, 0.0);
    let expected = [a, b, 0.0, b, a, 0.0, c, 0.0, d, 0.5, 0.0, 0.5];
    let got = w.to_vec();
    for (i, (&g, &e)) in got.iter().zip(&expected).enumerate() {
        if e == 0.0 {
            assert_eq!(g, 0.0, "element {i} of {got:?}");
        } else {
            assert!((g - e).abs() < 1e-6, "element {i}: {got:?} vs {expected:?}");
        }
    }
    let (_, unmasked) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    assert_padding_renormalises(&w, &unmasked, &pad, "scaled_dot_product_attention");

    // Multi-head attention: [B, H, Q, K] weights, every head and query alike.
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    });
    let x = Tensor::randn([2, 2, 4]);
    let kv = Tensor::randn([2, 3, 4]);
    mha.forward(&x, &kv, &kv, &Mask::none());
    let unmasked = mha.last_attention_weights().unwrap();
    mha.forward(&x, &kv, &kv, &padding);
    let masked = mha.last_attention_weights().unwrap();
    assert_eq!(masked.shape(), &[2, 2, 2, 3]);
    assert_padding_renormalises(&masked, &unmasked, &pad, "MultiHeadAttention");

    // Bahdanau attention: one row of [B, K] weights per example.
    let bahdanau = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 6,
        ..Default::default()
    });
    let query = Tensor::randn([2, 4]);
    let (_, unmasked) = bahdanau.forward(&query, &kv, &kv, &Mask::none());
    let (_, masked) = bahdanau.forward(&query, &kv, &kv, &padding);
    assert_eq!(masked.shape(), &[2, 3]);
    assert_padding_renormalises(&masked, &unmasked, &pad, "BahdanauAttention");
}

// ---------------------------------------------------------------------------------------
// Item 4: causal order is aligned to the last key.
// ---------------------------------------------------------------------------------------

#[test]
fn causal_mask_lets_one_decode_query_see_every_cached_key() {
    let scores = Tensor::zeros([1, 1, 5]);
    let w = masked_softmax(&scores, &Mask::causal(), Fill::Safe);
    assert_eq!(w.to_vec(), vec![0.2; 5]);
    // The same through scaled dot-product attention: one query against five keys.
    let (_, w) = scaled_dot_product_attention(
        &Tensor::zeros([1, 1, 3]),
        &Tensor::randn([1, 5, 3]),
        &Tensor::randn([1, 5, 2]),
        &Mask::causal(),
    );
    assert_eq!(w.to_vec(), vec![0.2; 5]);
}

#[test]
fn causal_with_offset_zero_keeps_the_top_left_alignment() {
    let w = masked_softmax(
        &Tensor::zeros([1, 1, 5]),
        &Mask::causal_with_offset(0),
        Fill::Safe,
    );
    assert_eq!(w.to_vec(), vec![1.0, 0.0, 0.0, 0.0, 0.0]);
    let w = masked_softmax(
        &Tensor::zeros([1, 2, 4]),
        &Mask::causal_with_offset(0),
        Fill::Safe,
    );
    assert_eq!(w.to_vec(), vec![1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0]);
}

#[test]
fn causal_mask_with_fewer_keys_than_queries_panics_with_a_hint() {
    let msg = panic_message(|| {
        masked_softmax(&Tensor::zeros([1, 3, 2]), &Mask::causal(), Fill::Safe);
    });
    assert_contains(
        &msg,
        "masked_softmax: a causal mask aligned to the last key needs at least as many keys as queries, found 3 queries and 2 keys",
    );
    assert_contains(&msg, "hint: Mask::causal_with_offset(o)");
}

// ---------------------------------------------------------------------------------------
// Item 5: the safe fill uses no sentinel value.
// ---------------------------------------------------------------------------------------

#[test]
fn safe_softmax_ignores_masked_keys_even_beside_f32_min_and_minus_infinity() {
    let inf = f32::INFINITY;
    // Row 0: visible scores at f32::MIN, the masked key at 5.
    // Row 1: visible scores -inf and 0, one masked key.
    // Row 2: every visible score -inf.
    let scores = Tensor::from_vec(
        vec![f32::MIN, f32::MIN, 5.0, -inf, 0.0, 3.0, -inf, -inf, 1.0],
        [3, 1, 3],
    )
    .requires_grad_();
    let keep = Tensor::from_vec(
        vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0],
        [3, 1, 3],
    );
    let w = masked_softmax(&scores, &Mask::keep(&keep), Fill::Safe);
    let rows = w.to_vec();
    assert_eq!(&rows[0..3], &[0.5, 0.5, 0.0]);
    assert_eq!(rows[0..3].iter().sum::<f32>(), 1.0);
    assert_eq!(&rows[3..6], &[0.0, 1.0, 0.0]);
    assert_eq!(&rows[6..9], &[0.0, 0.0, 0.0]);

    // Gradients of a weighted sum: finite everywhere, and the softmax derivative
    // w_i (u_i − Σ_j w_j u_j) on the visible keys, 0 on the masked ones.
    let upstream = Tensor::from_vec(
        vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
        [3, 1, 3],
    );
    (&w * &upstream).sum().backward();
    let g = scores.grad().unwrap().to_vec();
    assert!(g.iter().all(|v| v.is_finite()), "{g:?}");
    assert_eq!(&g[0..3], &[-0.25, 0.25, 0.0]);
    assert_eq!(&g[3..6], &[0.0, 0.0, 0.0]);
    assert_eq!(&g[6..9], &[0.0, 0.0, 0.0]);
}

// ---------------------------------------------------------------------------------------
// Item 9: settings are checked when a module is built.
// ---------------------------------------------------------------------------------------

#[test]
fn dot_product_attention_refuses_a_scale_that_is_not_finite_and_positive() {
    for (scale, shown) in [
        (f32::NAN, "NaN"),
        (f32::INFINITY, "inf"),
        (f32::NEG_INFINITY, "-inf"),
        (0.0, "0"),
        (-0.5, "-0.5"),
    ] {
        let msg = panic_message(|| {
            DotProductAttention::new(DotProductAttentionConfig {
                scale: Some(scale),
                ..Default::default()
            });
        });
        assert_contains(
            &msg,
            &format!(
                "DotProductAttention::new: scale must be finite and greater than 0, found {shown}"
            ),
        );
    }
    // A valid scale is used as given: 0.5 · (1·1 + 1·1) = 1 against 0 for the other key.
    let attention = DotProductAttention::new(DotProductAttentionConfig {
        scale: Some(0.5),
        ..Default::default()
    });
    let q = Tensor::ones([1, 1, 2]);
    let k = Tensor::from_vec(vec![1.0, 1.0, 0.0, 0.0], [1, 2, 2]);
    attention.forward(&q, &k, &k, &Mask::none());
    let e = std::f32::consts::E;
    assert_close(
        &attention.last_attention_weights().unwrap().to_vec(),
        &[e / (e + 1.0), 1.0 / (e + 1.0)],
        1e-6,
        "weights with scale 0.5",
    );
}

#[test]
fn zero_sizes_name_the_module_and_the_setting() {
    let cases: Vec<(String, Box<dyn FnOnce()>)> = vec![
        (
            "AdditiveAttention::new: num_hiddens must be at least 1, found 0".into(),
            Box::new(|| {
                AdditiveAttention::new(AdditiveAttentionConfig {
                    query_size: 2,
                    key_size: 3,
                    ..Default::default()
                });
            }),
        ),
        (
            "BahdanauAttention::new: value_size must be at least 1, found 0".into(),
            Box::new(|| {
                BahdanauAttention::new(BahdanauAttentionConfig {
                    query_size: 2,
                    key_size: 3,
                    num_hiddens: 4,
                    ..Default::default()
                });
            }),
        ),
        (
            "MultiHeadAdditiveAttention::new: num_heads must be at least 1, found 0"
                .into(),
            Box::new(|| {
                MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
                    query_size: 2,
                    key_size: 3,
                    value_size: 4,
                    num_hiddens: 4,
                    ..Default::default()
                });
            }),
        ),
        (
            "MultiHeadAttention::new: num_hiddens must be at least 1, found 0".into(),
            Box::new(|| {
                MultiHeadAttention::new(MultiHeadAttentionConfig {
                    num_heads: 2,
                    ..Default::default()
                });
            }),
        ),
        (
            "MultiHeadAttention::new: key_size must be at least 1, found 0".into(),
            Box::new(|| {
                MultiHeadAttention::new(MultiHeadAttentionConfig {
                    num_hiddens: 4,
                    num_heads: 2,
                    key_size: Some(0),
                    ..Default::default()
                });
            }),
        ),
        (
            "CausalSelfAttention::new: num_hiddens must be at least 1, found 0"
                .into(),
            Box::new(|| {
                CausalSelfAttention::new(CausalSelfAttentionConfig {
                    num_heads: 2,
                    ..Default::default()
                });
            }),
        ),
    ];
    for (expected, build) in cases {
        let msg = panic_message(build);
        assert_eq!(
            msg,
            format!("{expected} (sizes have no default: set it in the config)")
        );
    }
    // A default config, with no size set at all, names the first size.
    let msg = panic_message(|| {
        AdditiveAttention::new(AdditiveAttentionConfig::default());
    });
    assert_eq!(
        msg,
        "AdditiveAttention::new: query_size must be at least 1, found 0 (sizes have no default: set it in the config)"
    );
}

// ---------------------------------------------------------------------------------------
// Item 13: weights in and out by PyTorch's names.
// ---------------------------------------------------------------------------------------

fn names(state: &StateDict) -> Vec<&str> {
    state.names().collect()
}

#[test]
fn from_state_dict_of_a_state_dict_gives_the_same_outputs_for_every_module() {
    engine::manual_seed(34);
    let q3 = Tensor::randn([2, 3, 4]);
    let q2 = Tensor::randn([2, 4]);
    let kv = Tensor::randn([2, 5, 4]);
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 5.0], [2]));

    let cfg = AdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        num_hiddens: 6,
        ..Default::default()
    };
    let a = AdditiveAttention::new(cfg);
    let b = AdditiveAttention::from_state_dict(cfg, &a.state_dict()).unwrap();
    assert_eq!(
        a.forward(&q3, &kv, &kv, &lens).to_vec(),
        b.forward(&q3, &kv, &kv, &lens).to_vec()
    );

    let cfg = BahdanauAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 6,
        fill: Fill::Safe,
        ..Default::default()
    };
    let a = BahdanauAttention::new(cfg);
    let b = BahdanauAttention::from_state_dict(cfg, &a.state_dict()).unwrap();
    assert_eq!(
        a.forward(&q2, &kv, &kv, &lens).0.to_vec(),
        b.forward(&q2, &kv, &kv, &lens).0.to_vec()
    );

    let cfg = MultiHeadAdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 4,
        num_hiddens: 6,
        num_heads: 3,
        fill: Fill::Safe,
        ..Default::default()
    };
    let a = MultiHeadAdditiveAttention::new(cfg);
    let b =
        MultiHeadAdditiveAttention::from_state_dict(cfg, &a.state_dict()).unwrap();
    assert_eq!(
        a.forward(&q2, &kv, &kv, &lens).0.to_vec(),
        b.forward(&q2, &kv, &kv, &lens).0.to_vec()
    );

    for bias in [false, true] {
        let cfg = MultiHeadAttentionConfig {
            num_hiddens: 4,
            num_heads: 2,
            bias,
            ..Default::default()
        };
        let a = MultiHeadAttention::new(cfg);
        let b = MultiHeadAttention::from_state_dict(cfg, &a.state_dict()).unwrap();
        assert_eq!(
            a.forward(&q3, &kv, &kv, &lens).to_vec(),
            b.forward(&q3, &kv, &kv, &lens).to_vec()
        );

        let cfg = CausalSelfAttentionConfig {
            num_hiddens: 4,
            num_heads: 2,
            bias,
            ..Default::default()
        };
        let a = CausalSelfAttention::new(cfg);
        let b = CausalSelfAttention::from_state_dict(cfg, &a.state_dict()).unwrap();
        assert_eq!(
            a.forward(&q3, &Mask::none()).to_vec(),
            b.forward(&q3, &Mask::none()).to_vec()
        );
    }
}

#[test]
fn state_dict_names_are_the_pytorch_names() {
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        bias: true,
        ..Default::default()
    });
    assert_eq!(
        names(&mha.state_dict()),
        [
            "W_q.weight",
            "W_q.bias",
            "W_k.weight",
            "W_k.bias",
            "W_v.weight",
            "W_v.bias",
            "W_o.weight",
            "W_o.bias",
        ]
    );
    let bahdanau = BahdanauAttention::new(BahdanauAttentionConfig {
        query_size: 3,
        key_size: 2,
        value_size: 5,
        num_hiddens: 4,
        ..Default::default()
    });
    let state = bahdanau.state_dict();
    assert_eq!(
        names(&state),
        [
            "W_q.weight",
            "W_q.bias",
            "W_k.weight",
            "W_k.bias",
            "v",
            "W_o.weight",
            "W_o.bias",
        ]
    );
    let shapes: Vec<&[usize]> = state.iter().map(|(_, t)| t.shape()).collect();
    assert_eq!(
        shapes,
        [&[4, 3][..], &[4], &[4, 2], &[4], &[4], &[5, 5], &[5]]
    );
}

#[test]
fn from_state_dict_reports_missing_unexpected_and_misshaped_tensors_at_once() {
    let config = MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    };
    let good = MultiHeadAttention::new(config).state_dict();
    let mut state: StateDict = good
        .iter()
        .filter(|(n, _)| *n != "W_v.weight")
        .map(|(n, t)| (n, t.clone()))
        .collect();
    state.insert("W_k.weight", Tensor::zeros([4, 3]));
    state.insert("W_x.weight", Tensor::zeros([4, 4]));
    let err = MultiHeadAttention::from_state_dict(config, &state).unwrap_err();
    assert_eq!(err.missing, ["W_v.weight"]);
    assert_eq!(err.unexpected, ["W_x.weight"]);
    assert_eq!(
        err.to_string(),
        "load_state_dict: the state does not fit the module\n  W_k.weight: expected shape [4, 4], found [4, 3]\n  missing: W_v.weight\n  unexpected: W_x.weight"
    );
}

// ---------------------------------------------------------------------------------------
// Item 14: masks compose, and the two multi-head layouts agree.
// ---------------------------------------------------------------------------------------

#[test]
fn causal_and_key_padding_compose_to_the_product_of_their_keep_tensors() {
    let pad = Tensor::from_vec(vec![1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0], [2, 4]);
    let scores = [2, 4, 4];
    let causal = Mask::causal().keep_for("test", &scores).unwrap();
    let padding = Mask::key_padding(&pad).keep_for("test", &scores).unwrap();
    let both = (Mask::causal() & Mask::key_padding(&pad))
        .keep_for("test", &scores)
        .unwrap();
    let product = (&causal * &padding).broadcast_to(scores);
    assert_eq!(both.broadcast_to(scores).to_vec(), product.to_vec());
    let and = Mask::causal()
        .and(&Mask::key_padding(&pad))
        .keep_for("test", &scores)
        .unwrap();
    assert_eq!(and.broadcast_to(scores).to_vec(), product.to_vec());
    // Row 3 of example 1: causal order allows keys 0..=3, padding only keys 0 and 1.
    assert_eq!(&product.to_vec()[28..32], &[1.0, 1.0, 0.0, 0.0]);
}

#[test]
fn multi_head_attention_with_causal_and_padding_equals_causal_self_attention() {
    engine::manual_seed(35);
    let csa = causal_layer(8, 2);
    let mha = MultiHeadAttention::from_state_dict(
        MultiHeadAttentionConfig {
            num_hiddens: 8,
            num_heads: 2,
            bias: true,
            ..Default::default()
        },
        &csa.state_dict(),
    )
    .unwrap();
    let x = Tensor::randn([2, 5, 8]);
    let pad = Mask::key_padding(&Tensor::from_vec(
        vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
        [2, 5],
    ));
    let expected = csa.forward(&x, &pad);
    let got = mha.forward(&x, &x, &x, &(Mask::causal() & pad.clone()));
    assert!(max_abs_diff(&expected, &got) < 1e-5);
    let weights = max_abs_diff(
        &mha.last_attention_weights().unwrap(),
        &csa.last_attention_weights().unwrap(),
    );
    assert!(weights < 1e-6, "weights differ by {weights}");
    // Without the padding they differ: the mask did something.
    assert!(max_abs_diff(&expected, &csa.forward(&x, &Mask::none())) > 1e-3);
}

#[test]
fn causal_self_attention_fully_padded_example_is_uniform_under_d2l_and_zero_under_safe()
 {
    engine::manual_seed(36);
    let safe = causal_layer(4, 2);
    let d2l = CausalSelfAttention::from_state_dict(
        CausalSelfAttentionConfig {
            num_hiddens: 4,
            num_heads: 2,
            fill: Fill::D2l,
            ..Default::default()
        },
        &safe.state_dict(),
    )
    .unwrap();
    let t = 3;
    let x = Tensor::randn([2, t, 4]);
    // Example 1 is padding only.
    let pad = Mask::key_padding(&Tensor::from_vec(
        vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        [2, t],
    ));
    let safe_out = safe.forward(&x, &pad);
    let d2l_out = d2l.forward(&x, &pad);
    let (ws, wd) = (
        safe.last_attention_weights().unwrap(),
        d2l.last_attention_weights().unwrap(),
    );
    let per_example = 2 * t * t;
    let (ws, wd) = (ws.to_vec(), wd.to_vec());
    // Example 0 is the same under both fills.
    assert_close(&ws[..per_example], &wd[..per_example], 1e-6, "example 0");
    // Example 1: Safe gives zero rows, d2l uniform rows over all keys (even future ones).
    assert_eq!(&ws[per_example..], &vec![0.0; per_example][..]);
    assert_close(
        &wd[per_example..],
        &vec![1.0 / t as f32; per_example],
        1e-6,
        "example 1 under d2l",
    );
    // Zero weights: the safe output of example 1 is W_o's bias alone.
    let bias = safe.state_dict().get("W_o.bias").unwrap().to_vec();
    let out1 = safe_out.narrow(0, 1, 1).to_vec();
    for row in out1.chunks(4) {
        assert_close(row, &bias, 1e-6, "safe output of the padded example");
    }
    assert!(max_abs_diff(&safe_out.narrow(0, 1, 1), &d2l_out.narrow(0, 1, 1)) > 1e-4);
}

// ---------------------------------------------------------------------------------------
// Item 15: every module starts in training mode.
// ---------------------------------------------------------------------------------------

#[test]
fn every_module_starts_in_training_mode_and_eval_switches_dropout_off() {
    engine::manual_seed(37);
    let q = Tensor::randn([2, 3, 8]);
    let kv = Tensor::randn([2, 6, 8]);
    let x = Tensor::randn([2, 6, 8]);
    let none = Mask::none();

    // DotProductAttention has no parameters: dropout 0 is simply another module.
    dropout_on_until_eval(
        "DotProductAttention",
        DotProductAttention::new(DotProductAttentionConfig {
            dropout: 0.5,
            ..Default::default()
        }),
        DotProductAttention::new(DotProductAttentionConfig::default()),
        |m| m.forward(&q, &kv, &kv, &none).to_vec(),
    );

    let cfg = MultiHeadAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        dropout: 0.5,
        ..Default::default()
    };
    let mha = MultiHeadAttention::new(cfg);
    let plain = MultiHeadAttention::from_state_dict(
        MultiHeadAttentionConfig {
            dropout: 0.0,
            ..cfg
        },
        &mha.state_dict(),
    )
    .unwrap();
    dropout_on_until_eval("MultiHeadAttention", mha, plain, |m| {
        m.forward(&q, &kv, &kv, &none).to_vec()
    });

    let cfg = AdditiveAttentionConfig {
        query_size: 8,
        key_size: 8,
        num_hiddens: 5,
        dropout: 0.5,
        ..Default::default()
    };
    let additive = AdditiveAttention::new(cfg);
    let plain = AdditiveAttention::from_state_dict(
        AdditiveAttentionConfig {
            dropout: 0.0,
            ..cfg
        },
        &additive.state_dict(),
    )
    .unwrap();
    dropout_on_until_eval("AdditiveAttention", additive, plain, |m| {
        m.forward(&q, &kv, &kv, &none).to_vec()
    });

    let cfg = CausalSelfAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        dropout: 0.5,
        ..Default::default()
    };
    let csa = CausalSelfAttention::new(cfg);
    let plain = CausalSelfAttention::from_state_dict(
        CausalSelfAttentionConfig {
            dropout: 0.0,
            ..cfg
        },
        &csa.state_dict(),
    )
    .unwrap();
    dropout_on_until_eval("CausalSelfAttention", csa, plain, |m| {
        m.forward(&x, &none).to_vec()
    });
}

/// A new `module` drops out (two passes differ); after `eval()` it gives exactly what the
/// same weights without dropout (`plain`) give.
#[track_caller]
fn dropout_on_until_eval<M: Module>(
    name: &str,
    mut module: M,
    plain: M,
    run: impl Fn(&M) -> Vec<f32>,
) {
    let reference = run(&plain);
    assert_ne!(run(&module), run(&module), "{name}: dropout on at first");
    module.eval();
    assert_eq!(run(&module), reference, "{name} after eval()");
    assert_eq!(run(&module), reference, "{name} after eval(), again");
}

/// The prelude alone is enough to switch a module to evaluation and read its weights.
mod prelude_only {
    use attention::prelude::*;

    #[test]
    fn the_prelude_alone_brings_eval_and_last_attention_weights() {
        manual_seed(38);
        let mut mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
            num_hiddens: 4,
            num_heads: 2,
            dropout: 0.5,
            ..Default::default()
        });
        mha.eval();
        let x = Tensor::randn([1, 3, 4]);
        let first = no_grad(|| mha.forward(&x, &x, &x, &Mask::causal()));
        let second = no_grad(|| mha.forward(&x, &x, &x, &Mask::causal()));
        assert_eq!(
            first.to_vec(),
            second.to_vec(),
            "dropout is off after eval()"
        );
        let w = mha.last_attention_weights().unwrap();
        assert_eq!(w.shape(), &[1, 2, 3, 3]);
        // Query 0 sees key 0 only, in both heads.
        let w = w.to_vec();
        assert_eq!((w[0], w[1], w[2]), (1.0, 0.0, 0.0));
        assert_eq!((w[9], w[10], w[11]), (1.0, 0.0, 0.0));
    }
}
