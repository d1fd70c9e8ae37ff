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

/// Parameters cut out of a stacked or reshaped tensor are leaves of their own too.
#[track_caller]
fn assert_parameters_are_leaves(module: &impl Module) {
    for (name, p) in module.named_parameters() {
        assert!(p.is_leaf() && p.requires_grad(), "{name}");
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

// ---------------------------------------------------------------------------------------
// The article's names for BahdanauAttention
// ---------------------------------------------------------------------------------------

const BAHDANAU: BahdanauAttentionConfig = BahdanauAttentionConfig {
    query_size: 4,
    key_size: 3,
    value_size: 2,
    num_hiddens: 5,
    fill: Fill::Safe,
    scoring: AdditiveScoring::Fused,
    activation: Activation::Tanh,
};

/// The article's state dict for `module`: its own tensors under the article's names, `v`
/// as the `[1, h]` weight of `nn.Linear(h, 1, bias=False)`.
fn article_state(module: &BahdanauAttention, prefix: &str) -> StateDict {
    let own = module.state_dict();
    let mut article = StateDict::new();
    for (ours, theirs) in [
        ("W_q.weight", "query_proj.weight"),
        ("W_q.bias", "query_proj.bias"),
        ("W_k.weight", "key_proj.weight"),
        ("W_k.bias", "key_proj.bias"),
        ("W_o.weight", "value_proj.weight"),
        ("W_o.bias", "value_proj.bias"),
    ] {
        article.insert(format!("{prefix}{theirs}"), own.get(ours).unwrap().clone());
    }
    let h = module.num_hiddens();
    article.insert(
        format!("{prefix}v.weight"),
        module.v().reshape([1, h]).detach(),
    );
    article
}

fn bahdanau_inputs() -> (Tensor, Tensor, Tensor, Mask) {
    let pad = Tensor::from_vec(vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0], [2, 3]);
    (
        Tensor::randn([2, 4]),
        Tensor::randn([2, 3, 3]),
        Tensor::randn([2, 3, 2]),
        Mask::key_padding(&pad),
    )
}

#[test]
fn bahdanau_attention_loads_the_articles_names() {
    manual_seed(42);
    let original = BahdanauAttention::new(BAHDANAU);
    let (query, keys, values, mask) = bahdanau_inputs();
    let (context, weights) = original.forward(&query, &keys, &values, &mask);
    let article = article_state(&original, "");

    let built = BahdanauAttention::from_state_dict(BAHDANAU, &article).unwrap();
    assert_parameters_are_leaves(&built);
    let (c, w) = built.forward(&query, &keys, &values, &mask);
    assert_eq!(
        (c.to_vec(), w.to_vec()),
        (context.to_vec(), weights.to_vec())
    );
    // Its own names stay its state_dict's, and load as before.
    let names: Vec<String> = built.state_dict().names().map(String::from).collect();
    assert_eq!(
        names,
        [
            "W_q.weight",
            "W_q.bias",
            "W_k.weight",
            "W_k.bias",
            "v",
            "W_o.weight",
            "W_o.bias"
        ]
    );

    let loaded = BahdanauAttention::new(BAHDANAU);
    loaded.load_state_dict(&article).unwrap();
    let (c, _) = loaded.forward(&query, &keys, &values, &mask);
    assert_eq!(c.to_vec(), context.to_vec());
    loaded
        .load_state_dict(&BahdanauAttention::new(BAHDANAU).state_dict())
        .unwrap();
    assert_ne!(
        loaded.forward(&query, &keys, &values, &mask).0.to_vec(),
        context.to_vec()
    );
}

#[test]
fn an_article_state_that_does_not_fit_is_reported_in_the_articles_names() {
    manual_seed(43);
    let module = BahdanauAttention::new(BAHDANAU);
    let before = module.state_dict();
    let mut article = article_state(&module, "");
    article.remove("key_proj.bias");
    article.insert("v.weight", Tensor::zeros([5])); // the article's v is [1, h]
    article.insert("W_o.weight", Tensor::zeros([2, 2])); // the other layout's name
    let err = BahdanauAttention::from_state_dict(BAHDANAU, &article).unwrap_err();
    assert_eq!(err.missing, ["key_proj.bias"]);
    assert_eq!(err.unexpected, ["W_o.weight"]);
    assert_eq!(
        err.mismatched,
        [("v.weight".to_string(), vec![1, 5], vec![5])]
    );
    // load_state_dict gives the same report and changes nothing.
    assert_eq!(module.load_state_dict(&article).unwrap_err(), err);
    for (name, t) in module.state_dict().iter() {
        assert_eq!(t.to_vec(), before.get(name).unwrap().to_vec(), "{name}");
    }
}

#[test]
fn multi_head_additive_attention_loads_heads_under_the_articles_names() {
    manual_seed(44);
    let config = MultiHeadAdditiveAttentionConfig {
        query_size: 4,
        key_size: 3,
        value_size: 2,
        num_hiddens: 6,
        num_heads: 2,
        ..Default::default()
    };
    let original = MultiHeadAdditiveAttention::new(config);
    let own = original.state_dict();
    // Each head's tensors under the article's names, read back through a single head.
    let mut article = StateDict::new();
    for i in 0..2 {
        let head = BahdanauAttention::from_state_dict(
            BahdanauAttentionConfig {
                num_hiddens: 3,
                ..BAHDANAU
            },
            &own.with_prefix(&format!("heads.{i}.")),
        )
        .unwrap();
        for (n, t) in article_state(&head, &format!("heads.{i}.")).iter() {
            article.insert(n, t.clone());
        }
    }
    article.insert("W_o.weight", own.get("W_o.weight").unwrap().clone());
    article.insert("W_o.bias", own.get("W_o.bias").unwrap().clone());
    let (query, keys, values, mask) = bahdanau_inputs();
    let expected = original.forward(&query, &keys, &values, &mask).0;
    let built =
        MultiHeadAdditiveAttention::from_state_dict(config, &article).unwrap();
    assert_parameters_are_leaves(&built);
    assert_eq!(
        built.forward(&query, &keys, &values, &mask).0.to_vec(),
        expected.to_vec()
    );
    let loaded = MultiHeadAdditiveAttention::new(config);
    loaded.load_state_dict(&article).unwrap();
    assert_eq!(
        loaded.forward(&query, &keys, &values, &mask).0.to_vec(),
        expected.to_vec()
    );
}

// ---------------------------------------------------------------------------------------
// nn.MultiheadAttention's names for MultiHeadAttention
// ---------------------------------------------------------------------------------------

/// `nn.MultiheadAttention`'s state dict for `module` (all sizes equal): the three input
/// projections stacked in the order given.
fn torch_state(module: &MultiHeadAttention, order: [&str; 3]) -> StateDict {
    let own = module.state_dict();
    let stack = |part: &str| {
        let parts: Vec<Tensor> = order
            .iter()
            .map(|w| own.get(&format!("{w}.{part}")).unwrap().clone())
            .collect();
        Tensor::concat(&parts, 0)
    };
    StateDict::from([
        ("in_proj_weight", stack("weight")),
        ("in_proj_bias", stack("bias")),
        ("out_proj.weight", own.get("W_o.weight").unwrap().clone()),
        ("out_proj.bias", own.get("W_o.bias").unwrap().clone()),
    ])
}

const MHA: MultiHeadAttentionConfig = MultiHeadAttentionConfig {
    num_hiddens: 4,
    num_heads: 2,
    query_size: None,
    key_size: None,
    value_size: None,
    dropout: 0.0,
    bias: true,
    fill: Fill::Safe,
    path: AttentionPath::Auto,
};

#[test]
fn multi_head_attention_loads_nn_multihead_attentions_stacked_names_in_q_k_v_order() {
    manual_seed(45);
    let mut original = MultiHeadAttention::new(MHA);
    original.eval();
    let (q, kv) = (Tensor::randn([2, 3, 4]), Tensor::randn([2, 5, 4]));
    let expected = original.forward(&q, &kv, &kv, &Mask::none());
    let torch = torch_state(&original, ["W_q", "W_k", "W_v"]);

    let built = MultiHeadAttention::from_state_dict(MHA, &torch).unwrap();
    assert_parameters_are_leaves(&built);
    assert_eq!(
        built.forward(&q, &kv, &kv, &Mask::none()).to_vec(),
        expected.to_vec()
    );
    for (name, t) in built.state_dict().iter() {
        assert_eq!(
            t.to_vec(),
            original.state_dict().get(name).unwrap().to_vec(),
            "{name}"
        );
    }
    let loaded = MultiHeadAttention::new(MHA);
    loaded.load_state_dict(&torch).unwrap();
    assert_eq!(
        loaded.forward(&q, &kv, &kv, &Mask::none()).to_vec(),
        expected.to_vec()
    );

    // The order matters: k and q swapped in the stack give other numbers.
    let swapped = torch_state(&original, ["W_k", "W_q", "W_v"]);
    let wrong = MultiHeadAttention::from_state_dict(MHA, &swapped).unwrap();
    assert_ne!(
        wrong.forward(&q, &kv, &kv, &Mask::none()).to_vec(),
        expected.to_vec()
    );
}

#[test]
fn multi_head_attention_loads_separate_projections_when_key_and_value_sizes_differ() {
    manual_seed(46);
    let config = MultiHeadAttentionConfig {
        key_size: Some(3),
        value_size: Some(5),
        ..MHA
    };
    let original = MultiHeadAttention::new(config);
    let own = original.state_dict();
    let get = |n: &str| own.get(n).unwrap().clone();
    let biases =
        Tensor::concat(&[get("W_q.bias"), get("W_k.bias"), get("W_v.bias")], 0);
    let torch = StateDict::from([
        ("q_proj_weight", get("W_q.weight")),
        ("k_proj_weight", get("W_k.weight")),
        ("v_proj_weight", get("W_v.weight")),
        ("in_proj_bias", biases),
        ("out_proj.weight", get("W_o.weight")),
        ("out_proj.bias", get("W_o.bias")),
    ]);
    let (q, k, v) = (
        Tensor::randn([1, 2, 4]),
        Tensor::randn([1, 3, 3]),
        Tensor::randn([1, 3, 5]),
    );
    let built = MultiHeadAttention::from_state_dict(config, &torch).unwrap();
    assert_parameters_are_leaves(&built);
    assert_eq!(
        built.forward(&q, &k, &v, &Mask::none()).to_vec(),
        original.forward(&q, &k, &v, &Mask::none()).to_vec()
    );
}

#[test]
fn a_pytorch_state_that_does_not_fit_is_reported_in_pytorchs_names() {
    manual_seed(47);
    let module = MultiHeadAttention::new(MHA);
    let mut torch = torch_state(&module, ["W_q", "W_k", "W_v"]);
    torch.remove("in_proj_bias");
    torch.insert("in_proj_weight", Tensor::zeros([4, 4]));
    torch.insert("W_o.bias", Tensor::zeros([4]));
    let err = MultiHeadAttention::from_state_dict(MHA, &torch).unwrap_err();
    assert_eq!(
        err.mismatched,
        [("in_proj_weight".to_string(), vec![12, 4], vec![4, 4])]
    );
    assert_eq!(err.missing, ["in_proj_bias"]);
    assert_eq!(err.unexpected, ["W_o.bias"]);
    // A PyTorch module built with bias=False has no biases; this config expects them.
    let no_bias = StateDict::from([
        ("in_proj_weight", Tensor::zeros([12, 4])),
        ("out_proj.weight", Tensor::zeros([4, 4])),
    ]);
    let err = MultiHeadAttention::from_state_dict(MHA, &no_bias).unwrap_err();
    assert_eq!(err.missing, ["in_proj_bias", "out_proj.bias"]);
    let config = MultiHeadAttentionConfig { bias: false, ..MHA };
    MultiHeadAttention::from_state_dict(config, &no_bias).unwrap();
}
