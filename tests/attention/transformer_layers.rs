//! The Transformer layers' defining properties beyond PyTorch parity: where the
//! LayerNorm sits, that padding keys change nothing, dropout by mode, the position-wise
//! network's independence of positions, and the messages of bad settings and inputs.

use attention::Mask;
use attention::transformer::{
    CausalTransformerLayer, PositionWiseFfn, PositionWiseFfnConfig,
    TransformerDecoderLayer, TransformerEncoderLayer, TransformerLayerConfig,
};
use engine::nn::{LayerNorm, LayerNormConfig, Module};
use engine::{Tensor, no_grad};

use crate::common::panic_message;

fn config(norm_first: bool) -> TransformerLayerConfig {
    TransformerLayerConfig {
        num_hiddens: 8,
        num_heads: 2,
        ffn_num_hiddens: 16,
        dropout: 0.0,
        norm_first,
        ..Default::default()
    }
}

/// Zeroes the output projections of every sublayer (`W_o` and `linear2`): each
/// sublayer then adds exactly 0 to the residual path.
fn silence_sublayers(layer: &impl Module) {
    no_grad(|| {
        for (name, p) in layer.named_parameters() {
            if name.contains("W_o.") || name.starts_with("linear2.") {
                p.assign(&p.zeros_like());
            }
        }
    });
}

#[test]
fn with_silent_sublayers_pre_norm_passes_the_input_through_and_post_norm_normalises_it()
 {
    engine::manual_seed(1);
    let x = Tensor::randn([2, 5, 8]) * 3.0 + 1.0;
    let norm = LayerNorm::new(LayerNormConfig {
        dim: 8,
        ..Default::default()
    });
    for norm_first in [true, false] {
        let layer = TransformerEncoderLayer::new(config(norm_first));
        silence_sublayers(&layer);
        let y = layer.forward(&x, &Mask::none());
        // Pre-norm: x + 0 + 0, the residual path untouched. Post-norm: norm(norm(x)).
        let expected = if norm_first {
            x.clone()
        } else {
            norm.forward(&norm.forward(&x))
        };
        let gap = (&y - &expected).abs().max().item();
        assert!(gap < 1e-5, "norm_first {norm_first}: off by {gap}");
        let decoder = TransformerDecoderLayer::new(config(norm_first));
        silence_sublayers(&decoder);
        let memory = Tensor::randn([2, 3, 8]);
        let y = decoder.forward(&x, &memory, &Mask::causal(), &Mask::none());
        let expected = if norm_first {
            x.clone()
        } else {
            norm.forward(&norm.forward(&norm.forward(&x)))
        };
        let gap = (&y - &expected).abs().max().item();
        assert!(gap < 1e-5, "decoder, norm_first {norm_first}: off by {gap}");
    }
}

#[test]
fn padded_keys_change_nothing_in_the_real_positions() {
    engine::manual_seed(2);
    let layer = TransformerEncoderLayer::new(config(true));
    let decoder = TransformerDecoderLayer::new(config(false));
    let x = Tensor::randn([1, 5, 8]);
    let other = Tensor::concat(&[&x.narrow(1, 0, 3), &Tensor::randn([1, 2, 8])], 1);
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![3.0], [1]));
    let real = |t: &Tensor| t.narrow(1, 0, 3).to_vec();
    assert_eq!(
        real(&layer.forward(&x, &lens)),
        real(&layer.forward(&other, &lens))
    );
    let tgt = Tensor::randn([1, 4, 8]);
    assert_eq!(
        decoder.forward(&tgt, &x, &Mask::causal(), &lens).to_vec(),
        decoder
            .forward(&tgt, &other, &Mask::causal(), &lens)
            .to_vec()
    );
    // And causal order: a later target position changes no earlier one.
    let later = Tensor::concat(&[&tgt.narrow(1, 0, 2), &Tensor::randn([1, 2, 8])], 1);
    let first_two = |t: &Tensor| t.narrow(1, 0, 2).to_vec();
    assert_eq!(
        first_two(&decoder.forward(&tgt, &x, &Mask::causal(), &lens)),
        first_two(&decoder.forward(&later, &x, &Mask::causal(), &lens))
    );
}

#[test]
fn dropout_acts_in_training_mode_only() {
    engine::manual_seed(3);
    let mut layer = TransformerEncoderLayer::new(TransformerLayerConfig {
        dropout: 0.5,
        ..config(false)
    });
    let x = Tensor::randn([2, 5, 8]);
    let (a, b) = (
        layer.forward(&x, &Mask::none()),
        layer.forward(&x, &Mask::none()),
    );
    assert_ne!(a.to_vec(), b.to_vec(), "training mode drops at random");
    layer.eval();
    let (a, b) = (
        layer.forward(&x, &Mask::none()),
        layer.forward(&x, &Mask::none()),
    );
    assert_eq!(a.to_vec(), b.to_vec(), "evaluation mode is deterministic");
}

#[test]
fn the_feed_forward_network_treats_each_position_alone() {
    engine::manual_seed(4);
    let ffn = PositionWiseFfn::new(PositionWiseFfnConfig {
        num_hiddens: 8,
        ffn_num_hiddens: 32,
        ..Default::default()
    });
    let x = Tensor::randn([3, 4, 8]);
    let y = ffn.forward(&x);
    for t in 0..4 {
        let alone = ffn.forward(&x.narrow(1, t, 1));
        assert_eq!(alone.to_vec(), y.narrow(1, t, 1).to_vec(), "position {t}");
    }
    let names: Vec<String> =
        ffn.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "linear1.weight",
            "linear1.bias",
            "linear2.weight",
            "linear2.bias"
        ]
    );
}

#[test]
fn the_layers_name_their_parameters_as_pytorch_does() {
    let names = |m: &dyn Fn() -> Vec<(String, Tensor)>| -> Vec<String> {
        m().into_iter()
            .map(|(n, _)| n)
            .filter(|n| !n.contains("attn."))
            .collect()
    };
    let encoder = TransformerEncoderLayer::new(config(false));
    let decoder = TransformerDecoderLayer::new(config(false));
    let ffn_and_norms = [
        "linear1.weight",
        "linear1.bias",
        "linear2.weight",
        "linear2.bias",
        "norm1.weight",
        "norm1.bias",
        "norm2.weight",
        "norm2.bias",
    ];
    assert_eq!(names(&|| encoder.named_parameters()), ffn_and_norms);
    let mut with_norm3 = ffn_and_norms.to_vec();
    with_norm3.extend(["norm3.weight", "norm3.bias"]);
    assert_eq!(names(&|| decoder.named_parameters()), with_norm3);
    let attention: Vec<String> = decoder
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.contains("attn."))
        .collect();
    assert_eq!(attention.len(), 16);
    assert!(attention[..8].iter().all(|n| n.starts_with("self_attn.W_")));
    assert!(
        attention[8..]
            .iter()
            .all(|n| n.starts_with("multihead_attn.W_"))
    );
}

#[test]
fn bad_settings_and_inputs_are_named() {
    let message = panic_message(|| {
        TransformerEncoderLayer::new(TransformerLayerConfig {
            num_heads: 3,
            ..config(false)
        });
    });
    assert!(
        message.contains("TransformerEncoderLayer::new") && message.contains("3"),
        "{message}"
    );
    let message = panic_message(|| {
        TransformerDecoderLayer::new(TransformerLayerConfig {
            ffn_num_hiddens: 0,
            ..config(false)
        });
    });
    assert!(message.contains("ffn_num_hiddens"), "{message}");
    let message = panic_message(|| {
        TransformerEncoderLayer::new(TransformerLayerConfig {
            layer_norm_eps: 0.0,
            ..config(false)
        });
    });
    assert!(
        message.contains("layer_norm_eps must be finite and > 0, found 0"),
        "{message}"
    );
    let layer = TransformerEncoderLayer::new(config(false));
    let message = panic_message(|| {
        layer.forward(&Tensor::zeros([2, 5, 6]), &Mask::none());
    });
    assert!(
        message.contains("TransformerEncoderLayer::forward")
            && message.contains("num_hiddens = 8")
            && message.contains("[2, 5, 6]"),
        "{message}"
    );
    let decoder = TransformerDecoderLayer::new(config(false));
    let message = panic_message(|| {
        decoder.forward(
            &Tensor::zeros([2, 4, 8]),
            &Tensor::zeros([3, 5, 8]),
            &Mask::causal(),
            &Mask::none(),
        );
    });
    assert!(
        message.contains("same batch size") && message.contains("[3, 5, 8]"),
        "{message}"
    );
    let message = panic_message(|| {
        decoder.forward(
            &Tensor::zeros([2, 4, 8]),
            &Tensor::zeros([2, 5, 6]),
            &Mask::causal(),
            &Mask::none(),
        );
    });
    assert!(
        message.contains("TransformerDecoderLayer::forward: memory must be")
            && message.contains("num_hiddens = 8")
            && message.contains("[2, 5, 6]"),
        "{message}"
    );
    let mut broken = engine::nn::StateDict::new();
    for (n, t) in layer
        .state_dict()
        .iter()
        .filter(|(n, _)| *n != "norm2.bias")
    {
        broken.insert(n, t.clone());
    }
    let error = TransformerEncoderLayer::from_state_dict(config(false), &broken)
        .expect_err("norm2.bias is missing")
        .to_string();
    assert!(error.contains("missing: norm2.bias"), "{error}");
}

#[test]
fn every_layer_drops_in_training_mode_only() {
    engine::manual_seed(5);
    let c = TransformerLayerConfig {
        dropout: 0.5,
        ..config(true)
    };
    let mut decoder = TransformerDecoderLayer::new(c);
    let mut causal = CausalTransformerLayer::new(c);
    assert_eq!(decoder.config(), &c);
    assert_eq!(causal.config(), &c);
    let (x, memory) = (Tensor::randn([2, 4, 8]), Tensor::randn([2, 5, 8]));
    let run = |d: &TransformerDecoderLayer, l: &CausalTransformerLayer| {
        (
            d.forward(&x, &memory, &Mask::causal(), &Mask::none())
                .to_vec(),
            l.forward(&x, &Mask::none()).to_vec(),
        )
    };
    let (a, b) = (run(&decoder, &causal), run(&decoder, &causal));
    assert_ne!(a.0, b.0, "the decoder layer drops in training mode");
    assert_ne!(a.1, b.1, "the causal layer drops in training mode");
    decoder.eval();
    causal.eval();
    let (a, b) = (run(&decoder, &causal), run(&decoder, &causal));
    assert_eq!(a, b, "evaluation mode is deterministic");
}

#[test]
fn load_state_dict_copies_a_pytorch_named_state_into_an_existing_layer() {
    engine::manual_seed(6);
    let c = config(false);
    let source = TransformerEncoderLayer::new(c);
    assert_eq!(source.config(), &c);
    // The source's weights under PyTorch's names.
    let mut torch = engine::nn::StateDict::new();
    for (name, t) in source.state_dict().iter() {
        torch.insert(
            name.replace("self_attn.W_o", "self_attn.out_proj"),
            t.clone(),
        );
    }
    for part in ["weight", "bias"] {
        let qkv: Vec<Tensor> = ["W_q", "W_k", "W_v"]
            .iter()
            .map(|w| torch.remove(&format!("self_attn.{w}.{part}")).unwrap())
            .collect();
        torch.insert(format!("self_attn.in_proj_{part}"), Tensor::concat(&qkv, 0));
    }
    let x = Tensor::randn([2, 5, 8]);
    let expected = source.forward(&x, &Mask::causal()).to_vec();
    let encoder = TransformerEncoderLayer::new(c);
    let causal = CausalTransformerLayer::new(c);
    assert_ne!(encoder.forward(&x, &Mask::causal()).to_vec(), expected);
    encoder
        .load_state_dict(&torch)
        .expect("PyTorch's names load");
    causal
        .load_state_dict(&torch)
        .expect("PyTorch's names load");
    assert_eq!(encoder.forward(&x, &Mask::causal()).to_vec(), expected);
    let gap = (&causal.forward(&x, &Mask::none())
        - &Tensor::from_vec(expected, [2, 5, 8]))
        .abs()
        .max()
        .item();
    assert!(gap < 1e-6, "{gap}");
    // A state missing a tensor changes nothing and names what is missing.
    let before = encoder.forward(&x, &Mask::none()).to_vec();
    torch.remove("norm1.bias");
    let fresh = TransformerEncoderLayer::new(c);
    for layer in [&encoder as &dyn Module, &causal, &fresh] {
        let error = layer.load_state_dict(&torch).unwrap_err().to_string();
        assert!(error.contains("missing: norm1.bias"), "{error}");
    }
    assert_eq!(encoder.forward(&x, &Mask::none()).to_vec(), before);
    // A decoder layer takes its own names back.
    let decoder = TransformerDecoderLayer::new(c);
    let other = TransformerDecoderLayer::new(c);
    other.load_state_dict(&decoder.state_dict()).unwrap();
    let memory = Tensor::randn([2, 3, 8]);
    let out = |d: &TransformerDecoderLayer| {
        d.forward(&x, &memory, &Mask::causal(), &Mask::none())
            .to_vec()
    };
    assert_eq!(out(&other), out(&decoder));
}

#[test]
fn the_attention_inside_a_layer_drops_its_weights_as_pytorch_does() {
    // PyTorch passes the layer's dropout to its attention: the weights are dropped
    // too, not only the sublayers' outputs.
    engine::manual_seed(7);
    let layer = TransformerEncoderLayer::new(TransformerLayerConfig {
        dropout: 0.5,
        ..config(false)
    });
    let x = Tensor::randn([1, 6, 8]);
    let attention = layer.self_attention();
    let (a, b) = (
        attention.forward(&x, &x, &x, &Mask::none()).to_vec(),
        attention.forward(&x, &x, &x, &Mask::none()).to_vec(),
    );
    assert_ne!(a, b);
    let causal = CausalTransformerLayer::new(TransformerLayerConfig {
        dropout: 0.5,
        ..config(true)
    });
    let attention = causal.self_attention();
    let (a, b) = (
        attention.forward(&x, &Mask::none()).to_vec(),
        attention.forward(&x, &Mask::none()).to_vec(),
    );
    assert_ne!(a, b);
}

#[test]
fn the_feed_forward_network_names_its_own_errors() {
    let message = panic_message(|| {
        PositionWiseFfn::new(PositionWiseFfnConfig {
            num_hiddens: 8,
            ffn_num_hiddens: 0,
            ..Default::default()
        });
    });
    assert!(
        message.contains("PositionWiseFfn::new")
            && message.contains("ffn_num_hiddens"),
        "{message}"
    );
    let message = panic_message(|| {
        PositionWiseFfn::new(PositionWiseFfnConfig {
            num_hiddens: 8,
            ffn_num_hiddens: 16,
            dropout: 1.5,
            ..Default::default()
        });
    });
    assert!(
        message.contains("PositionWiseFfn::new") && message.contains("dropout"),
        "{message}"
    );
    let ffn = PositionWiseFfn::new(PositionWiseFfnConfig {
        num_hiddens: 8,
        ffn_num_hiddens: 16,
        ..Default::default()
    });
    let message = panic_message(|| {
        ffn.forward(&Tensor::zeros([2, 3, 6]));
    });
    assert!(
        message.contains("PositionWiseFfn::forward")
            && message.contains("num_hiddens = 8")
            && message.contains("[2, 3, 6]"),
        "{message}"
    );
}
