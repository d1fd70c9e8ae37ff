//! The bytes of one training step of chapter 9's model, by kind of tensor, in f32
//! and if held in a 2-byte format.

use attention::prelude::*;
use chapter09::{Batch, TrainConfig, Trainer, masked_cross_entropy};

/// One kind of tensor and how many values it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category {
    /// What the tensors are.
    pub name: &'static str,
    /// How many `f32` values they hold.
    pub values: usize,
}

impl Category {
    /// Bytes in f32 (4 per value).
    pub fn f32_bytes(&self) -> usize {
        4 * self.values
    }

    /// Bytes in f16 or bf16 (2 per value).
    pub fn half_bytes(&self) -> usize {
        2 * self.values
    }
}

// ANCHOR: categories
/// The values of one training step of chapter 9's model (batch of `batch_size`
/// from `config`, first batch of the run): the weights, their gradients, Adam's two
/// moments, and the activations the forward pass keeps for the backward pass (what
/// the engine counts as live after the forward pass, above what was live before).
pub fn categories(config: TrainConfig) -> Vec<Category> {
    let mut trainer = Trainer::additive(config);
    let weights = trainer.model.num_parameters();
    let numbers = trainer.batch_numbers(0);
    let batch = Batch::new(&numbers, &trainer.src_vocab, &trainer.tgt_vocab);
    let before = engine::memory::live_bytes();
    let logits = trainer
        .model
        .forward(&batch.src, &batch.src_lens, &batch.dec_input);
    let loss = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
    let activations = (engine::memory::live_bytes() - before) / 4;
    drop((loss, logits));
    vec![
        Category {
            name: "weights",
            values: weights,
        },
        Category {
            name: "gradients",
            values: weights,
        },
        Category {
            name: "Adam moments m, v",
            values: 2 * weights,
        },
        Category {
            name: "activations",
            values: activations,
        },
    ]
}
// ANCHOR_END: categories

/// The table of [`categories`]: values, KiB in f32, KiB in a 2-byte format, and the
/// KiB saved.
pub fn table(categories: &[Category]) -> String {
    let kib = |b: usize| b as f64 / 1024.0;
    let mut out = format!(
        "{:<19}{:>9}  {:>9}  {:>9}  {:>9}\n",
        "tensors", "values", "f32 KiB", "half KiB", "saved KiB"
    );
    for c in categories {
        out += &format!(
            "{:<19}{:>9}  {:>9.1}  {:>9.1}  {:>9.1}\n",
            c.name,
            c.values,
            kib(c.f32_bytes()),
            kib(c.half_bytes()),
            kib(c.f32_bytes() - c.half_bytes())
        );
    }
    let total: usize = categories.iter().map(|c| c.values).sum();
    let all = Category {
        name: "all",
        values: total,
    };
    out += &format!(
        "{:<19}{:>9}  {:>9.1}  {:>9.1}  {:>9.1}\n",
        all.name,
        all.values,
        kib(all.f32_bytes()),
        kib(all.half_bytes()),
        kib(all.f32_bytes() - all.half_bytes())
    );
    out
}
