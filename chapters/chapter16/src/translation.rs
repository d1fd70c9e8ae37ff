//! Training the encoder–decoder Transformer on chapter 9's task, with chapter 9's
//! data, loss, optimizer, schedule and budget: only the model differs.

use attention::prelude::*;
use chapter09::{
    Batch, EVAL_BATCH, History, ResumableAdam, Split, SplitMix64, StepReport,
    TrainConfig, Translation, Vocab, masked_cross_entropy, split,
};
use engine::optim::{AdamConfig, clip_grad_norm};

use crate::seq2seq::{TransformerConfig, TransformerSeq2Seq, exact_match};

// ANCHOR: sizes
/// The Transformer of the chapter's comparison: `d = 64` like chapter 9's GRU state,
/// 4 heads, a feed-forward width of 128, two encoder and two decoder layers,
/// post-norm as in the original paper, no dropout (chapter 9's model has none
/// either).
pub fn chapter_model() -> TransformerConfig {
    TransformerConfig {
        src_vocab: Vocab::source().len(),
        tgt_vocab: Vocab::target().len(),
        num_hiddens: 64,
        num_heads: 4,
        ffn_num_hiddens: 128,
        num_layers: 2,
        dropout: 0.0,
        norm_first: false,
        max_len: 32,
    }
}
// ANCHOR_END: sizes

/// A training run of the Transformer on chapter 9's task: the same split, batches,
/// loss, Adam, warmup and cosine schedule and clipping as chapter 9's
/// [`chapter09::Trainer`].
#[derive(Debug)]
pub struct TranslationTrainer {
    /// The data and optimisation settings (chapter 9's).
    pub config: TrainConfig,
    /// The model being trained.
    pub model: TransformerSeq2Seq,
    /// Adam, with its state in the open.
    pub optimizer: ResumableAdam,
    /// Steps taken.
    pub step: usize,
    /// Losses and evaluations so far.
    pub history: History,
    /// The training and held-out numbers.
    pub split: Split,
    order: Option<(usize, Vec<u32>)>,
}

impl TranslationTrainer {
    /// A fresh run: the split from the seed, then the model, built right after
    /// seeding the engine's generator with the same seed.
    pub fn new(config: TrainConfig, model: TransformerConfig) -> TranslationTrainer {
        let split = split(
            config.max_number,
            config.train_size,
            config.held_out,
            config.seed,
        );
        engine::manual_seed(config.seed);
        let model = TransformerSeq2Seq::new(model);
        let optimizer = ResumableAdam::new(model.parameters(), AdamConfig::default());
        TranslationTrainer {
            config,
            model,
            optimizer,
            step: 0,
            history: History::default(),
            split,
            order: None,
        }
    }

    /// The numbers of the batch of `step`: chapter 9's order (the training set
    /// shuffled once per epoch from the seed and the epoch), so both models see the
    /// same batches in the same order.
    pub fn batch_numbers(&mut self, step: usize) -> Vec<u32> {
        let per_epoch = self.config.batches_per_epoch();
        let (epoch, index) = (step / per_epoch, step % per_epoch);
        if self.order.as_ref().is_none_or(|(e, _)| *e != epoch) {
            let mut numbers = self.split.train.clone();
            let seed = self.config.seed
                ^ (epoch as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
            SplitMix64::new(seed).shuffle(&mut numbers);
            self.order = Some((epoch, numbers));
        }
        let (_, numbers) = self.order.as_ref().expect("set above");
        let size = self.config.batch_size.min(numbers.len());
        numbers[index * size..(index + 1) * size].to_vec()
    }

    /// One step: teacher forcing, masked loss, backward, clipping, the scheduled
    /// learning rate, Adam.
    pub fn train_step(&mut self) -> StepReport {
        let step = self.step;
        let numbers = self.batch_numbers(step);
        let batch = Batch::new(&numbers, &Vocab::source(), &Vocab::target());
        let logits =
            self.model
                .forward(&batch.src, &batch.src_lens, &batch.dec_input);
        let loss = masked_cross_entropy(&logits, &batch.tgt, &batch.tgt_lens);
        self.optimizer.zero_grad();
        loss.backward();
        let grad_norm = clip_grad_norm(self.optimizer.parameters(), self.config.clip);
        let lr = self.config.lr_at(step);
        self.optimizer.set_lr(lr);
        self.optimizer.step();
        let loss = loss.item();
        self.history.losses.push(loss);
        self.step += 1;
        StepReport {
            step,
            loss,
            grad_norm,
            lr,
        }
    }

    /// Held-out exact match by greedy decoding (in evaluation mode), recorded in the
    /// history.
    pub fn evaluate(&mut self) -> (f32, Vec<Translation>) {
        self.model.eval();
        let result = exact_match(
            &self.model,
            &self.split.held_out,
            &Vocab::source(),
            &Vocab::target(),
            EVAL_BATCH,
        );
        self.model.train();
        self.history.held_out.push((self.step, result.0));
        result
    }

    /// Trains until `step` steps in all, calling `on_step` after each.
    pub fn train_until(&mut self, step: usize, mut on_step: impl FnMut(&StepReport)) {
        while self.step < step {
            let report = self.train_step();
            on_step(&report);
        }
    }
}
