//! `nn::WeightNorm` against PyTorch's `torch.nn.utils.parametrizations.weight_norm`
//! (golden values from `tests/golden/nn_optim.py`, every `dim`), against finite
//! differences, and its names, its start and its messages.

use crate::common::panic_message;
use crate::nn_golden::{assert_close, case, to_tensor};
use engine::gradcheck::gradcheck;
use engine::nn::{Linear, LinearConfig, Module, StateDict, WeightNorm};
use engine::{Tensor, manual_seed};
use serde_json::Value;

/// The golden case's dim: 0, 1 or null.
fn dim_of(c: &Value) -> Option<usize> {
    c["dim"].as_u64().map(|d| d as usize)
}

/// A layer of the case's shape with PyTorch's parameters, loaded under its names.
fn loaded(c: &Value) -> WeightNorm {
    manual_seed(0);
    let layer = WeightNorm::new(
        Linear::new(LinearConfig {
            in_features: 4,
            out_features: 3,
            ..Default::default()
        }),
        dim_of(c),
    );
    let state = StateDict::from([
        (
            "parametrizations.weight.original0",
            to_tensor(&c["original0"]),
        ),
        (
            "parametrizations.weight.original1",
            to_tensor(&c["original1"]),
        ),
        ("bias", to_tensor(&c["bias"])),
    ]);
    layer.load_state_dict(&state).unwrap();
    layer
}

#[test]
fn matches_pytorch_weight_output_and_every_gradient_for_each_dim() {
    for name in ["weight_norm_dim0", "weight_norm_dim1", "weight_norm_none"] {
        let c = case(name);
        let layer = loaded(c);
        assert_close(&layer.weight(), &c["weight"], &format!("{name}: weight"));
        let x = to_tensor(&c["x"]).requires_grad_();
        let out = layer.forward(&x);
        assert_close(&out, &c["out"], &format!("{name}: out"));
        out.backward_with(&to_tensor(&c["upstream"]));
        let grad = |t: &Tensor| t.grad().expect("a gradient");
        assert_close(&grad(&x), &c["grad_x"], &format!("{name}: grad x"));
        assert_close(
            &grad(layer.g()),
            &c["grad_original0"],
            &format!("{name}: grad g"),
        );
        assert_close(
            &grad(layer.v()),
            &c["grad_original1"],
            &format!("{name}: grad v"),
        );
        let bias = layer.bias().unwrap();
        assert_close(&grad(bias), &c["grad_bias"], &format!("{name}: grad bias"));
    }
}

#[test]
fn gradients_match_finite_differences_for_each_dim() {
    manual_seed(4);
    for (dim, g_shape) in
        [(Some(0), vec![3, 1]), (Some(1), vec![1, 4]), (None, vec![])]
    {
        let inputs = [
            Tensor::randn([2, 4]),
            Tensor::rand(g_shape.clone(), 0.5, 1.5),
            Tensor::randn([3, 4]),
            Tensor::randn([3]),
        ];
        let f = |t: &[Tensor]| {
            WeightNorm::from_parts(&t[1], &t[2], Some(&t[3]), dim).forward(&t[0])
        };
        gradcheck(f, &inputs).unwrap_or_else(|e| panic!("dim {dim:?}: {e}"));
    }
}

#[test]
fn starts_as_the_linear_layer_it_wraps_with_g_the_norms_of_v() {
    manual_seed(5);
    let config = LinearConfig {
        in_features: 4,
        out_features: 3,
        ..Default::default()
    };
    let x = Tensor::randn([2, 4]);
    for dim in [Some(0), Some(1), None] {
        let linear = Linear::new(config);
        let before = linear.forward(&x).to_vec();
        let w = linear.weight().to_vec();
        let layer = WeightNorm::new(linear, dim);
        assert_eq!(layer.dim(), dim);
        let after = layer.forward(&x).to_vec();
        for (a, b) in after.iter().zip(&before) {
            assert!((a - b).abs() < 1e-6, "dim {dim:?}: {a} vs {b}");
        }
        // g by hand: the norm of each row (dim 0), column (dim 1), or of everything.
        let norm = |idx: &dyn Fn(usize, usize) -> bool| {
            (0..12)
                .filter(|&i| idx(i / 4, i % 4))
                .map(|i| w[i] * w[i])
                .sum::<f32>()
                .sqrt()
        };
        let want: Vec<f32> = match dim {
            Some(0) => (0..3).map(|r| norm(&|i, _| i == r)).collect(),
            Some(1) => (0..4).map(|c| norm(&|_, j| j == c)).collect(),
            _ => vec![norm(&|_, _| true)],
        };
        for (a, b) in layer.g().to_vec().iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "dim {dim:?}: g {a} vs {b}");
        }
    }
}

#[test]
fn scaling_v_changes_nothing_and_g_sets_each_row_s_length() {
    let v = Tensor::from_vec(vec![3.0, 4.0, 0.0, 2.0], [2, 2]);
    let g = Tensor::from_vec(vec![10.0, 1.0], [2, 1]);
    let layer = WeightNorm::from_parts(&g, &v, None, Some(0));
    assert_eq!(layer.weight().to_vec(), vec![6.0, 8.0, 0.0, 1.0]);
    let scaled = WeightNorm::from_parts(&g, &(&v * 7.0), None, Some(0));
    assert_eq!(scaled.weight().to_vec(), layer.weight().to_vec());
}

#[test]
fn parameters_have_pytorch_s_names_and_the_older_names_load_too() {
    let layer = WeightNorm::new(
        Linear::from_weights(&Tensor::ones([2, 3]), Some(&Tensor::zeros([2]))),
        Some(0),
    );
    let names: Vec<String> = layer
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "parametrizations.weight.original0",
            "parametrizations.weight.original1",
            "bias"
        ]
    );
    let old = StateDict::from([
        ("weight_g", Tensor::from_vec(vec![2.0, 3.0], [2, 1])),
        (
            "weight_v",
            Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0, 2.0, 0.0], [2, 3]),
        ),
        ("bias", Tensor::zeros([2])),
    ]);
    layer.load_state_dict(&old).unwrap();
    assert_eq!(layer.weight().to_vec(), vec![2.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
    let wrong = StateDict::from([("weight_g", Tensor::ones([1, 3]))]);
    let err = layer.load_state_dict(&wrong).unwrap_err().to_string();
    assert!(
        err.contains(
            "parametrizations.weight.original0: expected shape [2, 1], found [1, 3]"
        ),
        "{err}"
    );
    assert!(
        err.contains("missing: parametrizations.weight.original1, bias"),
        "{err}"
    );
}

#[test]
fn a_dim_other_than_0_1_or_none_and_a_misshaped_g_are_refused() {
    let message = panic_message(|| {
        WeightNorm::new(Linear::from_weights(&Tensor::ones([2, 3]), None), Some(2));
    });
    assert!(
        message.starts_with(
            "WeightNorm::new: dim must be Some(0) (a norm per output row)"
        ),
        "{message}"
    );
    assert!(
        message.contains("found Some(2) for a weight of shape [2, 3]"),
        "{message}"
    );
    let message = panic_message(|| {
        WeightNorm::from_parts(
            &Tensor::scalar(1.0),
            &Tensor::ones([2, 3]),
            None,
            Some(2),
        );
    });
    assert_eq!(
        message,
        "WeightNorm::from_parts: dim must be Some(0), Some(1) or None, found Some(2)"
    );
    let message = panic_message(|| {
        WeightNorm::from_parts(
            &Tensor::ones([2]),
            &Tensor::ones([2, 3]),
            None,
            Some(0),
        );
    });
    assert!(
        message.contains("the length g must have shape [2, 1] for v [2, 3] and dim Some(0), found [2]"),
        "{message}"
    );
}
