//! The blocked path of scaled dot-product and multi-head attention (`AttentionPath`, and
//! the `blocked_attention` function) against the full computation, which the golden
//! data holds to PyTorch: outputs, gradients and the recomputed weights under every kind
//! of mask; when `Auto` takes each path; and the settings the blocked path refuses.

use attention::prelude::*;
use attention::{BLOCKED_FROM_KEYS, MultiHeadAttention};
use engine::memory;

use crate::common::panic_message;

/// The largest difference, each element against `max(1, |b|)`.
fn worst(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f32::max)
}

/// Masks of every kind for scores `[2, q, k]`.
fn masks(q: usize, k: usize) -> Vec<(&'static str, Mask)> {
    let lens = Tensor::from_vec(vec![3.0, k as f32], [2]);
    let per_query =
        Tensor::from_vec((0..2 * q).map(|i| (i % (k + 1)) as f32).collect(), [2, q]);
    let pad =
        Tensor::from_vec((0..2 * k).map(|i| f32::from(i % 4 != 1)).collect(), [2, k]);
    let keep = Tensor::from_vec(
        (0..q * k).map(|i| f32::from(i % 3 != 0)).collect(),
        [1, q, k],
    );
    vec![
        ("none", Mask::none()),
        ("valid lengths [B]", Mask::valid_lens(&lens)),
        ("valid lengths [B, Q]", Mask::valid_lens(&per_query)),
        ("causal", Mask::causal()),
        ("causal with offset 2", Mask::causal_with_offset(2)),
        ("key padding", Mask::key_padding(&pad)),
        (
            "key padding, PyTorch's sense",
            Mask::key_padding_ignore(&(1.0 - &pad)),
        ),
        ("keep [1, Q, K]", Mask::keep(&keep)),
        (
            "causal & padding & lengths",
            Mask::causal() & Mask::key_padding(&pad) & Mask::valid_lens(&lens),
        ),
    ]
}

#[test]
fn dot_product_attention_gives_the_same_output_gradients_and_weights_on_both_paths() {
    let (q, k) = (6, 9);
    for (name, mask) in masks(q, k) {
        manual_seed(3);
        let inputs = [
            Tensor::randn([2, q, 4]),
            Tensor::randn([2, k, 4]),
            Tensor::randn([2, k, 3]),
        ];
        let mut results = Vec::new();
        for path in [AttentionPath::Full, AttentionPath::Blocked { block: 4 }] {
            let module = DotProductAttention::new(DotProductAttentionConfig {
                path,
                ..Default::default()
            });
            let [q, k, v] = inputs.clone().map(|t| t.requires_grad_());
            let out = module.forward(&q, &k, &v, &mask);
            (&out * &Tensor::arange(3)).sum().backward();
            let weights = module
                .last_attention_weights()
                .expect("weights after forward");
            results.push([
                out.detach(),
                q.grad().unwrap(),
                k.grad().unwrap(),
                v.grad().unwrap(),
                weights,
            ]);
        }
        for (what, (blocked, full)) in ["output", "dQ", "dK", "dV", "weights"]
            .iter()
            .zip(results[1].iter().zip(&results[0]))
        {
            let w = worst(blocked, full);
            assert!(w <= 1e-5, "{name}: {what} differs by {w:e}");
        }
    }
}

#[test]
fn multi_head_attention_gives_the_same_numbers_on_both_paths() {
    let config = MultiHeadAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        bias: true,
        ..Default::default()
    };
    let (q, k) = (5, 7);
    for (name, mask) in masks(q, k) {
        manual_seed(1);
        let full = MultiHeadAttention::new(MultiHeadAttentionConfig {
            path: AttentionPath::Full,
            ..config
        });
        let blocked = MultiHeadAttention::new(MultiHeadAttentionConfig {
            path: AttentionPath::Blocked { block: 3 },
            ..config
        });
        blocked.load_state_dict(&full.state_dict()).unwrap();
        manual_seed(2);
        let (x, y) = (Tensor::randn([2, q, 8]), Tensor::randn([2, k, 8]));
        let mut results = Vec::new();
        for module in [&full, &blocked] {
            let x = x.detach().requires_grad_();
            let out = module.forward(&x, &y, &y, &mask);
            out.square().sum().backward();
            let w_q = module.parameters()[0].grad().unwrap();
            results.push([
                out.detach(),
                x.grad().unwrap(),
                w_q,
                module.last_attention_weights().unwrap(),
            ]);
        }
        for (what, (b, f)) in ["output", "d input", "d W_q", "weights"]
            .iter()
            .zip(results[1].iter().zip(&results[0]))
        {
            let w = worst(b, f);
            assert!(w <= 1e-5, "{name}: {what} differs by {w:e}");
        }
    }
}

/// The peak of tensor bytes of one forward and backward pass of `module`.
fn peak(module: &DotProductAttention, k: usize) -> usize {
    manual_seed(4);
    let (q, keys) = (
        Tensor::randn([4, 8, 8]).requires_grad_(),
        Tensor::randn([4, k, 8]),
    );
    let before = memory::live_bytes();
    memory::reset_peak();
    module
        .forward(&q, &keys, &keys, &Mask::none())
        .sum()
        .backward();
    memory::peak_bytes() - before
}

#[test]
fn auto_takes_the_blocked_path_from_the_stated_length_where_it_can() {
    let auto = DotProductAttention::new(DotProductAttentionConfig::default());
    let full = DotProductAttention::new(DotProductAttentionConfig {
        path: AttentionPath::Full,
        ..Default::default()
    });
    // Below the length, Auto is the full computation: the same bytes, to the byte.
    let short = BLOCKED_FROM_KEYS - 1;
    assert_eq!(peak(&auto, short), peak(&full, short));
    // From it on, the weights [4, 8, K] (and their gradient) are never built.
    let long = BLOCKED_FROM_KEYS;
    let weights_bytes = 4 * 8 * long * 4;
    assert!(
        peak(&auto, long) + weights_bytes <= peak(&full, long),
        "{} {}",
        peak(&auto, long),
        peak(&full, long)
    );
    // With another fill, or dropout in training mode, Auto stays on the full path.
    let d2l = DotProductAttention::new(DotProductAttentionConfig {
        fill: Fill::D2l,
        ..Default::default()
    });
    assert!(peak(&d2l, long) >= peak(&full, long));
    let mut dropout = DotProductAttention::new(DotProductAttentionConfig {
        dropout: 0.5,
        ..Default::default()
    });
    assert!(peak(&dropout, long) >= peak(&full, long));
    dropout.eval();
    assert!(peak(&dropout, long) + weights_bytes <= peak(&full, long));
}

#[test]
fn the_blocked_function_equals_the_full_one_with_its_options() {
    manual_seed(5);
    // Keys and values shared by two heads: leading dimensions [2, 2] against [2, 1].
    let (q, k, v) = (
        Tensor::randn([2, 2, 6, 4]),
        Tensor::randn([2, 1, 11, 4]),
        Tensor::randn([2, 1, 11, 3]),
    );
    for options in [
        SdpaOptions::default(),
        SdpaOptions {
            is_causal: true,
            ..Default::default()
        },
        SdpaOptions {
            scale: Some(0.3),
            mask: Mask::causal(),
            ..Default::default()
        },
    ] {
        let blocked = blocked_attention(&q, &k, &v, &options, 4);
        let (full, _) = scaled_dot_product_attention_with(&q, &k, &v, &options);
        assert!(worst(&blocked, &full) <= 1e-5, "{options:?}");
    }
}

#[test]
fn what_the_blocked_path_cannot_compute_is_refused_with_a_reason() {
    let (q, k) = (Tensor::ones([1, 2, 4]), Tensor::ones([1, 3, 4]));
    let message = panic_message(|| {
        blocked_attention(
            &q,
            &k,
            &k,
            &SdpaOptions {
                fill: Fill::D2l,
                ..Default::default()
            },
            2,
        );
    });
    assert!(
        message.contains("blocked_attention") && message.contains("safe fill"),
        "{message}"
    );
    let message = panic_message(|| {
        blocked_attention(
            &q,
            &k,
            &k,
            &SdpaOptions {
                dropout_p: 0.1,
                ..Default::default()
            },
            2,
        );
    });
    assert!(message.contains("dropout_p = 0.1"), "{message}");
    let message = panic_message(|| {
        let module = DotProductAttention::new(DotProductAttentionConfig {
            dropout: 0.2,
            path: AttentionPath::Blocked { block: 2 },
            ..Default::default()
        });
        module.forward(&q, &k, &k, &Mask::none());
    });
    assert!(
        message.contains("DotProductAttention")
            && message.contains("dropout is on")
            && message.contains("eval()"),
        "{message}"
    );
    let message = panic_message(|| {
        let module = DotProductAttention::new(DotProductAttentionConfig {
            path: AttentionPath::Blocked { block: 0 },
            ..Default::default()
        });
        module.forward(&q, &k, &k, &Mask::none());
    });
    assert!(
        message.contains("block") && message.contains("at least 1"),
        "{message}"
    );
}
