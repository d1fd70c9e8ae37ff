//! How many gradient entries vanish in half precision, layer by layer: the same
//! weights and the same batch, the gradients computed once in f32 and once inside
//! `autocast`, with and without a loss scale.

use attention::prelude::*;
use chapter09::{Batch, Trainer, masked_cross_entropy};
use engine::autocast;
use engine::precision::Precision;

use crate::training::STATIC_SCALE;

/// The gradients of every parameter, by name, for the batch of the trainer's next
/// step, with products autocast to `precision` and the loss multiplied by `scale`
/// (left scaled). The trainer is not stepped and its gradients are cleared after.
pub fn gradients(
    trainer: &mut Trainer,
    precision: Precision,
    scale: f32,
) -> Vec<(String, Vec<f32>)> {
    let numbers = trainer.batch_numbers(trainer.step);
    let batch = Batch::new(&numbers, &trainer.src_vocab, &trainer.tgt_vocab);
    let model = &trainer.model;
    let loss = autocast(precision, || {
        let logits = model.forward(&batch.src, &batch.src_lens, &batch.dec_input);
        masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens)
    });
    trainer.optimizer.zero_grad();
    (&loss * scale).backward();
    let grads = model
        .list_parameters()
        .into_iter()
        .map(|(name, p)| (name, p.grad().map(|g| g.to_vec()).unwrap_or_default()))
        .collect();
    trainer.optimizer.zero_grad();
    grads
}

/// One layer's count at one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerCount {
    /// The layer: its parameters' names without the last part
    /// (`decoder.attention.W_q`).
    pub layer: String,
    /// The layer's gradient entries.
    pub entries: usize,
    /// Entries whose f32 gradient is not zero.
    pub nonzero: usize,
    /// Of those, the ones that are exactly zero in f16 with no scale, with
    /// [`STATIC_SCALE`], and in bf16 with no scale.
    pub vanished: [usize; 3],
}

/// The columns of [`LayerCount::vanished`].
pub const COLUMNS: [(Precision, f32); 3] = [
    (Precision::F16, 1.0),
    (Precision::F16, STATIC_SCALE),
    (Precision::Bf16, 1.0),
];

/// Counts, per layer, the gradient entries that are not zero in f32 but exactly
/// zero in half precision (each of [`COLUMNS`]), for the weights and the batch of
/// the trainer's next step: [`count_at`] with the loss as it is.
pub fn count(trainer: &mut Trainer) -> Vec<LayerCount> {
    count_at(trainer, 1.0)
}

// ANCHOR: count
/// [`count`] with the loss multiplied by `factor` before each column's scale
/// (section 6's small-gradient run: `factor` is [`crate::training::SMALL_LOSS`]).
pub fn count_at(trainer: &mut Trainer, factor: f32) -> Vec<LayerCount> {
    let reference = gradients(trainer, Precision::F32, factor);
    let halves = COLUMNS.map(|(p, scale)| gradients(trainer, p, factor * scale));
    let mut out: Vec<LayerCount> = Vec::new();
    for (i, (name, g32)) in reference.iter().enumerate() {
        let layer = name.rsplit_once('.').map_or(name.as_str(), |(l, _)| l);
        if out.last().is_none_or(|c| c.layer != layer) {
            out.push(LayerCount {
                layer: layer.to_string(),
                entries: 0,
                nonzero: 0,
                vanished: [0; 3],
            });
        }
        let c = out.last_mut().expect("pushed above");
        c.entries += g32.len();
        for (j, &g) in g32.iter().enumerate() {
            if g != 0.0 {
                c.nonzero += 1;
                for (k, half) in halves.iter().enumerate() {
                    c.vanished[k] += usize::from(half[i].1[j] == 0.0);
                }
            }
        }
    }
    out
}
// ANCHOR_END: count

/// The share of the nonzero f32 entries of `counts` that vanished in column `k`.
pub fn share(counts: &[LayerCount], k: usize) -> f64 {
    let nonzero: usize = counts.iter().map(|c| c.nonzero).sum();
    let vanished: usize = counts.iter().map(|c| c.vanished[k]).sum();
    vanished as f64 / nonzero.max(1) as f64
}
