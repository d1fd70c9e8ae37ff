//! Loading weights by name: a module copies a state's values into parameters it owns (the
//! PyTorch rule), whatever the state held.

use attention::prelude::*;

/// A copy of `state` in which every other entry is a leaf that requires a gradient (what a
/// caller holding its own trainable tensors passes), the rest plain (what `state_dict()`
/// and checkpoints give).
fn mixed(state: &StateDict) -> StateDict {
    state
        .iter()
        .enumerate()
        .map(|(i, (name, t))| {
            let t = Tensor::from_vec(t.to_vec(), t.shape());
            (name, if i % 2 == 0 { t } else { t.requires_grad_() })
        })
        .collect()
}

/// Builds a module from a mixed state with `build`, trains it one step with `run`, and
/// checks that the module's parameters are its own leaves and that the state is untouched.
#[track_caller]
fn check_loading_copies<M: Module>(
    label: &str,
    state: &StateDict,
    build: impl Fn(&StateDict) -> M,
    run: impl Fn(&M) -> Tensor,
) {
    let given = mixed(state);
    let before: Vec<(String, Vec<f32>, bool)> = given
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_vec(), t.requires_grad()))
        .collect();
    let module = build(&given);
    for (name, p) in module.named_parameters() {
        assert!(
            p.is_leaf() && p.requires_grad(),
            "{label}: {name} is a parameter"
        );
        let source = given
            .get(&name)
            .expect("a parameter of every name in the state");
        assert!(
            !p.same(source),
            "{label}: {name} is a copy, not the state's tensor"
        );
        assert_eq!(
            p.to_vec(),
            source.to_vec(),
            "{label}: {name} has the state's values"
        );
    }
    run(&module).sum().backward();
    let mut sgd = Sgd::new(
        module.parameters(),
        SgdConfig {
            lr: 0.1,
            ..Default::default()
        },
    );
    sgd.step();
    let moved = module
        .named_parameters()
        .iter()
        .any(|(n, p)| p.to_vec() != given.get(n).unwrap().to_vec());
    assert!(moved, "{label}: the step changed the module");
    for (name, values, requires_grad) in before {
        let t = given.get(&name).unwrap();
        assert_eq!(t.to_vec(), values, "{label}: {name} keeps its values");
        assert_eq!(
            t.requires_grad(),
            requires_grad,
            "{label}: {name} keeps its mark"
        );
        assert!(t.grad().is_err(), "{label}: {name} received no gradient");
    }
}

#[test]
fn from_state_dict_copies_the_state_into_parameters_the_module_owns() {
    manual_seed(40);
    let (q, kv) = (Tensor::randn([2, 3, 4]), Tensor::randn([2, 5, 4]));
    let (query, keys, values) = (
        Tensor::randn([2, 4]),
        Tensor::randn([2, 5, 4]),
        Tensor::randn([2, 5, 3]),
    );

    let config = AdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        num_hiddens: 6,
        ..Default::default()
    };
    check_loading_copies(
        "AdditiveAttention",
        &AdditiveAttention::new(config).state_dict(),
        |s| AdditiveAttention::from_state_dict(config, s).unwrap(),
        |m| m.forward(&q, &kv, &kv, &Mask::none()),
    );

    let config = BahdanauAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 3,
        num_hiddens: 6,
        ..Default::default()
    };
    check_loading_copies(
        "BahdanauAttention",
        &BahdanauAttention::new(config).state_dict(),
        |s| BahdanauAttention::from_state_dict(config, s).unwrap(),
        |m| m.forward(&query, &keys, &values, &Mask::none()).0,
    );

    let config = MultiHeadAdditiveAttentionConfig {
        query_size: 4,
        key_size: 4,
        value_size: 3,
        num_hiddens: 6,
        num_heads: 2,
        ..Default::default()
    };
    check_loading_copies(
        "MultiHeadAdditiveAttention",
        &MultiHeadAdditiveAttention::new(config).state_dict(),
        |s| MultiHeadAdditiveAttention::from_state_dict(config, s).unwrap(),
        |m| m.forward(&query, &keys, &values, &Mask::none()).0,
    );

    let config = MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        bias: true,
        ..Default::default()
    };
    check_loading_copies(
        "MultiHeadAttention",
        &MultiHeadAttention::new(config).state_dict(),
        |s| MultiHeadAttention::from_state_dict(config, s).unwrap(),
        |m| m.forward(&q, &kv, &kv, &Mask::none()),
    );

    let config = CausalSelfAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    };
    check_loading_copies(
        "CausalSelfAttention",
        &CausalSelfAttention::new(config).state_dict(),
        |s| CausalSelfAttention::from_state_dict(config, s).unwrap(),
        |m| m.forward(&q, &Mask::none()),
    );
}

#[test]
fn load_state_dict_copies_the_state_too() {
    manual_seed(41);
    let config = MultiHeadAttentionConfig {
        num_hiddens: 4,
        num_heads: 2,
        ..Default::default()
    };
    let x = Tensor::randn([1, 3, 4]);
    check_loading_copies(
        "MultiHeadAttention::load_state_dict",
        &MultiHeadAttention::new(config).state_dict(),
        |s| {
            let m = MultiHeadAttention::new(config);
            m.load_state_dict(s).unwrap();
            m
        },
        |m| m.forward(&x, &x, &x, &Mask::causal()),
    );
}
