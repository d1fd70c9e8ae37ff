//! An encoder–decoder Transformer for chapter 9's task: numbers in words to digits.

use attention::prelude::*;
use engine::nn::{Dropout, DropoutConfig, LayerNorm, LayerNormConfig, prefixed};
use serde::{Deserialize, Serialize};

use chapter09::{Batch, Translation, Vocab};

// ANCHOR: config
/// The sizes of a [`TransformerSeq2Seq`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransformerConfig {
    /// Source vocabulary size.
    pub src_vocab: usize,
    /// Target vocabulary size.
    pub tgt_vocab: usize,
    /// The model width `d` (the paper's `d_model`).
    pub num_hiddens: usize,
    /// Attention heads per layer.
    pub num_heads: usize,
    /// The feed-forward network's hidden width.
    pub ffn_num_hiddens: usize,
    /// Encoder layers, and as many decoder layers.
    pub num_layers: usize,
    /// Dropout in training mode, everywhere the layers drop and after the embeddings.
    pub dropout: f32,
    /// Pre-norm (`true`) or post-norm (`false`) layers.
    pub norm_first: bool,
    /// The longest sequence the positional encoding covers.
    pub max_len: usize,
}
// ANCHOR_END: config

impl TransformerConfig {
    /// The settings of each layer.
    pub fn layer(&self) -> TransformerLayerConfig {
        TransformerLayerConfig {
            num_hiddens: self.num_hiddens,
            num_heads: self.num_heads,
            ffn_num_hiddens: self.ffn_num_hiddens,
            dropout: self.dropout,
            norm_first: self.norm_first,
            ..Default::default()
        }
    }
}

// ANCHOR: model
/// The Transformer of "Attention Is All You Need", small: token embeddings scaled by
/// `√d` plus the sinusoidal positional encoding, a stack of encoder layers, a stack
/// of decoder layers that attend to the encoder's output, and a linear layer to the
/// target vocabulary. A pre-norm model ends each stack with one more LayerNorm, since
/// its layers leave their output unnormalised; a post-norm model, whose last layer
/// ends with one, has none. (PyTorch's `nn.Transformer` ends each stack with a
/// LayerNorm in both placements.)
#[derive(Debug)]
pub struct TransformerSeq2Seq {
    config: TransformerConfig,
    src_embedding: Embedding,
    tgt_embedding: Embedding,
    positions: Tensor,
    dropout: Dropout,
    encoder: Vec<TransformerEncoderLayer>,
    decoder: Vec<TransformerDecoderLayer>,
    encoder_norm: Option<LayerNorm>,
    decoder_norm: Option<LayerNorm>,
    dense: Linear,
}
// ANCHOR_END: model

impl TransformerSeq2Seq {
    /// A model with fresh weights, drawn from the engine's generator.
    pub fn new(config: TransformerConfig) -> TransformerSeq2Seq {
        let c = config;
        let d = c.num_hiddens;
        let embedding = |vocab| {
            Embedding::new(EmbeddingConfig {
                num_embeddings: vocab,
                embedding_dim: d,
            })
        };
        let final_norm = || {
            c.norm_first.then(|| {
                LayerNorm::new(LayerNormConfig {
                    dim: d,
                    ..Default::default()
                })
            })
        };
        TransformerSeq2Seq {
            config,
            src_embedding: embedding(c.src_vocab),
            tgt_embedding: embedding(c.tgt_vocab),
            positions: chapter08::positions::sinusoidal_encoding(c.max_len, d),
            dropout: Dropout::new(DropoutConfig { p: c.dropout }),
            encoder: (0..c.num_layers)
                .map(|_| TransformerEncoderLayer::new(c.layer()))
                .collect(),
            decoder: (0..c.num_layers)
                .map(|_| TransformerDecoderLayer::new(c.layer()))
                .collect(),
            encoder_norm: final_norm(),
            decoder_norm: final_norm(),
            dense: Linear::new(LinearConfig {
                in_features: d,
                out_features: c.tgt_vocab,
                bias: true,
            }),
        }
    }

    /// The sizes the model was built with.
    pub fn config(&self) -> &TransformerConfig {
        &self.config
    }

    /// The decoder's layers, in order (for their attention weights).
    pub fn decoder_layers(&self) -> &[TransformerDecoderLayer] {
        &self.decoder
    }

    /// The encoder's layers, in order.
    pub fn encoder_layers(&self) -> &[TransformerEncoderLayer] {
        &self.encoder
    }

    // ANCHOR: embed
    /// `ids: [B, T]` → `[B, T, d]`: `embedding · √d + PE[:T]`, then dropout. The
    /// scale keeps the embeddings about as large as the encoding added to them.
    fn embed(&self, embedding: &Embedding, ids: &Tensor) -> Tensor {
        let t = ids.size(1);
        assert!(
            t <= self.config.max_len,
            "TransformerSeq2Seq: a sequence of {t} tokens, but the positional \
             encoding covers {} (max_len)",
            self.config.max_len
        );
        let scale = (self.config.num_hiddens as f32).sqrt();
        let x = embedding.forward(ids) * scale + self.positions.narrow(0, 0, t);
        self.dropout.forward(&x)
    }
    // ANCHOR_END: embed

    // ANCHOR: forward
    /// The encoder's output for `src: [B, S]` with valid lengths `src_lens: [B]`.
    pub fn encode(&self, src: &Tensor, src_lens: &Tensor) -> Tensor {
        let mask = Mask::valid_lens(src_lens);
        let mut x = self.embed(&self.src_embedding, src);
        for layer in &self.encoder {
            x = layer.forward(&x, &mask);
        }
        match &self.encoder_norm {
            Some(norm) => norm.forward(&x),
            None => x,
        }
    }

    /// The logits `[B, T, V]` of every target position, given the decoder's input
    /// `dec_input: [B, T]` and the encoder's output.
    pub fn decode(
        &self,
        dec_input: &Tensor,
        memory: &Tensor,
        src_lens: &Tensor,
    ) -> Tensor {
        let memory_mask = Mask::valid_lens(src_lens);
        let mut x = self.embed(&self.tgt_embedding, dec_input);
        for layer in &self.decoder {
            x = layer.forward(&x, memory, &Mask::causal(), &memory_mask);
        }
        if let Some(norm) = &self.decoder_norm {
            x = norm.forward(&x);
        }
        self.dense.forward(&x)
    }

    /// Teacher forcing: the logits of every target position at once.
    pub fn forward(
        &self,
        src: &Tensor,
        src_lens: &Tensor,
        dec_input: &Tensor,
    ) -> Tensor {
        self.decode(dec_input, &self.encode(src, src_lens), src_lens)
    }
    // ANCHOR_END: forward
}

impl Module for TransformerSeq2Seq {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut all = [
            prefixed("src_embedding", &self.src_embedding),
            prefixed("tgt_embedding", &self.tgt_embedding),
        ]
        .concat();
        for (i, layer) in self.encoder.iter().enumerate() {
            all.extend(prefixed(&format!("encoder.layers.{i}"), layer));
        }
        for (i, layer) in self.decoder.iter().enumerate() {
            all.extend(prefixed(&format!("decoder.layers.{i}"), layer));
        }
        if let Some(norm) = &self.encoder_norm {
            all.extend(prefixed("encoder.norm", norm));
        }
        if let Some(norm) = &self.decoder_norm {
            all.extend(prefixed("decoder.norm", norm));
        }
        all.extend(prefixed("dense", &self.dense));
        all
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
        for layer in &mut self.encoder {
            layer.set_training(training);
        }
        for layer in &mut self.decoder {
            layer.set_training(training);
        }
    }
}

// ANCHOR: greedy
/// Greedy decoding of a batch of numbers: from `<bos>`, each step runs the decoder
/// over everything predicted so far and appends the most likely next token, until
/// every example has produced `<eos>` or `max_len` tokens. The weights recorded for
/// each step are the last decoder layer's cross-attention of the newest position,
/// averaged over the heads.
pub fn greedy_decode(
    model: &TransformerSeq2Seq,
    numbers: &[u32],
    src_vocab: &Vocab,
    tgt_vocab: &Vocab,
    max_len: usize,
) -> Vec<Translation> {
    let batch = Batch::new(numbers, src_vocab, tgt_vocab);
    let b = batch.len();
    no_grad(|| {
        let memory = model.encode(&batch.src, &batch.src_lens);
        let lens: Vec<usize> = batch
            .src_lens
            .to_vec()
            .iter()
            .map(|&l| l as usize)
            .collect();
        let mut out: Vec<Translation> = numbers
            .iter()
            .map(|&number| Translation {
                number,
                ids: Vec::new(),
                weights: Vec::new(),
            })
            .collect();
        let mut done = vec![false; b];
        let mut input = Tensor::full([b, 1], Vocab::BOS_ID as f32);
        for _ in 0..=max_len {
            let logits = model.decode(&input, &memory, &batch.src_lens);
            let t = logits.size(1);
            let best_ids = logits.narrow(1, t - 1, 1).argmax(-1); // [B, 1]
            let best: Vec<usize> =
                best_ids.to_vec().iter().map(|&i| i as usize).collect();
            // The newest position's cross-attention, averaged over the heads: [B, 1, S].
            let weights = last_cross_attention(model).narrow(2, t - 1, 1).mean_dim(1);
            let weights = weights.to_vec();
            let s = weights.len() / b;
            for i in 0..b {
                if done[i] {
                    continue;
                }
                let row = weights[i * s..i * s + lens[i]].to_vec();
                if best[i] == Vocab::EOS_ID {
                    out[i].weights.push(row);
                    done[i] = true;
                } else if out[i].ids.len() == max_len {
                    done[i] = true;
                } else {
                    out[i].weights.push(row);
                    out[i].ids.push(best[i]);
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
            input = Tensor::concat(&[&input, &best_ids], 1);
        }
        out
    })
}
// ANCHOR_END: greedy

/// The last decoder layer's cross-attention weights of the last call, `[B, H, T, S]`.
fn last_cross_attention(model: &TransformerSeq2Seq) -> Tensor {
    model
        .decoder_layers()
        .last()
        .expect("at least one decoder layer")
        .cross_attention()
        .last_attention_weights()
        .expect("the decoder has run")
}

/// The fraction of `numbers` decoded exactly right, in batches of `batch_size`, with
/// the translations.
pub fn exact_match(
    model: &TransformerSeq2Seq,
    numbers: &[u32],
    src_vocab: &Vocab,
    tgt_vocab: &Vocab,
    batch_size: usize,
) -> (f32, Vec<Translation>) {
    let mut all = Vec::with_capacity(numbers.len());
    for chunk in numbers.chunks(batch_size.max(1)) {
        all.extend(greedy_decode(model, chunk, src_vocab, tgt_vocab, 7));
    }
    let right = all.iter().filter(|t| t.is_exact(tgt_vocab)).count();
    (right as f32 / numbers.len().max(1) as f32, all)
}

/// Per head, the last decoder layer's cross-attention when the model reads back its
/// own decoding of `number`: `[head][target step][source token]`, one row per
/// predicted token and one for `<eos>`.
pub fn cross_attention_heads(
    model: &TransformerSeq2Seq,
    translation: &Translation,
    src_vocab: &Vocab,
    tgt_vocab: &Vocab,
) -> Vec<Vec<Vec<f32>>> {
    let batch = Batch::new(&[translation.number], src_vocab, tgt_vocab);
    let mut ids = vec![Vocab::BOS_ID as f32];
    ids.extend(translation.ids.iter().map(|&i| i as f32));
    let t = ids.len();
    no_grad(|| {
        let memory = model.encode(&batch.src, &batch.src_lens);
        model.decode(&Tensor::from_vec(ids, [1, t]), &memory, &batch.src_lens);
    });
    let w = last_cross_attention(model); // [1, H, T, S]
    let (h, s) = (w.size(1), w.size(3));
    let values = w.to_vec();
    (0..h)
        .map(|head| {
            (0..t)
                .map(|row| {
                    values[(head * t + row) * s..(head * t + row + 1) * s].to_vec()
                })
                .collect()
        })
        .collect()
}
