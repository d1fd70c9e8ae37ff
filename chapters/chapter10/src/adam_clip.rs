//! Clipping and Adam's step: when scaling the gradients changes nothing, and when it
//! does.
//!
//! Adam moves a weight by `lr · m̂ / (√v̂ + ε)`, where `m̂` and `v̂` are running
//! means of the gradient and of its square. Multiply *every* gradient by the same
//! factor `c` and `m̂` scales by `c`, `√v̂` by `c`: the step is the same, up to `ε`.
//! Clipping multiplies the gradient by `min(1, max_norm / norm)`, a factor that is
//! the same at every step only when the norms are; when it changes from step to step,
//! it does change the steps. And Adam's first step is `lr · g / (|g| + ε)`, `±lr`
//! whatever the gradient's size, so no factor, clipping's included, changes it.
//!
//! [`steps`] runs Adam on one parameter under the three treatments; [`sweep_run`]
//! reads what clipping did in the sweep's `Adam 1, ReLU, clip to 1` row.

use std::fmt::Write;

use engine::Tensor;
use engine::optim::{Adam, AdamConfig, Optimizer, clip_grad_norm};

use crate::sweep::gradient_rows;
use crate::uniform::train;

/// The gradients of the one-parameter demonstration, one per step: their sizes differ
/// from step to step, as a model's do.
pub const GRADIENTS: [f32; 5] = [8.0, 2.0, 0.5, 4.0, 1.0];

/// The learning rate of the demonstration.
pub const LR: f32 = 0.1;

/// The constant factor of the demonstration's second run.
pub const FACTOR: f32 = 0.1;

/// What is done to each gradient before Adam's step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Treatment {
    /// The gradient as it is.
    Unscaled,
    /// Every gradient multiplied by the same factor.
    Constant(f32),
    /// The engine's `clip_grad_norm` to this norm: a factor that depends on the
    /// step's norm, `min(1, max_norm / (norm + 1e-6))`.
    ClipTo(f32),
}

// ANCHOR: adam_steps
/// Adam's steps (new value minus old) on one parameter starting at 0, whose gradient
/// at step `t` is `gradients[t]` treated by `treatment`; with the factor each step
/// applied.
pub fn steps(gradients: &[f32], treatment: Treatment) -> Vec<(f32, f32)> {
    let w = Tensor::zeros([1]).requires_grad_();
    let config = AdamConfig {
        lr: LR,
        ..Default::default()
    };
    let mut adam = Adam::new(vec![w.clone()], config);
    let mut out = Vec::new();
    for &g in gradients {
        // The loss g · w has the gradient g.
        (&w * g).sum().backward();
        match treatment {
            Treatment::Unscaled => {}
            Treatment::Constant(c) => w.set_grad(Some(w.grad().unwrap() * c)),
            Treatment::ClipTo(max_norm) => {
                clip_grad_norm(std::slice::from_ref(&w), max_norm);
            }
        }
        let applied = w.grad().unwrap().item() / g;
        let before = w.item();
        adam.step();
        adam.zero_grad();
        out.push((w.item() - before, applied));
    }
    out
}
// ANCHOR_END: adam_steps

/// One step of the sweep's run: its loss, and the gradient norm (over `W_q`, `W_k`
/// and `v` together, before clipping) when the loss was finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepStep {
    /// The loss at this step.
    pub loss: f32,
    /// The total gradient norm before clipping; `None` once the loss is not finite.
    pub norm: Option<f32>,
}

/// The sweep's `Adam 1, ReLU, clip to 1` row trained from `seed`, step by step until
/// it diverged.
pub fn sweep_run(seed: u64) -> Vec<SweepStep> {
    let row = gradient_rows()
        .into_iter()
        .find(|r| r.name == "Adam 1, ReLU, clip to 1")
        .expect("the sweep has an Adam row with clipping");
    let history = train(&row.setup, seed);
    history
        .losses
        .iter()
        .enumerate()
        .map(|(step, &loss)| SweepStep {
            loss,
            norm: history
                .grad_norms
                .get(step)
                .map(|groups| groups.iter().map(|n| n * n).sum::<f32>().sqrt()),
        })
        .collect()
}

/// What the tour prints for this demonstration.
pub fn section() -> String {
    let mut out = String::from("== 3. clipping and Adam's step\n");
    writeln!(
        out,
        "Adam (lr {LR}) on one parameter, gradients {}: each step's change",
        GRADIENTS.map(|g| g.to_string()).join(", ")
    )
    .unwrap();
    let runs = [
        ("unscaled", Treatment::Unscaled),
        ("every gradient x 0.1", Treatment::Constant(FACTOR)),
        ("clipped to norm 1", Treatment::ClipTo(1.0)),
    ];
    let results: Vec<Vec<(f32, f32)>> =
        runs.iter().map(|(_, t)| steps(&GRADIENTS, *t)).collect();
    write!(out, "{:<22}", "step").unwrap();
    for t in 1..=GRADIENTS.len() {
        write!(out, "{t:>9}").unwrap();
    }
    writeln!(out).unwrap();
    for ((name, _), result) in runs.iter().zip(&results) {
        write!(out, "{name:<22}").unwrap();
        for (step, _) in result {
            write!(out, "{step:>9.4}").unwrap();
        }
        writeln!(out).unwrap();
    }
    write!(out, "{:<22}", "  clipping's factor").unwrap();
    for (_, factor) in &results[2] {
        write!(out, "{factor:>9.4}").unwrap();
    }
    writeln!(out).unwrap();
    let largest = results[0]
        .iter()
        .zip(&results[1])
        .map(|((a, _), (b, _))| (a - b).abs())
        .fold(0.0f32, f32::max);
    writeln!(
        out,
        "largest difference, unscaled against x 0.1: {largest:.1e}"
    )
    .unwrap();
    writeln!(out, "the sweep's \"Adam 1, ReLU, clip to 1\", seed 1:").unwrap();
    for (step, s) in sweep_run(1).iter().enumerate() {
        match s.norm {
            Some(norm) if norm > 1.0 => writeln!(
                out,
                "  step {step}: loss {:.4}, gradient norm {norm:.3}, \
                 clipped by {:.3}",
                s.loss,
                1.0 / (norm + 1e-6)
            ),
            Some(norm) => writeln!(
                out,
                "  step {step}: loss {:.4}, gradient norm {norm:.3}, not clipped",
                s.loss
            ),
            None => writeln!(out, "  step {step}: loss {}, training stops", s.loss),
        }
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_factor_leaves_adams_steps_as_they_were() {
        let plain = steps(&GRADIENTS, Treatment::Unscaled);
        for c in [1e-3, 0.1, 7.0] {
            let scaled = steps(&GRADIENTS, Treatment::Constant(c));
            for ((a, _), (b, factor)) in plain.iter().zip(&scaled) {
                assert!((a - b).abs() < 1e-6, "factor {c}: {a} against {b}");
                assert!((factor - c).abs() < 1e-6 * c);
            }
        }
    }

    #[test]
    fn a_factor_that_varies_changes_the_steps_but_never_the_first() {
        let plain = steps(&GRADIENTS, Treatment::Unscaled);
        let clipped = steps(&GRADIENTS, Treatment::ClipTo(1.0));
        // The first step is lr in size whatever the gradient's.
        assert!((plain[0].0 + LR).abs() < 1e-6 && (clipped[0].0 + LR).abs() < 1e-6);
        // Clipping's factor follows the norm: 1/8, 1/2, then 1 for 0.5.
        assert!(
            (clipped[0].1 - 0.125).abs() < 1e-6 && (clipped[2].1 - 1.0).abs() < 1e-6
        );
        assert!(
            plain
                .iter()
                .zip(&clipped)
                .skip(1)
                .all(|((a, _), (b, _))| (a - b).abs() > 1e-3),
            "{plain:?} against {clipped:?}"
        );
    }
}
