//! Tests of the `nn` module: layers against PyTorch (golden values from
//! `tests/golden/nn_optim.py`), gradients against finite differences, initialisers against
//! their formulas, parameter bookkeeping, train/eval, and the messages for bad input.

use crate::nn_golden;

use engine::gradcheck::gradcheck;
use engine::nn::init::{self, FanMode};
use engine::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Gru, GruCell, GruConfig,
    LayerNorm, LayerNormConfig, Linear, LinearConfig, Module, StateDict, StateReader,
    parameter, prefixed,
};
use engine::optim::{Optimizer, Sgd, SgdConfig};
use engine::{Tensor, manual_seed};
use nn_golden::{assert_close, case, to_tensor};
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Golden data
// ---------------------------------------------------------------------------------------

fn tensor(case: &Value, key: &str) -> Tensor {
    to_tensor(&case[key])
}

#[track_caller]
fn assert_matches(actual: &Tensor, case: &Value, key: &str) {
    assert_close(actual, &case[key], key);
}

#[track_caller]
fn grad_of(t: &Tensor) -> Tensor {
    t.grad().expect("the tensor received a gradient")
}

// ---------------------------------------------------------------------------------------
// Agreement with PyTorch
// ---------------------------------------------------------------------------------------

#[test]
fn linear_with_bias_matches_pytorch_output_and_gradients_for_batched_input() {
    let c = case("linear_bias");
    let x = tensor(c, "x").requires_grad_();
    let layer = Linear::from_weights(&tensor(c, "weight"), Some(&tensor(c, "bias")));
    let out = layer.forward(&x);
    assert_matches(&out, c, "out");
    out.backward_with(&tensor(c, "upstream"));
    assert_matches(&grad_of(&x), c, "grad_x");
    assert_matches(&grad_of(layer.weight()), c, "grad_weight");
    assert_matches(&grad_of(layer.bias().unwrap()), c, "grad_bias");
}

#[test]
fn linear_without_bias_matches_pytorch_output_and_gradients() {
    let c = case("linear_no_bias");
    let x = tensor(c, "x").requires_grad_();
    let layer = Linear::from_weights(&tensor(c, "weight"), None);
    assert!(layer.bias().is_none());
    let out = layer.forward(&x);
    assert_matches(&out, c, "out");
    out.backward_with(&tensor(c, "upstream"));
    assert_matches(&grad_of(&x), c, "grad_x");
    assert_matches(&grad_of(layer.weight()), c, "grad_weight");
}

#[test]
fn layer_norm_matches_pytorch_output_and_gradients() {
    let c = case("layer_norm");
    let eps = c["eps"].as_f64().unwrap() as f32;
    let x = tensor(c, "x").requires_grad_();
    let layer =
        LayerNorm::from_weights(&tensor(c, "weight"), &tensor(c, "bias"), eps);
    let out = layer.forward(&x);
    assert_matches(&out, c, "out");
    out.backward_with(&tensor(c, "upstream"));
    assert_matches(&grad_of(&x), c, "grad_x");
    assert_matches(&grad_of(layer.weight()), c, "grad_weight");
    assert_matches(&grad_of(layer.bias()), c, "grad_bias");
}

#[test]
fn embedding_matches_pytorch_and_accumulates_gradients_of_repeated_ids() {
    let c = case("embedding");
    let layer = Embedding::from_weights(&tensor(c, "weight"));
    let out = layer.forward(&tensor(c, "ids"));
    assert_matches(&out, c, "out");
    out.backward_with(&tensor(c, "upstream"));
    assert_matches(&grad_of(layer.weight()), c, "grad_weight");
}

#[test]
fn gru_cell_matches_pytorch_output_and_every_gradient() {
    let c = case("gru_cell");
    let x = tensor(c, "x").requires_grad_();
    let h = tensor(c, "h").requires_grad_();
    let cell = GruCell::from_weights(
        &tensor(c, "weight_ih"),
        &tensor(c, "weight_hh"),
        &tensor(c, "bias_ih"),
        &tensor(c, "bias_hh"),
    );
    let out = cell.forward(&x, &h);
    assert_matches(&out, c, "out");
    out.backward_with(&tensor(c, "upstream"));
    assert_matches(&grad_of(&x), c, "grad_x");
    assert_matches(&grad_of(&h), c, "grad_h");
    for (name, p) in cell.named_parameters() {
        assert_matches(&grad_of(&p), c, &format!("grad_{name}"));
    }
}

#[test]
fn gru_over_a_sequence_matches_pytorch_gru_with_batch_first() {
    let c = case("gru");
    let x = tensor(c, "x").requires_grad_();
    let h0 = tensor(c, "h0").requires_grad_();
    // The state dict under nn.GRU's own names (the golden file drops their `_l0`).
    let gru = Gru::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    });
    let pytorch: StateDict = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
        .map(|n| (format!("{n}_l0"), tensor(c, n)))
        .into_iter()
        .collect();
    gru.load_state_dict(&pytorch).unwrap();
    let (outputs, last) = gru.forward(&x, Some(&h0));
    assert_matches(&outputs, c, "outputs");
    assert_matches(&last, c, "last");
    let loss = (&outputs * &tensor(c, "upstream_outputs")).sum()
        + (&last * &tensor(c, "upstream_last")).sum();
    loss.backward();
    assert_matches(&grad_of(&x), c, "grad_x");
    assert_matches(&grad_of(&h0), c, "grad_h0");
    for (name, p) in gru.named_parameters() {
        let short = name.strip_suffix("_l0").unwrap();
        assert_matches(&grad_of(&p), c, &format!("grad_{short}"));
    }
}

// ---------------------------------------------------------------------------------------
// Gradients against finite differences
// ---------------------------------------------------------------------------------------

#[test]
fn linear_gradient_matches_finite_differences_for_input_weight_and_bias() {
    manual_seed(1);
    let inputs = [
        Tensor::randn([2, 3, 4]),
        Tensor::randn([5, 4]),
        Tensor::randn([5]),
    ];
    let f = |t: &[Tensor]| Linear::from_weights(&t[1], Some(&t[2])).forward(&t[0]);
    gradcheck(f, &inputs).unwrap();
}

#[test]
fn layer_norm_gradient_matches_finite_differences_for_input_weight_and_bias() {
    manual_seed(2);
    let inputs = [
        Tensor::normal([3, 5], 0.5, 2.0),
        Tensor::normal([5], 1.0, 0.3),
        Tensor::randn([5]),
    ];
    let f = |t: &[Tensor]| LayerNorm::from_weights(&t[1], &t[2], 1e-5).forward(&t[0]);
    gradcheck(f, &inputs).unwrap();
}

#[test]
fn embedding_gradient_matches_finite_differences_for_the_table() {
    manual_seed(3);
    let ids = Tensor::from_vec(vec![0.0, 2.0, 2.0, 1.0, 0.0, 2.0], [2, 3]);
    let f = |t: &[Tensor]| Embedding::from_weights(&t[0]).forward(&ids);
    gradcheck(f, &[Tensor::randn([4, 3])]).unwrap();
}

#[test]
fn gru_cell_gradient_matches_finite_differences_for_input_hidden_and_parameters() {
    manual_seed(4);
    let (i, h) = (3, 4);
    let inputs = [
        Tensor::randn([2, i]),
        Tensor::randn([2, h]),
        Tensor::normal([3 * h, i], 0.0, 0.5),
        Tensor::normal([3 * h, h], 0.0, 0.5),
        Tensor::normal([3 * h], 0.0, 0.5),
        Tensor::normal([3 * h], 0.0, 0.5),
    ];
    let f = |t: &[Tensor]| {
        GruCell::from_weights(&t[2], &t[3], &t[4], &t[5]).forward(&t[0], &t[1])
    };
    gradcheck(f, &inputs).unwrap();
}

#[test]
fn gru_sequence_gradient_matches_finite_differences() {
    manual_seed(5);
    let (i, h) = (2, 3);
    let inputs = [
        Tensor::randn([2, 3, i]),
        Tensor::randn([2, h]),
        Tensor::normal([3 * h, i], 0.0, 0.5),
        Tensor::normal([3 * h, h], 0.0, 0.5),
        Tensor::normal([3 * h], 0.0, 0.5),
        Tensor::normal([3 * h], 0.0, 0.5),
    ];
    let f = |t: &[Tensor]| {
        let gru = Gru::from_cell(GruCell::from_weights(&t[2], &t[3], &t[4], &t[5]));
        gru.forward(&t[0], Some(&t[1])).0
    };
    gradcheck(f, &inputs).unwrap();
}

// ---------------------------------------------------------------------------------------
// Forward behaviour
// ---------------------------------------------------------------------------------------

#[test]
fn linear_computes_x_times_weight_transposed_plus_bias() {
    let w = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let b = Tensor::from_vec(vec![0.5, -1.0], [2]);
    let layer = Linear::from_weights(&w, Some(&b));
    let y = layer.forward(&Tensor::from_vec(vec![1.0, 0.0, -1.0], [1, 3]));
    assert_eq!(y.to_vec(), vec![1.0 - 3.0 + 0.5, 4.0 - 6.0 - 1.0]);
}

#[test]
fn linear_accepts_a_single_vector_and_gives_the_same_values_as_a_batch_of_one() {
    manual_seed(6);
    let layer = Linear::new(LinearConfig {
        in_features: 3,
        out_features: 2,
        ..Default::default()
    });
    let x = Tensor::randn([3]);
    let single = layer.forward(&x);
    assert_eq!(single.shape(), &[2]);
    assert_eq!(single.to_vec(), layer.forward(&x.unsqueeze(0)).to_vec());
}

#[test]
fn layer_norm_output_has_zero_mean_and_unit_biased_variance_per_row() {
    manual_seed(7);
    let norm = LayerNorm::new(LayerNormConfig {
        dim: 8,
        ..Default::default()
    });
    let y = norm.forward(&Tensor::normal([3, 8], 4.0, 3.0)).to_vec();
    for row in y.chunks(8) {
        let mean = row.iter().sum::<f32>() / 8.0;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / 8.0;
        assert!(mean.abs() < 1e-5, "mean {mean}");
        // Slightly below 1 because of eps: var / (var + eps).
        assert!((var - 1.0).abs() < 1e-4, "variance {var}");
    }
}

#[test]
fn embedding_keeps_the_shape_of_the_ids_and_appends_dim() {
    manual_seed(8);
    let emb = Embedding::new(EmbeddingConfig {
        num_embeddings: 7,
        embedding_dim: 5,
    });
    let ids = Tensor::from_vec(vec![6.0, 0.0, 3.0, 3.0, 1.0, 2.0], [3, 1, 2]);
    let y = emb.forward(&ids);
    assert_eq!(y.shape(), &[3, 1, 2, 5]);
    let table = emb.weight().to_vec();
    assert_eq!(&y.to_vec()[..5], &table[30..35], "the first id is 6: row 6");
}

#[test]
fn gru_cell_keeps_the_hidden_state_when_the_update_gate_saturates() {
    // A huge z bias makes z = 1, so h' = h whatever the input.
    let (i, h) = (2, 3);
    let mut b_ih = vec![0.0; 3 * h];
    b_ih[h..2 * h].fill(100.0);
    let cell = GruCell::from_weights(
        &Tensor::ones([3 * h, i]),
        &Tensor::ones([3 * h, h]),
        &Tensor::from_vec(b_ih, [3 * h]),
        &Tensor::zeros([3 * h]),
    );
    let state = Tensor::from_vec(vec![0.1, -0.2, 0.3, 0.4, 0.5, -0.6], [2, h]);
    let next = cell.forward(&Tensor::ones([2, i]), &state);
    assert_eq!(next.to_vec(), state.to_vec());
}

#[test]
fn gru_outputs_are_the_cell_applied_step_by_step_from_a_zero_state() {
    manual_seed(9);
    let gru = Gru::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    });
    let x = Tensor::randn([2, 3, 3]);
    let (outputs, last) = gru.forward(&x, None);
    let mut h = Tensor::zeros([2, 4]);
    for t in 0..3 {
        h = gru.cell().forward(&x.narrow(1, t, 1).squeeze(1), &h);
        let step = outputs.narrow(1, t, 1).squeeze(1).to_vec();
        for (a, b) in step.iter().zip(h.to_vec()) {
            assert!((a - b).abs() < 1e-6, "step {t}: {a} vs {b}");
        }
    }
    assert_eq!(last.to_vec(), outputs.narrow(1, 2, 1).squeeze(1).to_vec());
}

// ---------------------------------------------------------------------------------------
// Dropout: statistics and modes (its random stream differs from PyTorch's)
// ---------------------------------------------------------------------------------------

#[test]
fn dropout_zeroes_about_p_of_the_elements_and_scales_survivors_by_one_over_keep() {
    manual_seed(10);
    let n = 100_000;
    let p = 0.3;
    let y = Dropout::new(DropoutConfig { p })
        .forward(&Tensor::ones([n]))
        .to_vec();
    let zeros = y.iter().filter(|&&v| v == 0.0).count() as f32 / n as f32;
    // The standard deviation of the fraction is √(p(1−p)/n) ≈ 0.0014: 0.01 is 7σ.
    assert!((zeros - p).abs() < 0.01, "fraction dropped {zeros}");
    let scale = 1.0 / (1.0 - p);
    assert!(y.iter().all(|&v| v == 0.0 || v == scale));
}

#[test]
fn dropout_gradient_is_the_same_mask_and_scale_as_the_forward_pass() {
    manual_seed(11);
    let x = Tensor::ones([1000]).requires_grad_();
    let y = Dropout::new(DropoutConfig { p: 0.5 }).forward(&x);
    y.sum().backward();
    assert_eq!(grad_of(&x).to_vec(), y.to_vec());
}

#[test]
fn dropout_starts_in_training_mode_and_eval_makes_it_the_identity() {
    manual_seed(12);
    let mut drop = Dropout::new(DropoutConfig { p: 0.9 });
    assert!(drop.is_training());
    let x = Tensor::ones([200]);
    assert_ne!(drop.forward(&x).to_vec(), x.to_vec());
    drop.eval();
    assert!(!drop.is_training());
    assert_eq!(drop.forward(&x).to_vec(), x.to_vec());
    drop.train();
    assert!(drop.is_training());
    assert_ne!(drop.forward(&x).to_vec(), x.to_vec());
}

/// A container whose mode must reach its child.
struct Block {
    proj: Linear,
    drop: Dropout,
}

impl Module for Block {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        prefixed("proj", &self.proj)
    }

    fn set_training(&mut self, training: bool) {
        self.drop.set_training(training);
    }
}

#[test]
fn eval_on_a_container_reaches_its_dropout_child() {
    let mut block = Block {
        proj: Linear::new(LinearConfig {
            in_features: 2,
            out_features: 2,
            ..Default::default()
        }),
        drop: Dropout::new(DropoutConfig { p: 0.5 }),
    };
    block.eval();
    assert!(!block.drop.is_training());
    block.train();
    assert!(block.drop.is_training());
    let names: Vec<String> = block
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["proj.weight", "proj.bias"]);
}

// ---------------------------------------------------------------------------------------
// Parameters: names, counts, identity
// ---------------------------------------------------------------------------------------

fn names(m: &dyn Module) -> Vec<String> {
    m.named_parameters().into_iter().map(|(n, _)| n).collect()
}

#[test]
fn named_parameters_use_pytorch_names() {
    assert_eq!(
        names(&Linear::new(LinearConfig {
            in_features: 3,
            out_features: 2,
            ..Default::default()
        })),
        ["weight", "bias"]
    );
    assert_eq!(
        names(&Linear::new(LinearConfig {
            in_features: 3,
            out_features: 2,
            bias: false
        })),
        ["weight"]
    );
    assert_eq!(
        names(&Embedding::new(EmbeddingConfig {
            num_embeddings: 5,
            embedding_dim: 2
        })),
        ["weight"]
    );
    assert_eq!(
        names(&LayerNorm::new(LayerNormConfig {
            dim: 4,
            ..Default::default()
        })),
        ["weight", "bias"]
    );
    assert!(names(&Dropout::new(DropoutConfig { p: 0.1 })).is_empty());
    assert_eq!(
        names(&GruCell::new(GruConfig {
            input_size: 3,
            hidden_size: 4
        })),
        ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    );
    assert_eq!(
        names(&Gru::new(GruConfig {
            input_size: 3,
            hidden_size: 4
        })),
        // nn.GRU's names for layer 0; the cell keeps nn.GRUCell's, above.
        ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    );
}

#[test]
fn parameter_shapes_follow_pytorch_layouts() {
    let shapes = |m: &dyn Module| -> Vec<Vec<usize>> {
        m.parameters().iter().map(|p| p.shape().to_vec()).collect()
    };
    assert_eq!(
        shapes(&Linear::new(LinearConfig {
            in_features: 3,
            out_features: 2,
            ..Default::default()
        })),
        [vec![2, 3], vec![2]]
    );
    assert_eq!(
        shapes(&Embedding::new(EmbeddingConfig {
            num_embeddings: 5,
            embedding_dim: 2
        })),
        [vec![5, 2]]
    );
    assert_eq!(
        shapes(&GruCell::new(GruConfig {
            input_size: 3,
            hidden_size: 4
        })),
        [vec![12, 3], vec![12, 4], vec![12], vec![12]]
    );
}

#[test]
fn num_parameters_counts_every_element_like_pytorch() {
    // The counts PyTorch reports with sum(p.numel() for p in m.parameters()).
    assert_eq!(
        Linear::new(LinearConfig {
            in_features: 4,
            out_features: 3,
            ..Default::default()
        })
        .num_parameters(),
        15
    );
    assert_eq!(
        Linear::new(LinearConfig {
            in_features: 4,
            out_features: 3,
            bias: false
        })
        .num_parameters(),
        12
    );
    assert_eq!(
        Embedding::new(EmbeddingConfig {
            num_embeddings: 10,
            embedding_dim: 4
        })
        .num_parameters(),
        40
    );
    assert_eq!(
        LayerNorm::new(LayerNormConfig {
            dim: 6,
            ..Default::default()
        })
        .num_parameters(),
        12
    );
    assert_eq!(Dropout::new(DropoutConfig { p: 0.5 }).num_parameters(), 0);
    assert_eq!(
        GruCell::new(GruConfig {
            input_size: 3,
            hidden_size: 4
        })
        .num_parameters(),
        108
    );
    assert_eq!(
        Gru::new(GruConfig {
            input_size: 3,
            hidden_size: 4
        })
        .num_parameters(),
        108
    );
}

#[test]
fn every_parameter_is_a_leaf_that_requires_a_gradient() {
    let layers: Vec<Box<dyn Module>> = vec![
        Box::new(Linear::new(LinearConfig {
            in_features: 3,
            out_features: 2,
            ..Default::default()
        })),
        Box::new(Embedding::new(EmbeddingConfig {
            num_embeddings: 5,
            embedding_dim: 2,
        })),
        Box::new(LayerNorm::new(LayerNormConfig {
            dim: 4,
            ..Default::default()
        })),
        Box::new(Gru::new(GruConfig {
            input_size: 2,
            hidden_size: 3,
        })),
    ];
    for layer in &layers {
        for (name, p) in layer.named_parameters() {
            assert!(p.is_leaf() && p.requires_grad(), "{name}");
        }
    }
}

#[test]
fn parameters_share_values_with_the_layer() {
    let layer = Linear::new(LinearConfig {
        in_features: 2,
        out_features: 1,
        bias: false,
    });
    layer.parameters()[0].assign(&Tensor::from_vec(vec![2.0, 3.0], [1, 2]));
    let y = layer.forward(&Tensor::from_vec(vec![1.0, 1.0], [1, 2]));
    assert_eq!(y.to_vec(), vec![5.0]);
}

#[test]
fn from_weights_keeps_the_callers_parameter_handle() {
    let w = Tensor::ones([2, 3]).requires_grad_();
    let layer = Linear::from_weights(&w, None);
    assert!(layer.weight().same(&w));
    layer.forward(&Tensor::ones([1, 3])).sum().backward();
    assert_eq!(grad_of(&w).to_vec(), vec![1.0; 6]);
}

#[test]
fn parameter_detaches_a_computed_tensor_into_a_new_leaf() {
    let w = Tensor::ones([2]).requires_grad_();
    let doubled = &w * 2.0;
    let p = parameter(&doubled);
    assert!(p.is_leaf() && p.requires_grad());
    assert!(!p.same(&doubled));
    assert_eq!(p.to_vec(), vec![2.0, 2.0]);
}

#[test]
fn module_zero_grad_clears_every_parameter_gradient() {
    let layer = Linear::new(LinearConfig {
        in_features: 2,
        out_features: 2,
        ..Default::default()
    });
    layer.forward(&Tensor::ones([1, 2])).sum().backward();
    assert!(layer.parameters().iter().all(|p| p.grad().is_ok()));
    layer.zero_grad();
    assert!(layer.parameters().iter().all(|p| p.grad().is_err()));
}

// ---------------------------------------------------------------------------------------
// State dicts: loading copies; editing a checkpoint's state
// ---------------------------------------------------------------------------------------

/// A state holding one plain tensor (as `state_dict()` and checkpoints give) and one that
/// requires a gradient, for a `Linear(2, 2)`.
fn mixed_state() -> StateDict {
    StateDict::from([
        (
            "proj.weight",
            Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [2, 2]),
        ),
        (
            "proj.bias",
            Tensor::from_vec(vec![0.5, -0.5], [2]).requires_grad_(),
        ),
    ])
}

#[test]
fn state_reader_copies_every_tensor_into_a_fresh_parameter() {
    let state = mixed_state();
    let mut reader = StateReader::new(&state);
    let layer = reader.linear(
        "proj",
        LinearConfig {
            in_features: 2,
            out_features: 2,
            bias: true,
        },
    );
    reader.finish().unwrap();
    for (name, p) in layer.named_parameters() {
        let given = state.get(&format!("proj.{name}")).unwrap();
        assert!(p.is_leaf() && p.requires_grad(), "{name} is a parameter");
        assert!(!p.same(given), "{name} is not the state's handle");
        assert_eq!(p.to_vec(), given.to_vec(), "{name} has the state's values");
    }
    // One step of training changes the layer, never the state, whatever it held.
    layer.forward(&Tensor::ones([1, 2])).sum().backward();
    let mut sgd = Sgd::new(
        layer.parameters(),
        SgdConfig {
            lr: 0.1,
            ..Default::default()
        },
    );
    sgd.step();
    assert_eq!(layer.bias().unwrap().to_vec(), vec![0.4, -0.6]);
    assert_eq!(
        state.get("proj.weight").unwrap().to_vec(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    let bias = state.get("proj.bias").unwrap();
    assert_eq!(bias.to_vec(), vec![0.5, -0.5]);
    assert!(
        bias.grad().is_err(),
        "the state's tensor received no gradient"
    );
    assert!(!state.get("proj.weight").unwrap().requires_grad());
}

#[test]
fn state_reader_says_which_names_the_state_holds() {
    let state = mixed_state();
    let reader = StateReader::new(&state);
    assert!(reader.contains("proj.bias"));
    assert!(!reader.contains("proj"));
}

#[test]
fn state_dict_remove_takes_one_entry_out_and_keeps_the_order() {
    let mut state = StateDict::from([
        ("a", Tensor::scalar(1.0)),
        ("b", Tensor::scalar(2.0)),
        ("c", Tensor::scalar(3.0)),
    ]);
    assert_eq!(state.remove("b").map(|t| t.item()), Some(2.0));
    assert!(state.remove("b").is_none());
    assert_eq!(state.names().collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(state.len(), 2);
}

#[test]
fn state_dict_rename_keeps_the_place_and_replaces_an_entry_of_the_new_name() {
    let mut state = StateDict::from([
        ("a", Tensor::scalar(1.0)),
        ("b", Tensor::scalar(2.0)),
        ("c", Tensor::scalar(3.0)),
    ]);
    assert!(state.rename("a", "z"));
    assert_eq!(state.names().collect::<Vec<_>>(), ["z", "b", "c"]);
    // Onto an existing name: that entry goes, as with Python's state[to] = state.pop(from).
    assert!(state.rename("c", "b"));
    assert_eq!(state.names().collect::<Vec<_>>(), ["z", "b"]);
    assert_eq!(state.get("b").unwrap().item(), 3.0);
    // Onto itself: nothing changes.
    assert!(state.rename("z", "z"));
    assert_eq!(state.names().collect::<Vec<_>>(), ["z", "b"]);
    // A name that is not there: false, nothing changes.
    assert!(!state.rename("a", "y"));
    assert_eq!(state.len(), 2);
}

#[test]
fn state_dict_with_prefix_strips_the_prefix_of_the_entries_under_it() {
    let state = StateDict::from([
        ("encoder.", Tensor::scalar(0.0)),
        ("encoder.rnn.weight_ih_l0", Tensor::scalar(1.0)),
        ("decoder.dense.weight", Tensor::scalar(2.0)),
        ("encoder.embedding.weight", Tensor::scalar(3.0)),
        ("encoder2.weight", Tensor::scalar(4.0)),
    ]);
    let encoder = state.with_prefix("encoder.");
    assert_eq!(
        encoder.names().collect::<Vec<_>>(),
        ["rnn.weight_ih_l0", "embedding.weight"]
    );
    assert!(
        encoder
            .get("embedding.weight")
            .unwrap()
            .same(state.get("encoder.embedding.weight").unwrap()),
        "the same handles"
    );
    // A plain string match: without the dot, encoder2 is selected too.
    let loose = state.with_prefix("encoder");
    assert_eq!(
        loose.names().collect::<Vec<_>>(),
        [".", ".rnn.weight_ih_l0", ".embedding.weight", "2.weight"]
    );
    assert!(state.with_prefix("nothing.").is_empty());
    assert_eq!(state.len(), 5, "the state itself is unchanged");
}

#[test]
fn a_checkpoint_with_the_old_gru_names_loads_after_a_rename() {
    let gru = Gru::new(GruConfig {
        input_size: 2,
        hidden_size: 3,
    });
    // What a state of the earlier naming, `cell.weight_ih`…, looked like.
    let mut old: StateDict = gru
        .state_dict()
        .iter()
        .map(|(n, t)| {
            (
                format!("cell.{}", n.strip_suffix("_l0").unwrap()),
                t.clone(),
            )
        })
        .collect();
    let err = gru.load_state_dict(&old).unwrap_err();
    assert_eq!(
        err.missing,
        ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    );
    for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"] {
        assert!(old.rename(&format!("cell.{name}"), format!("{name}_l0")));
    }
    gru.load_state_dict(&old).unwrap();
}

#[test]
fn the_prelude_brings_load_error_and_gelu_approx() {
    use engine::prelude::*;
    let layer = Linear::new(LinearConfig {
        in_features: 2,
        out_features: 1,
        ..Default::default()
    });
    let err: LoadError = layer.load_state_dict(&StateDict::new()).unwrap_err();
    assert_eq!(err.missing, ["weight", "bias"]);
    let x = Tensor::from_vec(vec![0.0], [1]);
    assert_eq!(x.gelu(GeluApprox::Tanh).to_vec(), vec![0.0]);
}

// ---------------------------------------------------------------------------------------
// Initialisers
// ---------------------------------------------------------------------------------------

/// (mean, standard deviation, largest |x|) of a tensor.
fn stats(t: &Tensor) -> (f64, f64, f64) {
    let v = t.to_vec();
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = v
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    let max = v.iter().map(|x| f64::from(x.abs())).fold(0.0, f64::max);
    (mean, var.sqrt(), max)
}

/// Checks `U(-bound, bound)`: inside the bounds, reaching near them, std `bound / √3`.
#[track_caller]
fn assert_symmetric_uniform(t: &Tensor, bound: f64) {
    let (mean, std, max) = stats(t);
    // The bound itself is rounded to f32 by the initialiser, hence a few ulps of slack.
    assert!(
        max <= bound * (1.0 + 1e-6),
        "largest |x| {max} exceeds the bound {bound}"
    );
    assert!(
        max > 0.99 * bound,
        "largest |x| {max} is far inside the bound {bound}"
    );
    assert!(mean.abs() < 0.01 * bound, "mean {mean}");
    let expected = bound / 3f64.sqrt();
    assert!(
        (std / expected - 1.0).abs() < 0.01,
        "std {std}, expected {expected}"
    );
}

/// Checks `N(0, σ²)` by its empirical mean and standard deviation.
#[track_caller]
fn assert_centred_normal(t: &Tensor, sigma: f64) {
    let (mean, std, _) = stats(t);
    assert!(mean.abs() < 0.01 * sigma, "mean {mean}");
    assert!(
        (std / sigma - 1.0).abs() < 0.01,
        "std {std}, expected {sigma}"
    );
}

#[test]
fn fans_follow_pytorch_for_linear_and_convolution_weights() {
    assert_eq!(init::fans(&[300, 200]), (200, 300));
    assert_eq!(init::fans(&[16, 8, 3, 3]), (72, 144));
}

#[test]
fn uniform_draws_inside_its_range_with_the_uniform_std() {
    manual_seed(20);
    let t = init::uniform([200_000], 1.0, 3.0);
    let (mean, std, _) = stats(&t);
    assert!(t.to_vec().iter().all(|&x| (1.0..3.0).contains(&x)));
    assert!((mean - 2.0).abs() < 0.01, "mean {mean}");
    assert!((std / (1.0 / 3f64.sqrt()) - 1.0).abs() < 0.01, "std {std}");
}

#[test]
fn normal_has_the_requested_mean_and_std() {
    manual_seed(21);
    let t = init::normal([200_000], 3.0, 0.5);
    let (mean, std, _) = stats(&t);
    assert!((mean - 3.0).abs() < 0.01, "mean {mean}");
    assert!((std / 0.5 - 1.0).abs() < 0.01, "std {std}");
}

#[test]
fn xavier_uniform_bound_is_gain_times_sqrt_6_over_fan_sum() {
    manual_seed(22);
    let t = init::xavier_uniform([400, 600], 2.0);
    assert_symmetric_uniform(&t, 2.0 * (6.0f64 / 1000.0).sqrt());
}

#[test]
fn xavier_normal_std_is_gain_times_sqrt_2_over_fan_sum() {
    manual_seed(23);
    let t = init::xavier_normal([400, 600], 0.5);
    assert_centred_normal(&t, 0.5 * (2.0f64 / 1000.0).sqrt());
}

#[test]
fn kaiming_uniform_bound_uses_the_chosen_fan_and_leaky_relu_gain() {
    manual_seed(24);
    // ReLU (a = 0), fan_in = 500: bound √3 · √2 / √500.
    let t = init::kaiming_uniform([400, 500], 0.0, FanMode::FanIn);
    assert_symmetric_uniform(&t, 6f64.sqrt() / 500f64.sqrt());
    // a = 1, fan_out = 400: gain 1, bound √3 / √400.
    let t = init::kaiming_uniform([400, 500], 1.0, FanMode::FanOut);
    assert_symmetric_uniform(&t, 3f64.sqrt() / 20.0);
}

#[test]
fn kaiming_normal_std_is_gain_over_sqrt_fan() {
    manual_seed(25);
    let t = init::kaiming_normal([400, 500], 0.0, FanMode::FanIn);
    assert_centred_normal(&t, (2.0f64 / 500.0).sqrt());
    let t = init::kaiming_normal([400, 500], 0.0, FanMode::FanOut);
    assert_centred_normal(&t, (2.0f64 / 400.0).sqrt());
}

#[test]
fn linear_default_init_is_uniform_within_one_over_sqrt_fan_in() {
    manual_seed(26);
    let layer = Linear::new(LinearConfig {
        in_features: 400,
        out_features: 500,
        ..Default::default()
    });
    assert_symmetric_uniform(layer.weight(), 1.0 / 20.0);
    let bias = layer.bias().unwrap().to_vec();
    assert!(bias.iter().all(|b| b.abs() <= 1.0 / 20.0));
    assert!(
        bias.iter().any(|b| b.abs() > 0.04),
        "the bias is not drawn from the range"
    );
}

#[test]
fn embedding_default_init_is_standard_normal() {
    manual_seed(27);
    assert_centred_normal(
        Embedding::new(EmbeddingConfig {
            num_embeddings: 1000,
            embedding_dim: 200,
        })
        .weight(),
        1.0,
    );
}

#[test]
fn layer_norm_starts_as_a_pure_normalisation() {
    let norm = LayerNorm::new(LayerNormConfig {
        dim: 3,
        ..Default::default()
    });
    assert_eq!(norm.weight().to_vec(), vec![1.0; 3]);
    assert_eq!(norm.bias().to_vec(), vec![0.0; 3]);
    assert_eq!(norm.eps(), 1e-5);
}

#[test]
fn gru_cell_default_init_is_uniform_within_one_over_sqrt_hidden() {
    manual_seed(28);
    let cell = GruCell::new(GruConfig {
        input_size: 300,
        hidden_size: 400,
    });
    assert_symmetric_uniform(cell.weight_ih(), 1.0 / 20.0);
    assert_symmetric_uniform(cell.weight_hh(), 1.0 / 20.0);
    for b in [cell.bias_ih(), cell.bias_hh()] {
        assert!(b.to_vec().iter().all(|v| v.abs() <= 1.0 / 20.0));
    }
}

#[test]
fn the_same_seed_gives_the_same_layer() {
    manual_seed(29);
    let a = Linear::new(LinearConfig {
        in_features: 5,
        out_features: 4,
        ..Default::default()
    });
    manual_seed(29);
    let b = Linear::new(LinearConfig {
        in_features: 5,
        out_features: 4,
        ..Default::default()
    });
    assert_eq!(a.weight().to_vec(), b.weight().to_vec());
    assert_eq!(a.bias().unwrap().to_vec(), b.bias().unwrap().to_vec());
    let c = Linear::new(LinearConfig {
        in_features: 5,
        out_features: 4,
        ..Default::default()
    });
    assert_ne!(a.weight().to_vec(), c.weight().to_vec());
}

// ---------------------------------------------------------------------------------------
// Messages for bad input
// ---------------------------------------------------------------------------------------

#[test]
#[should_panic(
    expected = "Linear::forward: the input's last dimension must be in_features = 4, found input shape [2, 3] (weight shape [5, 4])"
)]
fn linear_forward_rejects_the_wrong_number_of_features() {
    Linear::new(LinearConfig {
        in_features: 4,
        out_features: 5,
        ..Default::default()
    })
    .forward(&Tensor::ones([2, 3]));
}

#[test]
#[should_panic(
    expected = "Linear::from_weights: the bias must have shape [2] (out_features) to match the weight [2, 3], found [3]"
)]
fn linear_from_weights_rejects_a_bias_of_the_wrong_size() {
    Linear::from_weights(&Tensor::ones([2, 3]), Some(&Tensor::ones([3])));
}

#[test]
#[should_panic(
    expected = "Linear::from_weights: the weight ([out_features, in_features]) must have 2 dimensions, found shape [6] (rank 1)"
)]
fn linear_from_weights_rejects_a_one_dimensional_weight() {
    Linear::from_weights(&Tensor::ones([6]), None);
}

#[test]
#[should_panic(
    expected = "Linear::new: in_features must be at least 1, found 0 (sizes have no default: set it in the config)"
)]
fn linear_new_rejects_zero_features() {
    Linear::new(LinearConfig {
        in_features: 0,
        out_features: 3,
        ..Default::default()
    });
}

#[test]
#[should_panic(
    expected = "embedding: index 5 at position 2 is not a whole number in 0..5 (the vocabulary size)"
)]
fn embedding_forward_rejects_an_id_past_the_vocabulary() {
    Embedding::new(EmbeddingConfig {
        num_embeddings: 5,
        embedding_dim: 2,
    })
    .forward(&Tensor::from_vec(vec![0.0, 4.0, 5.0, 1.0], [4]));
}

#[test]
#[should_panic(expected = "embedding: index 1.5 at position 0")]
fn embedding_forward_rejects_a_fractional_id() {
    Embedding::new(EmbeddingConfig {
        num_embeddings: 5,
        embedding_dim: 2,
    })
    .forward(&Tensor::from_vec(vec![1.5], [1]));
}

#[test]
#[should_panic(
    expected = "LayerNorm::forward: the input's last dimension must be 4 (the normalised size), found input shape [4, 3]"
)]
fn layer_norm_forward_rejects_the_wrong_last_dimension() {
    LayerNorm::new(LayerNormConfig {
        dim: 4,
        ..Default::default()
    })
    .forward(&Tensor::ones([4, 3]));
}

#[test]
#[should_panic(
    expected = "LayerNorm::from_weights: the bias must have the weight's shape [4], found [3]"
)]
fn layer_norm_from_weights_rejects_mismatched_bias() {
    LayerNorm::from_weights(&Tensor::ones([4]), &Tensor::zeros([3]), 1e-5);
}

#[test]
#[should_panic(
    expected = "GruCell::forward: the input must have shape [batch, 3] (input_size 3), found [2, 4]"
)]
fn gru_cell_forward_rejects_the_wrong_input_size() {
    GruCell::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    })
    .forward(&Tensor::ones([2, 4]), &Tensor::zeros([2, 4]));
}

#[test]
#[should_panic(
    expected = "GruCell::forward: the hidden state must have shape [2, 4] (batch 2 from the input [2, 3], hidden_size 4), found [1, 4]"
)]
fn gru_cell_forward_rejects_a_hidden_state_of_another_batch_size() {
    GruCell::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    })
    .forward(&Tensor::ones([2, 3]), &Tensor::zeros([1, 4]));
}

#[test]
#[should_panic(
    expected = "GruCell::from_weights: weight_ih must have 3 * hidden_size rows (gates r, z, n), found shape [4, 3]"
)]
fn gru_cell_from_weights_rejects_rows_that_are_not_three_gates() {
    GruCell::from_weights(
        &Tensor::ones([4, 3]),
        &Tensor::ones([4, 4]),
        &Tensor::ones([4]),
        &Tensor::ones([4]),
    );
}

#[test]
#[should_panic(
    expected = "GruCell::from_weights: bias_hh must have shape [6] for hidden_size 2, found [2]"
)]
fn gru_cell_from_weights_rejects_a_bias_of_the_wrong_size() {
    GruCell::from_weights(
        &Tensor::ones([6, 3]),
        &Tensor::ones([6, 2]),
        &Tensor::ones([6]),
        &Tensor::ones([2]),
    );
}

#[test]
#[should_panic(
    expected = "Gru::forward: the input must have shape [batch, time, 3] (batch first, input_size 3, at least one step), found [2, 3]"
)]
fn gru_forward_rejects_input_without_a_time_dimension() {
    Gru::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    })
    .forward(&Tensor::ones([2, 3]), None);
}

#[test]
#[should_panic(
    expected = "Gru::forward: the initial hidden state must have shape [2, 4] (batch, hidden_size), found [2, 1, 4]"
)]
fn gru_forward_rejects_an_initial_state_with_a_layer_dimension() {
    Gru::new(GruConfig {
        input_size: 3,
        hidden_size: 4,
    })
    .forward(&Tensor::ones([2, 5, 3]), Some(&Tensor::zeros([2, 1, 4])));
}

#[test]
#[should_panic(
    expected = "Dropout::new: the probability p must be in [0, 1], found 1.5"
)]
fn dropout_new_rejects_a_probability_above_one() {
    Dropout::new(DropoutConfig { p: 1.5 });
}

#[test]
#[should_panic(
    expected = "nn::init::fans: fans need a weight with at least 2 dimensions ([out, in, ...]), found shape [5]"
)]
fn kaiming_init_rejects_a_one_dimensional_shape() {
    init::kaiming_uniform([5], 0.0, FanMode::FanIn);
}

#[test]
fn a_transposed_weight_is_a_mismatch_even_with_the_same_number_of_values() {
    // nn.Linear stores its weight [out, in]; a weight saved as [in, out] holds as many
    // values and must still be refused, not read in the wrong layout.
    let mut state = StateDict::new();
    state.insert("weight", Tensor::zeros([3, 2]));
    let mut reader = StateReader::new(&state);
    let weight = reader.tensor("weight", &[2, 3]);
    assert_eq!(weight.shape(), &[2, 3]);
    let err = reader.finish().unwrap_err();
    assert_eq!(
        err.mismatched,
        vec![("weight".to_string(), vec![2, 3], vec![3, 2])]
    );
    assert!(err.missing.is_empty() && err.unexpected.is_empty());
}
