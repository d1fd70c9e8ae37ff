//! Chapter 9's training step in mixed precision: the forward pass inside
//! [`autocast()`], the loss scaled before `backward`, the gradients unscaled before
//! clipping, and a step that a dynamic scaler may skip.

use attention::prelude::*;
use chapter09::{Batch, ResumableAdam, TrainConfig, Trainer, masked_cross_entropy};
use engine::autocast;
use engine::optim::{AdamConfig, GradScaler, GradScalerConfig, clip_grad_norm};
use engine::precision::Precision;

// ANCHOR: modes
/// How a run treats precision and loss scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Everything in f32: chapter 9's run.
    F32,
    /// Autocast to f16, no loss scaling.
    F16,
    /// Autocast to f16, the loss multiplied by [`STATIC_SCALE`].
    F16Static,
    /// Autocast to f16 with a [`GradScaler`] ([`scaler_config`]).
    F16Dynamic,
    /// Autocast to bf16, no loss scaling.
    Bf16,
}

/// The factor section 6's small-gradient run multiplies the loss by: 2⁻¹⁴.
pub const SMALL_LOSS: f32 = 1.0 / 16384.0;

/// The factor of the static loss scale.
pub const STATIC_SCALE: f32 = 1024.0;

/// Steps without an overflow before the dynamic scale doubles. PyTorch's default is
/// 2000, longer than this chapter's runs; 100 lets a short run show the rule.
pub const GROWTH_INTERVAL: usize = 100;

/// The dynamic scaler's settings: PyTorch's defaults (`init_scale` 65536, ×2, ×½)
/// with `growth_interval` [`GROWTH_INTERVAL`].
pub fn scaler_config() -> GradScalerConfig {
    GradScalerConfig {
        growth_interval: GROWTH_INTERVAL,
        ..GradScalerConfig::default()
    }
}
// ANCHOR_END: modes

impl Mode {
    /// Every mode, in the order of the tables.
    pub const ALL: [Mode; 5] = [
        Mode::F32,
        Mode::F16,
        Mode::F16Static,
        Mode::F16Dynamic,
        Mode::Bf16,
    ];

    /// The name used in the tables and the data file.
    pub fn name(self) -> &'static str {
        match self {
            Mode::F32 => "f32",
            Mode::F16 => "f16",
            Mode::F16Static => "f16 static x1024",
            Mode::F16Dynamic => "f16 GradScaler",
            Mode::Bf16 => "bf16",
        }
    }

    /// The mode of a name written by [`Mode::name`].
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The precision products are autocast to.
    pub fn precision(self) -> Precision {
        match self {
            Mode::F32 => Precision::F32,
            Mode::Bf16 => Precision::Bf16,
            _ => Precision::F16,
        }
    }
}

/// What one mixed-precision step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// The step's loss (unscaled).
    pub loss: f32,
    /// The loss scale the step used (1 without scaling).
    pub scale: f32,
    /// Whether the optimizer stepped (`false`: the scaler skipped the step).
    pub stepped: bool,
}

/// Chapter 9's [`Trainer`] with a precision mode and a scaler (disabled unless the
/// mode is [`Mode::F16Dynamic`]).
#[derive(Debug)]
pub struct MixedTrainer {
    /// Chapter 9's run: model, optimizer, data, history.
    pub trainer: Trainer,
    /// How the run treats precision.
    pub mode: Mode,
    /// The dynamic scaler (disabled in every other mode).
    pub scaler: GradScaler,
    /// What the loss is multiplied by before `backward` (and any loss scale): 1 in
    /// chapter 9's run, [`SMALL_LOSS`] in section 6's run with small gradients.
    pub loss_factor: f32,
}

impl MixedTrainer {
    /// A fresh run of chapter 9's additive model in `mode`.
    pub fn new(config: TrainConfig, mode: Mode) -> MixedTrainer {
        MixedTrainer::with_scaler(config, mode, scaler_config())
    }

    /// A fresh run with the given scaler settings (used only by
    /// [`Mode::F16Dynamic`]).
    pub fn with_scaler(
        config: TrainConfig,
        mode: Mode,
        scaler: GradScalerConfig,
    ) -> MixedTrainer {
        let enabled = mode == Mode::F16Dynamic;
        MixedTrainer {
            trainer: Trainer::additive(config),
            mode,
            scaler: GradScaler::new(GradScalerConfig { enabled, ..scaler }),
            loss_factor: 1.0,
        }
    }

    // ANCHOR: small
    /// A run whose gradients are all `factor` times smaller than chapter 9's: the
    /// loss is multiplied by `factor`, and so are Adam's `ε` and the clipping norm,
    /// the two absolute sizes the f32 step compares gradients with. In f32 the
    /// steps are then chapter 9's, up to clipping's `1e-6` (`norm + 1e-6`), which
    /// does not scale; what changes is only where half precision can hold the
    /// gradients.
    pub fn with_loss_factor(
        config: TrainConfig,
        mode: Mode,
        factor: f32,
    ) -> MixedTrainer {
        let config = TrainConfig {
            clip: config.clip * factor,
            ..config
        };
        let mut mixed = MixedTrainer::new(config, mode);
        let params = mixed.trainer.optimizer.parameters().to_vec();
        let adam = AdamConfig {
            eps: AdamConfig::default().eps * factor,
            ..AdamConfig::default()
        };
        mixed.trainer.optimizer = ResumableAdam::new(params, adam);
        mixed.loss_factor = factor;
        mixed
    }
    // ANCHOR_END: small

    /// The loss scale of the next step.
    pub fn scale(&self) -> f32 {
        match self.mode {
            Mode::F16Static => STATIC_SCALE,
            Mode::F16Dynamic => self.scaler.get_scale(),
            _ => 1.0,
        }
    }

    /// One training step of chapter 9 in this run's mode.
    pub fn step(&mut self) -> Outcome {
        let scale = self.scale();
        // ANCHOR: step
        let t = &mut self.trainer;
        let numbers = t.batch_numbers(t.step);
        let batch = Batch::new(&numbers, &t.src_vocab, &t.tgt_vocab);
        // Products (and so logits and scores) in half precision; the softmax, the
        // loss and every other op in f32.
        let loss = autocast(self.mode.precision(), || {
            let logits =
                t.model
                    .forward(&batch.src, &batch.src_lens, &batch.dec_input);
            masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens)
        });
        // 1 in chapter 9's run; section 6's small-gradient run shrinks it.
        let objective = if self.loss_factor == 1.0 {
            loss.clone()
        } else {
            &loss * self.loss_factor
        };
        t.optimizer.zero_grad();
        if self.mode == Mode::F16Static {
            (&objective * STATIC_SCALE).backward();
            unscale(t.optimizer.parameters(), STATIC_SCALE);
        } else {
            // Disabled unless F16Dynamic: `scale` returns the loss, `step` steps.
            self.scaler.scale(&objective).backward();
            self.scaler.unscale_(&t.optimizer);
        }
        clip_grad_norm(t.optimizer.parameters(), t.config.clip);
        t.optimizer.set_lr(t.config.lr_at(t.step));
        let stepped = self.scaler.step(&mut t.optimizer); // false: skipped
        self.scaler.update();
        // ANCHOR_END: step
        let loss = loss.item();
        t.history.losses.push(loss);
        t.step += 1;
        Outcome {
            loss,
            scale,
            stepped,
        }
    }
}

/// Divides every gradient of `params` by `scale` (multiplies by `1/scale`).
pub fn unscale(params: &[Tensor], scale: f32) {
    let inverse = 1.0 / scale;
    no_grad(|| {
        for p in params {
            if let Ok(g) = p.grad() {
                p.set_grad(Some(&g * inverse));
            }
        }
    });
}
