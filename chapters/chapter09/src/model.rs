//! The encoder–decoder with attention: d2l's `Seq2SeqEncoder` and
//! `Seq2SeqAttentionDecoder`, one GRU layer each.

use attention::prelude::*;
use engine::nn::prefixed;
use serde::{Deserialize, Serialize};

// ANCHOR: config
/// The sizes of a [`Seq2Seq`] model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seq2SeqConfig {
    /// The number of source tokens (the encoder's vocabulary).
    pub src_vocab: usize,
    /// The number of target tokens (the decoder's vocabulary and output classes).
    pub tgt_vocab: usize,
    /// The size of every token embedding, source and target.
    pub embed_size: usize,
    /// The size `H` of both GRU states, and of the attention's hidden space.
    pub num_hiddens: usize,
}
// ANCHOR_END: config

// ANCHOR: decoder_attention
/// The attention a decoder step runs: its state before the step (the query) against
/// the encoder's outputs (keys and values), returning the context and the weights.
///
/// | argument | shape |
/// |---|---|
/// | `query` | `[B, H]`, the decoder's state |
/// | `enc_outputs` | `[B, S, H]`, keys and values |
/// | `mask` | [`Mask::valid_lens`] of the source lengths `[B]` |
/// | context | `[B, H]` |
/// | weights | `[B, S]` |
pub trait DecoderAttention: Module {
    /// One step's context and weights.
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor);
}

/// d2l's decoder uses additive attention: one query per example, `[B, 1, H]`.
impl DecoderAttention for AdditiveAttention {
    fn attend(
        &self,
        query: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        let context =
            self.forward(&query.unsqueeze(1), enc_outputs, enc_outputs, mask);
        let weights = self.last_attention_weights().expect("set by forward");
        (context.squeeze(1), weights.squeeze(1))
    }
}
// ANCHOR_END: decoder_attention

// ANCHOR: encoder
/// The encoder: an embedding and a GRU over the source.
#[derive(Debug)]
pub struct Encoder {
    embedding: Embedding,
    rnn: Gru,
}

impl Encoder {
    /// An encoder for `config`'s source vocabulary.
    pub fn new(config: &Seq2SeqConfig) -> Encoder {
        Encoder {
            embedding: Embedding::new(EmbeddingConfig {
                num_embeddings: config.src_vocab,
                embedding_dim: config.embed_size,
            }),
            rnn: Gru::new(GruConfig {
                input_size: config.embed_size,
                hidden_size: config.num_hiddens,
            }),
        }
    }

    /// Encodes `src: [B, S]` (ids) with lengths `src_lens: [B]`: every step's state
    /// `[B, S, H]` (the keys and values of attention), and the state after each
    /// source's last real token `[B, H]` (the decoder's first state).
    pub fn forward(&self, src: &Tensor, src_lens: &Tensor) -> (Tensor, Tensor) {
        let embedded = self.embedding.forward(src); //     [B, S, E]
        let (outputs, _) = self.rnn.forward(&embedded, None); // [B, S, H]
        // The GRU's own last state has also read the padding of the shorter sources;
        // take each source's state at its last real token instead: a one-hot over the
        // steps.
        let (b, s) = (src.size(0), src.size(1));
        let lens = src_lens.to_vec();
        let mut last = vec![0.0; b * s];
        for (i, &len) in lens.iter().enumerate() {
            last[i * s + len as usize - 1] = 1.0;
        }
        let last = Tensor::from_vec(last, [b, s, 1]).to(&outputs.device());
        let state = (&outputs * &last).sum_dim(1); //        [B, H]
        (outputs, state)
    }

    /// The source embedding.
    pub fn embedding(&self) -> &Embedding {
        &self.embedding
    }

    /// The GRU.
    pub fn rnn(&self) -> &Gru {
        &self.rnn
    }
}

impl Module for Encoder {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("embedding", &self.embedding),
            prefixed("rnn", &self.rnn),
        ]
        .concat()
    }
}
// ANCHOR_END: encoder

// ANCHOR: decoder
/// The decoder: at each step the previous state attends over the encoder's outputs,
/// and the GRU cell reads the context concatenated with the embedding of the input
/// token.
#[derive(Debug)]
pub struct Decoder<A> {
    embedding: Embedding,
    attention: A,
    rnn: GruCell,
    dense: Linear,
}

impl<A: DecoderAttention> Decoder<A> {
    /// A decoder for `config`'s target vocabulary, attending with `attention`.
    pub fn new(config: &Seq2SeqConfig, attention: A) -> Decoder<A> {
        let (e, h, v) = (config.embed_size, config.num_hiddens, config.tgt_vocab);
        Decoder {
            embedding: Embedding::new(EmbeddingConfig {
                num_embeddings: v,
                embedding_dim: e,
            }),
            attention,
            rnn: GruCell::new(GruConfig {
                input_size: h + e, // the context, then the embedding
                hidden_size: h,
            }),
            dense: Linear::new(LinearConfig {
                in_features: h,
                out_features: v,
                ..Default::default()
            }),
        }
    }

    /// One step from the input tokens `ids: [B]` and the state `[B, H]`: the next
    /// state `[B, H]` and the attention weights `[B, S]`.
    pub fn step(
        &self,
        ids: &Tensor,
        state: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> (Tensor, Tensor) {
        // context [B, H], weights [B, S]
        let (context, weights) = self.attention.attend(state, enc_outputs, mask);
        let embedded = self.embedding.forward(ids); //             [B, E]
        let input = Tensor::concat(&[&context, &embedded], -1); // [B, H + E]
        (self.rnn.forward(&input, state), weights)
    }

    /// Teacher forcing: runs every step of `dec_input: [B, T]` from `state: [B, H]`,
    /// returning the logits `[B, T, V]`.
    pub fn forward(
        &self,
        dec_input: &Tensor,
        state: &Tensor,
        enc_outputs: &Tensor,
        mask: &Mask,
    ) -> Tensor {
        let mut state = state.clone();
        let mut states = Vec::with_capacity(dec_input.size(1));
        for t in 0..dec_input.size(1) {
            let ids = dec_input.narrow(1, t, 1).squeeze(1); // [B]
            (state, _) = self.step(&ids, &state, enc_outputs, mask);
            states.push(state.clone());
        }
        // One output layer for all steps at once: [B, T, H] → [B, T, V].
        self.dense.forward(&Tensor::stack(&states, 1))
    }

    /// The logits `[B, V]` of a state `[B, H]`.
    pub fn logits(&self, state: &Tensor) -> Tensor {
        self.dense.forward(state)
    }

    /// The target embedding.
    pub fn embedding(&self) -> &Embedding {
        &self.embedding
    }

    /// The attention.
    pub fn attention(&self) -> &A {
        &self.attention
    }

    /// The GRU cell.
    pub fn rnn(&self) -> &GruCell {
        &self.rnn
    }

    /// The output layer, `Linear(H, V)`.
    pub fn dense(&self) -> &Linear {
        &self.dense
    }
}

impl<A: DecoderAttention> Module for Decoder<A> {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("embedding", &self.embedding),
            prefixed("attention", &self.attention),
            prefixed("rnn", &self.rnn),
            prefixed("dense", &self.dense),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.attention.set_training(training);
    }
}
// ANCHOR_END: decoder

// ANCHOR: seq2seq
/// The encoder–decoder: [`Encoder`] and [`Decoder`] with the attention `A` (additive
/// by default, d2l's choice).
#[derive(Debug)]
pub struct Seq2Seq<A = AdditiveAttention> {
    config: Seq2SeqConfig,
    /// The encoder.
    pub encoder: Encoder,
    /// The decoder.
    pub decoder: Decoder<A>,
}

impl Seq2Seq<AdditiveAttention> {
    /// d2l's model: additive attention with `h = num_hiddens`, no dropout.
    pub fn additive(config: Seq2SeqConfig) -> Seq2Seq<AdditiveAttention> {
        let h = config.num_hiddens;
        let attention = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: h,
            key_size: h,
            num_hiddens: h,
            ..Default::default()
        });
        Seq2Seq::new(config, attention)
    }
}

impl<A: DecoderAttention> Seq2Seq<A> {
    /// A model of the given sizes whose decoder attends with `attention`; its
    /// parameters are drawn from the engine's generator (seed it first).
    pub fn new(config: Seq2SeqConfig, attention: A) -> Seq2Seq<A> {
        Seq2Seq {
            config,
            encoder: Encoder::new(&config),
            decoder: Decoder::new(&config, attention),
        }
    }

    /// The sizes.
    pub fn config(&self) -> &Seq2SeqConfig {
        &self.config
    }

    /// The logits `[B, T, V]` of a batch under teacher forcing.
    pub fn forward(
        &self,
        src: &Tensor,
        src_lens: &Tensor,
        dec_input: &Tensor,
    ) -> Tensor {
        let (enc_outputs, state) = self.encoder.forward(src, src_lens);
        let mask = Mask::valid_lens(src_lens);
        self.decoder.forward(dec_input, &state, &enc_outputs, &mask)
    }
}

impl<A: DecoderAttention> Module for Seq2Seq<A> {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("encoder", &self.encoder),
            prefixed("decoder", &self.decoder),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.decoder.set_training(training);
    }
}
// ANCHOR_END: seq2seq
