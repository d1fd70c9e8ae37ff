//! `GradScaler`, PyTorch's dynamic loss scaling rule: the loss scaled, the gradients
//! unscaled exactly, a planted overflow that skips the step and halves the scale, growth
//! after `growth_interval` clean steps, clipping between `unscale_` and `step`, a disabled
//! scaler that does nothing, and the mistakes it refuses.

use crate::common::panic_message;

use engine::Tensor;
use engine::optim::{
    GradScaler, GradScalerConfig, Optimizer, Sgd, SgdConfig, clip_grad_norm,
};

fn setup(
    init_scale: f32,
    growth_interval: usize,
) -> (Tensor, Tensor, Sgd, GradScaler) {
    let w = Tensor::from_vec(vec![1.0, -2.0], [2]).requires_grad_();
    let b = Tensor::from_vec(vec![0.5], [1]).requires_grad_();
    let opt = Sgd::new(
        vec![w.clone(), b.clone()],
        SgdConfig {
            lr: 0.1,
            ..Default::default()
        },
    );
    let scaler = GradScaler::new(GradScalerConfig {
        init_scale,
        growth_interval,
        ..Default::default()
    });
    (w, b, opt, scaler)
}

#[test]
fn the_loss_is_scaled_and_the_gradients_unscaled_exactly() {
    let (w, b, mut opt, mut scaler) = setup(1024.0, 10);
    let loss = (w.square().sum() + &b * 3.0).sum(); // d/dw = 2w = [2, -4], d/db = 3
    let scaled = scaler.scale(&loss);
    assert_eq!(scaled.item(), loss.item() * 1024.0);
    scaled.backward();
    assert_eq!(w.grad().unwrap().to_vec(), vec![2048.0, -4096.0]);
    scaler.unscale_(&opt);
    assert_eq!(w.grad().unwrap().to_vec(), vec![2.0, -4.0]);
    assert_eq!(b.grad().unwrap().to_vec(), vec![3.0]);
    assert!(scaler.step(&mut opt));
    scaler.update();
    assert_eq!(w.to_vec(), vec![1.0 - 0.2, -2.0 + 0.4]);
    assert_eq!(scaler.get_scale(), 1024.0);
    assert_eq!(scaler.steps_skipped(), 0);
}

#[test]
fn a_planted_overflow_skips_the_step_and_halves_the_scale() {
    let (w, b, mut opt, mut scaler) = setup(65536.0, 3);
    // A gradient that overflows f32 once scaled: 1e34 × 65536 = inf.
    let loss = (&w * 1e34).sum() + b.sum();
    scaler.scale(&loss).backward();
    assert!(w.grad().unwrap().to_vec().iter().all(|g| g.is_infinite()));
    let before = (w.to_vec(), b.to_vec());
    assert!(!scaler.step(&mut opt), "the step must be skipped");
    scaler.update();
    assert_eq!((w.to_vec(), b.to_vec()), before, "no parameter moved");
    assert_eq!(scaler.get_scale(), 32768.0);
    assert_eq!(scaler.steps_skipped(), 1);
    // A NaN counts too.
    opt.zero_grad();
    let nan = (&w * f32::NAN).sum();
    scaler.scale(&nan).backward();
    assert!(!scaler.step(&mut opt));
    scaler.update();
    assert_eq!(scaler.get_scale(), 16384.0);
}

#[test]
fn the_scale_grows_after_growth_interval_clean_steps_and_an_overflow_resets_the_count()
 {
    let (w, _b, mut opt, mut scaler) = setup(8.0, 3);
    let mut run = |scaler: &mut GradScaler, overflow: bool| {
        opt.zero_grad();
        let factor = if overflow { f32::INFINITY } else { 1e-3 };
        scaler.scale(&(&w * factor).sum()).backward();
        scaler.step(&mut opt);
        scaler.update();
        scaler.get_scale()
    };
    let scales: Vec<f32> =
        [false, false, false, false, false, true, false, false, false]
            .into_iter()
            .map(|overflow| run(&mut scaler, overflow))
            .collect();
    // 3 clean steps: × 2; 2 more, then an overflow: × ½ and the count restarts; 3 clean: × 2.
    assert_eq!(
        scales,
        vec![8.0, 8.0, 16.0, 16.0, 16.0, 8.0, 8.0, 8.0, 16.0]
    );
}

#[test]
fn gradients_can_be_clipped_between_unscale_and_step() {
    let (w, b, mut opt, mut scaler) = setup(256.0, 10);
    scaler
        .scale(&((&w * 30.0).sum() + (&b * 40.0).sum()))
        .backward();
    scaler.unscale_(&opt);
    let norm = clip_grad_norm(opt.parameters(), 1.0);
    // The unscaled gradients: [30, 30] and [40], of norm √3400.
    let expected = 3400f32.sqrt();
    assert!(
        (norm - expected).abs() < 1e-3,
        "the norm of the unscaled gradients: {norm}"
    );
    assert!(scaler.step(&mut opt)); // does not unscale again
    scaler.update();
    assert!((w.to_vec()[0] - (1.0 - 0.1 * 30.0 / expected)).abs() < 1e-6);
}

#[test]
fn a_disabled_scaler_changes_nothing() {
    let w = Tensor::from_vec(vec![1.0], [1]).requires_grad_();
    let mut opt = Sgd::new(
        vec![w.clone()],
        SgdConfig {
            lr: 0.5,
            ..Default::default()
        },
    );
    let mut scaler = GradScaler::new(GradScalerConfig {
        enabled: false,
        ..Default::default()
    });
    let loss = w.square().sum();
    assert_eq!(scaler.scale(&loss).item(), loss.item());
    scaler.scale(&loss).backward();
    assert!(scaler.step(&mut opt));
    scaler.update();
    assert_eq!(w.to_vec(), vec![0.0]);
}

#[test]
fn mistakes_are_refused() {
    let (w, _b, mut opt, mut scaler) = setup(4.0, 10);
    scaler.scale(&w.sum()).backward();
    scaler.unscale_(&opt);
    let message = panic_message(|| scaler.clone().unscale_(&opt));
    assert!(message.contains("unscale_ was already called"), "{message}");
    let message =
        panic_message(|| GradScaler::new(GradScalerConfig::default()).update());
    assert!(message.contains("without a step()"), "{message}");
    let message = panic_message(|| {
        GradScaler::new(GradScalerConfig {
            backoff_factor: 2.0,
            ..Default::default()
        });
    });
    assert!(
        message.contains("backoff_factor") && message.contains("(0, 1)"),
        "{message}"
    );
    scaler.step(&mut opt);
    scaler.update();
}

#[test]
fn the_settings_read_back_as_they_were_given() {
    let config = GradScalerConfig {
        init_scale: 1024.0,
        growth_factor: 3.0,
        backoff_factor: 0.25,
        growth_interval: 7,
        enabled: false,
    };
    assert_eq!(GradScaler::new(config).config(), config);
}
