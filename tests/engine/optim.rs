//! Tests of the `optim` module: every optimizer, the clipping and the warmup against
//! PyTorch (golden values from `tests/golden/nn_optim.py`), plus the properties the
//! formulas promise and the messages for bad hyper-parameters.

use crate::nn_golden;

use engine::nn::{Linear, LinearConfig, Module};
use engine::optim::{
    Adam, AdamConfig, AdamW, LinearWarmup, Optimizer, Sgd, SgdConfig, clip_grad_norm,
};
use engine::{Tensor, manual_seed};
use nn_golden::{assert_close, case, to_tensor};
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Golden data
// ---------------------------------------------------------------------------------------

fn f32_of(v: &Value) -> f32 {
    v.as_f64().expect("a number") as f32
}

#[track_caller]
fn assert_matches(actual: &Tensor, expected: &Value, what: &str) {
    assert_close(actual, expected, what);
}

/// Gives each parameter exactly the gradient `g` (or none), through `backward` as a real
/// loop would: the gradient of `Σ p ⊙ g` with respect to `p` is `g`.
fn set_grads(params: &[Tensor], grads: &[Option<Tensor>]) {
    let mut loss: Option<Tensor> = None;
    for (p, g) in params.iter().zip(grads) {
        p.zero_grad();
        if let Some(g) = g {
            let term = (p * g).sum();
            loss = Some(match loss {
                Some(l) => l + term,
                None => term,
            });
        }
    }
    if let Some(l) = loss {
        l.backward();
    }
}

/// [`set_grads`] for a single parameter.
fn set_grad(p: &Tensor, g: Tensor) {
    set_grads(std::slice::from_ref(p), &[Some(g)]);
}

/// Replays a golden optimizer case: fixed parameters, fixed gradients per step (`null` for
/// a parameter that has none on that step), parameters compared after every step.
fn replay(name: &str, make: impl FnOnce(Vec<Tensor>, &Value) -> Box<dyn Optimizer>) {
    let c = case(name);
    let params: Vec<Tensor> = c["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| to_tensor(v).requires_grad_())
        .collect();
    let mut opt = make(params.clone(), &c["config"]);
    let steps = c["grads"].as_array().unwrap();
    for (step, grads) in steps.iter().enumerate() {
        let grads: Vec<Option<Tensor>> = grads
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (!g.is_null()).then(|| to_tensor(g)))
            .collect();
        set_grads(&params, &grads);
        opt.step();
        for (i, p) in params.iter().enumerate() {
            assert_matches(
                p,
                &c["after"][step][i],
                &format!("{name} step {step} param {i}"),
            );
        }
    }
}

fn sgd_config(c: &Value) -> SgdConfig {
    SgdConfig {
        lr: f32_of(&c["lr"]),
        momentum: f32_of(&c["momentum"]),
        dampening: f32_of(&c["dampening"]),
        weight_decay: f32_of(&c["weight_decay"]),
        nesterov: c["nesterov"].as_bool().unwrap(),
    }
}

fn adam_config(c: &Value) -> AdamConfig {
    AdamConfig {
        lr: f32_of(&c["lr"]),
        betas: (f32_of(&c["betas"][0]), f32_of(&c["betas"][1])),
        eps: f32_of(&c["eps"]),
        weight_decay: f32_of(&c["weight_decay"]),
    }
}

// ---------------------------------------------------------------------------------------
// Agreement with PyTorch
// ---------------------------------------------------------------------------------------

#[test]
fn sgd_with_momentum_and_weight_decay_matches_pytorch_step_by_step() {
    replay("sgd_momentum_weight_decay", |p, c| {
        Box::new(Sgd::new(p, sgd_config(c)))
    });
}

#[test]
fn sgd_with_nesterov_momentum_matches_pytorch_step_by_step() {
    replay("sgd_nesterov_dampening_free", |p, c| {
        Box::new(Sgd::new(p, sgd_config(c)))
    });
}

#[test]
fn sgd_with_dampening_matches_pytorch_step_by_step() {
    replay("sgd_dampening", |p, c| Box::new(Sgd::new(p, sgd_config(c))));
}

#[test]
fn adam_with_l2_weight_decay_matches_pytorch_including_a_step_without_gradient() {
    replay("adam", |p, c| Box::new(Adam::new(p, adam_config(c))));
}

#[test]
fn adamw_matches_pytorch_including_a_step_without_gradient() {
    replay("adamw", |p, c| Box::new(AdamW::new(p, adam_config(c))));
}

fn replay_clip(name: &str) {
    let c = case(name);
    let grads: Vec<Tensor> = c["grads"]
        .as_array()
        .unwrap()
        .iter()
        .map(to_tensor)
        .collect();
    let params: Vec<Tensor> = grads
        .iter()
        .map(|g| g.zeros_like().requires_grad_())
        .collect();
    set_grads(&params, &grads.into_iter().map(Some).collect::<Vec<_>>());
    let norm = clip_grad_norm(&params, f32_of(&c["max_norm"]));
    let expected = c["norm"].as_f64().unwrap();
    assert!(
        (f64::from(norm) - expected).abs() <= 1e-5 * expected,
        "norm {norm}, PyTorch {expected}"
    );
    for (i, p) in params.iter().enumerate() {
        assert_matches(
            &p.grad().unwrap(),
            &c["clipped"][i],
            &format!("{name} grad {i}"),
        );
    }
}

#[test]
fn clip_grad_norm_matches_pytorch_when_the_norm_is_too_large() {
    replay_clip("clip_grad_norm_clips");
}

#[test]
fn clip_grad_norm_matches_pytorch_when_the_norm_is_already_small() {
    replay_clip("clip_grad_norm_leaves_small_norms");
}

fn replay_warmup(name: &str) {
    let c = case(name);
    let schedule = LinearWarmup::new(
        f32_of(&c["base_lr"]),
        c["warmup_steps"].as_u64().unwrap() as usize,
    )
    .with_start_factor(f32_of(&c["start_factor"]));
    for (step, lr) in c["lrs"].as_array().unwrap().iter().enumerate() {
        let expected = lr.as_f64().unwrap();
        let got = f64::from(schedule.lr_at(step));
        assert!(
            (got - expected).abs() <= 1e-7,
            "{name} step {step}: {got}, PyTorch {expected}"
        );
    }
}

#[test]
fn linear_warmup_with_a_start_factor_matches_pytorch_linear_lr() {
    replay_warmup("warmup_start_factor");
}

#[test]
fn linear_warmup_from_zero_matches_pytorch_lambda_lr() {
    replay_warmup("warmup_from_zero");
}

// ---------------------------------------------------------------------------------------
// Properties of the updates
// ---------------------------------------------------------------------------------------

#[test]
fn plain_sgd_subtracts_lr_times_the_gradient() {
    let p = Tensor::from_vec(vec![1.0, 2.0], [2]).requires_grad_();
    let mut opt = Sgd::new(
        vec![p.clone()],
        SgdConfig {
            lr: 0.5,
            ..SgdConfig::default()
        },
    );
    set_grad(&p, Tensor::from_vec(vec![4.0, -2.0], [2]));
    opt.step();
    assert_eq!(p.to_vec(), vec![-1.0, 3.0]);
}

#[test]
fn sgd_momentum_buffer_starts_as_the_first_gradient() {
    // Step 1: b = g, p -= lr·g. Step 2 with the same g: b = m·g + g, p -= lr·(1 + m)·g.
    let p = Tensor::from_vec(vec![0.0], [1]).requires_grad_();
    let config = SgdConfig {
        lr: 1.0,
        momentum: 0.5,
        ..SgdConfig::default()
    };
    let mut opt = Sgd::new(vec![p.clone()], config);
    let g = Tensor::from_vec(vec![1.0], [1]);
    set_grad(&p, g.clone());
    opt.step();
    assert_eq!(p.to_vec(), vec![-1.0]);
    set_grad(&p, g);
    opt.step();
    assert_eq!(p.to_vec(), vec![-2.5]);
}

#[test]
fn adam_first_step_moves_each_parameter_by_lr_against_its_gradient_sign() {
    // With m̂ = g and v̂ = g² on the first step, the update is lr · g / (|g| + eps).
    let p = Tensor::from_vec(vec![1.0, 1.0, 1.0], [3]).requires_grad_();
    let mut opt = Adam::new(
        vec![p.clone()],
        AdamConfig {
            lr: 0.1,
            ..AdamConfig::default()
        },
    );
    set_grad(&p, Tensor::from_vec(vec![3.0, -0.01, 200.0], [3]));
    opt.step();
    for (got, want) in p.to_vec().iter().zip([0.9, 1.1, 0.9]) {
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }
}

#[test]
fn adamw_with_a_zero_gradient_only_shrinks_the_parameter() {
    let p = Tensor::from_vec(vec![2.0, -4.0], [2]).requires_grad_();
    let config = AdamConfig {
        lr: 0.1,
        weight_decay: 0.5,
        ..AdamConfig::default()
    };
    let mut opt = AdamW::new(vec![p.clone()], config);
    set_grad(&p, Tensor::zeros([2]));
    opt.step();
    // p · (1 − lr · wd) = p · 0.95
    assert_eq!(p.to_vec(), vec![1.9, -3.8]);
}

/// One step with a zero gradient from p = 4 (lr 0.1, weight decay 0.5).
fn step_with_only_decay(
    make: fn(Vec<Tensor>, AdamConfig) -> Box<dyn Optimizer>,
) -> f32 {
    let p = Tensor::from_vec(vec![4.0], [1]).requires_grad_();
    let config = AdamConfig {
        lr: 0.1,
        weight_decay: 0.5,
        ..AdamConfig::default()
    };
    let mut opt = make(vec![p.clone()], config);
    set_grad(&p, Tensor::zeros([1]));
    opt.step();
    p.item()
}

#[test]
fn adam_normalises_the_l2_decay_but_adamw_shrinks_in_proportion() {
    // Adam: the decay enters the gradient (g = wd · p = 2) and the first step is normalised
    // to lr · g / |g| = 0.1, whatever p is. AdamW: p · (1 − lr · wd) = 4 · 0.95.
    let adam = step_with_only_decay(|p, c| Box::new(Adam::new(p, c)));
    let adamw = step_with_only_decay(|p, c| Box::new(AdamW::new(p, c)));
    assert!((adam - 3.9).abs() < 1e-5, "Adam gave {adam}");
    assert!((adamw - 3.8).abs() < 1e-5, "AdamW gave {adamw}");
}

#[test]
fn every_optimizer_leaves_parameters_without_a_gradient_untouched() {
    type Make = fn(Vec<Tensor>) -> Box<dyn Optimizer>;
    let optimizers: Vec<Make> = vec![
        |p| {
            Box::new(Sgd::new(
                p,
                SgdConfig {
                    lr: 0.1,
                    momentum: 0.9,
                    weight_decay: 0.1,
                    ..SgdConfig::default()
                },
            ))
        },
        |p| {
            Box::new(Adam::new(
                p,
                AdamConfig {
                    weight_decay: 0.1,
                    ..AdamConfig::default()
                },
            ))
        },
        |p| Box::new(AdamW::new(p, AdamConfig::default_adamw())),
    ];
    for make in optimizers {
        let used = Tensor::ones([2]).requires_grad_();
        let unused = Tensor::ones([2]).requires_grad_();
        let mut opt = make(vec![used.clone(), unused.clone()]);
        set_grads(
            &[used.clone(), unused.clone()],
            &[Some(Tensor::ones([2])), None],
        );
        opt.step();
        assert_ne!(used.to_vec(), vec![1.0, 1.0]);
        assert_eq!(unused.to_vec(), vec![1.0, 1.0]);
    }
}

#[test]
fn optimizer_zero_grad_clears_every_gradient() {
    let a = Tensor::ones([2]).requires_grad_();
    let b = Tensor::ones([3]).requires_grad_();
    let opt = Sgd::new(vec![a.clone(), b.clone()], SgdConfig::default());
    (a.sum() + b.sum()).backward();
    assert!(a.grad().is_ok() && b.grad().is_ok());
    opt.zero_grad();
    assert!(a.grad().is_err() && b.grad().is_err());
}

#[test]
fn set_lr_changes_the_size_of_the_next_step() {
    let p = Tensor::zeros([1]).requires_grad_();
    let mut opt = Sgd::new(
        vec![p.clone()],
        SgdConfig {
            lr: 1.0,
            ..SgdConfig::default()
        },
    );
    opt.set_lr(0.25);
    assert_eq!(opt.lr(), 0.25);
    set_grad(&p, Tensor::ones([1]));
    opt.step();
    assert_eq!(p.to_vec(), vec![-0.25]);
}

#[test]
fn step_updates_the_layer_through_its_parameter_handles() {
    let layer = Linear::from_weights(&Tensor::ones([1, 2]), None);
    let mut opt = Sgd::new(
        layer.parameters(),
        SgdConfig {
            lr: 0.5,
            ..SgdConfig::default()
        },
    );
    layer
        .forward(&Tensor::from_vec(vec![1.0, 2.0], [1, 2]))
        .sum()
        .backward();
    opt.step();
    assert_eq!(layer.weight().to_vec(), vec![0.5, 0.0]);
}

#[test]
fn adam_fits_a_small_linear_regression() {
    manual_seed(30);
    let x = Tensor::randn([64, 3]);
    let true_w = Tensor::from_vec(vec![1.5, -2.0, 0.5], [1, 3]);
    let y = x.matmul(&true_w.transpose(0, 1)) + 0.3;
    let layer = Linear::new(LinearConfig {
        in_features: 3,
        out_features: 1,
        ..Default::default()
    });
    let mut opt = Adam::new(
        layer.parameters(),
        AdamConfig {
            lr: 0.05,
            ..AdamConfig::default()
        },
    );
    let loss = |layer: &Linear| (layer.forward(&x) - &y).square().mean();
    let start = loss(&layer).item();
    for _ in 0..300 {
        opt.zero_grad();
        loss(&layer).backward();
        opt.step();
    }
    let end = loss(&layer).item();
    assert!(end < 1e-3 * start, "loss went from {start} to {end}");
    let w = layer.weight().to_vec();
    for (got, want) in w.iter().zip([1.5, -2.0, 0.5]) {
        assert!((got - want).abs() < 0.02, "weight {got}, true {want}");
    }
}

#[test]
fn clip_grad_norm_scales_a_gradient_shared_by_two_parameters_once() {
    // Both inputs of an add receive the very same upstream gradient tensor.
    let a = Tensor::zeros([2]).requires_grad_();
    let b = Tensor::zeros([2]).requires_grad_();
    ((&a + &b) * &Tensor::from_vec(vec![3.0, 4.0], [2]))
        .sum()
        .backward();
    let norm = clip_grad_norm(&[a.clone(), b.clone()], 1.0);
    assert!((norm - 50f32.sqrt()).abs() < 1e-5);
    let scale = 1.0 / (50f32.sqrt() + 1e-6);
    for p in [&a, &b] {
        let g = p.grad().unwrap().to_vec();
        assert!(
            (g[0] - 3.0 * scale).abs() < 1e-6 && (g[1] - 4.0 * scale).abs() < 1e-6,
            "{g:?}"
        );
    }
}

#[test]
fn clip_grad_norm_skips_parameters_without_gradients() {
    let with = Tensor::zeros([1]).requires_grad_();
    let without = Tensor::zeros([1]).requires_grad_();
    (&with * 10.0).sum().backward();
    let norm = clip_grad_norm(&[with.clone(), without.clone()], 5.0);
    assert_eq!(norm, 10.0);
    assert!(without.grad().is_err());
    assert!((with.grad().unwrap().item() - 5.0).abs() < 1e-5);
    assert_eq!(clip_grad_norm(&[without], 1.0), 0.0);
}

#[test]
fn clip_grad_norm_without_any_gradient_is_positive_zero() {
    // `-0.0 == 0.0`, so the bits are compared: a norm of "-0" printed in a log or divided
    // into (1 / -0.0 is -inf) would mislead.
    let without = Tensor::zeros([3]).requires_grad_();
    for params in [vec![], vec![without.clone()]] {
        let norm = clip_grad_norm(&params, 1.0);
        assert_eq!(norm.to_bits(), 0.0f32.to_bits(), "{norm}");
    }
    assert!(without.grad().is_err());
}

#[test]
fn linear_warmup_without_warmup_steps_is_constant() {
    let schedule = LinearWarmup::new(0.3, 0);
    assert!((0..5).all(|t| schedule.lr_at(t) == 0.3));
}

#[test]
fn linear_warmup_rises_by_equal_steps_then_holds() {
    let schedule = LinearWarmup::new(1.0, 4).with_start_factor(0.2);
    let lrs: Vec<f32> = (0..7).map(|t| schedule.lr_at(t)).collect();
    let expected = [0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0];
    for (got, want) in lrs.iter().zip(expected) {
        assert!((got - want).abs() < 1e-6, "{lrs:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Messages for bad hyper-parameters and parameter lists
// ---------------------------------------------------------------------------------------

/// A list of one trainable parameter, for tests about something else.
fn one_parameter() -> Vec<Tensor> {
    vec![Tensor::zeros([1]).requires_grad_()]
}

/// The message of the panic `f` raises.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Builds each optimizer on `params`, by name.
fn build_each(params: Vec<Tensor>) -> Vec<(&'static str, String)> {
    type Build = fn(Vec<Tensor>);
    let makers: [(&str, Build); 3] = [
        ("Sgd::new", |p| drop(Sgd::new(p, SgdConfig::default()))),
        ("Adam::new", |p| drop(Adam::new(p, AdamConfig::default()))),
        ("AdamW::new", |p| {
            drop(AdamW::new(p, AdamConfig::default_adamw()))
        }),
    ];
    makers
        .into_iter()
        .map(|(name, make)| {
            let params = params.clone();
            (name, panic_message(move || make(params)))
        })
        .collect()
}

#[test]
fn every_optimizer_refuses_a_parameter_that_does_not_require_a_gradient() {
    // The second tensor was never marked: backward would never give it a gradient and the
    // optimizer would never move it, without a word.
    let trained = Tensor::ones([2]).requires_grad_();
    let frozen = Tensor::ones([3]);
    for (name, message) in build_each(vec![trained, frozen]) {
        assert_eq!(
            message,
            format!(
                "{name}: parameter 1 (shape [3]) does not require a gradient, so backward never gives it one and no step would move it; hint: create it with requires_grad_() or nn::parameter, or leave it out of the list"
            )
        );
    }
}

#[test]
fn every_optimizer_refuses_an_empty_parameter_list() {
    for (name, message) in build_each(vec![]) {
        assert_eq!(
            message,
            format!(
                "{name}: the parameter list is empty, so there is nothing to optimize; hint: pass the tensors to train, e.g. the model's parameters()"
            )
        );
    }
}

#[test]
#[should_panic(expected = "Sgd::new: lr must be finite and ≥ 0, found -0.1")]
fn sgd_rejects_a_negative_learning_rate() {
    Sgd::new(
        one_parameter(),
        SgdConfig {
            lr: -0.1,
            ..SgdConfig::default()
        },
    );
}

#[test]
#[should_panic(
    expected = "Sgd::new: nesterov momentum needs momentum > 0 and dampening = 0, found momentum 0 and dampening 0"
)]
fn sgd_rejects_nesterov_without_momentum() {
    Sgd::new(
        one_parameter(),
        SgdConfig {
            nesterov: true,
            ..SgdConfig::default()
        },
    );
}

#[test]
#[should_panic(
    expected = "Sgd::new: parameter 1 (shape [2]) is the result of an op, not a leaf; only leaves can be optimized"
)]
fn sgd_rejects_a_parameter_that_is_not_a_leaf() {
    let w = Tensor::ones([2]).requires_grad_();
    Sgd::new(vec![w.clone(), &w * 2.0], SgdConfig::default());
}

#[test]
#[should_panic(expected = "Adam::new: both betas must be in [0, 1), found (0.9, 1)")]
fn adam_rejects_a_beta_of_one() {
    Adam::new(
        one_parameter(),
        AdamConfig {
            betas: (0.9, 1.0),
            ..AdamConfig::default()
        },
    );
}

#[test]
#[should_panic(expected = "AdamW::set_lr: lr must be finite and ≥ 0, found NaN")]
fn adamw_set_lr_rejects_nan() {
    AdamW::new(one_parameter(), AdamConfig::default_adamw()).set_lr(f32::NAN);
}

#[test]
#[should_panic(
    expected = "clip_grad_norm: max_norm must be finite and ≥ 0, found -1"
)]
fn clip_grad_norm_rejects_a_negative_max_norm() {
    clip_grad_norm(&[], -1.0);
}

#[test]
#[should_panic(
    expected = "LinearWarmup::with_start_factor: start_factor must be in [0, 1], found 1.5"
)]
fn linear_warmup_rejects_a_start_factor_above_one() {
    let _ = LinearWarmup::new(0.1, 10).with_start_factor(1.5);
}
