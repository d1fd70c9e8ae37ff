//! A decoder-only Transformer over characters, GPT's shape: token and position
//! embeddings, a stack of causal layers, a final LayerNorm, a linear layer to the
//! vocabulary; and generation from it, with a KV cache or without.

use attention::prelude::*;
use engine::nn::{Dropout, DropoutConfig, LayerNorm, LayerNormConfig, prefixed};
use serde::{Deserialize, Serialize};

use chapter09::SplitMix64;

// ANCHOR: config
/// The sizes of a [`CharLm`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LmConfig {
    /// The number of distinct characters.
    pub vocab: usize,
    /// The model width `d`.
    pub num_hiddens: usize,
    /// Attention heads per layer.
    pub num_heads: usize,
    /// The feed-forward network's hidden width.
    pub ffn_num_hiddens: usize,
    /// The number of layers.
    pub num_layers: usize,
    /// The context: the most positions the model reads (its position table's size).
    pub block_size: usize,
    /// Dropout in training mode.
    pub dropout: f32,
    /// Pre-norm (`true`, GPT-2) or post-norm (`false`, the original paper).
    pub norm_first: bool,
}
// ANCHOR_END: config

impl LmConfig {
    /// Whether a model can be built from these sizes: every size at least 1, the
    /// width divisible by the heads, the dropout a probability. The error names the
    /// first field that is wrong, with its value; [`CharLm::new`] panics on such a
    /// config, so a config read from a file is checked here first.
    ///
    /// ```
    /// use chapter16::lm::LmConfig;
    /// let c = chapter16::lm_train::LmTrainConfig::chapter(65).model;
    /// assert_eq!(c.validate(), Ok(()));
    /// let odd = LmConfig { num_heads: 3, ..c };
    /// assert_eq!(
    ///     odd.validate(),
    ///     Err("num_hiddens 128 is not divisible by num_heads 3".to_string())
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("vocab", self.vocab),
            ("num_hiddens", self.num_hiddens),
            ("num_heads", self.num_heads),
            ("ffn_num_hiddens", self.ffn_num_hiddens),
            ("block_size", self.block_size),
        ] {
            if value == 0 {
                return Err(format!("{name} is 0, the model needs at least 1"));
            }
        }
        if !self.num_hiddens.is_multiple_of(self.num_heads) {
            return Err(format!(
                "num_hiddens {} is not divisible by num_heads {}",
                self.num_hiddens, self.num_heads
            ));
        }
        if !(0.0..=1.0).contains(&self.dropout) {
            return Err(format!(
                "dropout is {}, it must be a probability in [0, 1]",
                self.dropout
            ));
        }
        Ok(())
    }

    fn layer(&self) -> TransformerLayerConfig {
        TransformerLayerConfig {
            num_hiddens: self.num_hiddens,
            num_heads: self.num_heads,
            ffn_num_hiddens: self.ffn_num_hiddens,
            dropout: self.dropout,
            activation: FeedForwardActivation::Gelu,
            norm_first: self.norm_first,
            ..Default::default()
        }
    }
}

// ANCHOR: model
/// A character-level language model:
/// `logits = head(norm(layers(tok_emb + pos_emb)))`.
/// Each layer is a [`CausalTransformerLayer`] with GELU, as in GPT-2; a pre-norm
/// model ends with one more LayerNorm (GPT-2's `ln_f`), a post-norm one needs none.
#[derive(Debug)]
pub struct CharLm {
    config: LmConfig,
    token_embedding: Embedding,
    position_embedding: Embedding,
    dropout: Dropout,
    layers: Vec<CausalTransformerLayer>,
    final_norm: Option<LayerNorm>,
    head: Linear,
    /// Whether `head` shares `token_embedding`'s table ([`CharLm::tied`]).
    tied: bool,
}
// ANCHOR_END: model

impl CharLm {
    /// A model with fresh weights from the engine's generator.
    pub fn new(config: LmConfig) -> CharLm {
        let c = config;
        let embedding = |n| {
            Embedding::new(EmbeddingConfig {
                num_embeddings: n,
                embedding_dim: c.num_hiddens,
            })
        };
        CharLm {
            config,
            token_embedding: embedding(c.vocab),
            position_embedding: embedding(c.block_size),
            dropout: Dropout::new(DropoutConfig { p: c.dropout }),
            layers: (0..c.num_layers)
                .map(|_| CausalTransformerLayer::new(c.layer()))
                .collect(),
            final_norm: c.norm_first.then(|| {
                LayerNorm::new(LayerNormConfig {
                    dim: c.num_hiddens,
                    ..Default::default()
                })
            }),
            head: Linear::new(LinearConfig {
                in_features: c.num_hiddens,
                out_features: c.vocab,
                bias: true,
            }),
            tied: false,
        }
    }

    // ANCHOR: tied
    /// A model whose token embedding and output layer share one `[vocab, d]` matrix
    /// `W`, as Vaswani et al. (2017, §3.4) share theirs: the embedding of a character
    /// is its row of `W` multiplied by `√d`, and the logits are `x · Wᵀ + b`. The
    /// layer to the vocabulary keeps a bias of its own, so tying removes `vocab · d`
    /// parameters.
    ///
    /// `W` is drawn from `N(0, 1/d)`, so that `√d · W` has the unit variance of
    /// [`CharLm::new`]'s embedding (the same draws, scaled), and the logits start at
    /// about unit size. Everything else is drawn as in [`CharLm::new`], in the same
    /// order, so for one seed the two models differ only in the head.
    pub fn tied(config: LmConfig) -> CharLm {
        let c = config;
        let d = c.num_hiddens;
        let table =
            engine::nn::init::normal([c.vocab, d], 0.0, 1.0 / (d as f32).sqrt());
        let token_embedding = Embedding::from_weights(&table);
        let untied = |vocab| {
            Embedding::new(EmbeddingConfig {
                num_embeddings: vocab,
                embedding_dim: d,
            })
        };
        let position_embedding = untied(c.block_size);
        let layers = (0..c.num_layers)
            .map(|_| CausalTransformerLayer::new(c.layer()))
            .collect();
        let final_norm = c.norm_first.then(|| {
            LayerNorm::new(LayerNormConfig {
                dim: d,
                ..Default::default()
            })
        });
        // Linear::new's bias: U(-1/√d, 1/√d); the weight is the embedding's table,
        // shared (the same tensor), not copied.
        let bound = 1.0 / (d as f32).sqrt();
        let bias = engine::nn::init::uniform([c.vocab], -bound, bound);
        let head = Linear::from_weights(token_embedding.weight(), Some(&bias));
        CharLm {
            config,
            token_embedding,
            position_embedding,
            dropout: Dropout::new(DropoutConfig { p: c.dropout }),
            layers,
            final_norm,
            head,
            tied: true,
        }
    }
    // ANCHOR_END: tied

    /// Whether the token embedding and the output layer share their matrix.
    pub fn is_tied(&self) -> bool {
        self.tied
    }

    /// The sizes the model was built with.
    pub fn config(&self) -> &LmConfig {
        &self.config
    }

    /// The layers, in order.
    pub fn layers(&self) -> &[CausalTransformerLayer] {
        &self.layers
    }

    // ANCHOR: embed
    /// `ids: [B, T]` at positions `start..start + T` → `[B, T, d]`.
    fn embed(&self, ids: &Tensor, start: usize) -> Tensor {
        let t = ids.size(1);
        assert!(
            start + t <= self.config.block_size,
            "CharLm: positions {start}..{} asked for, but the model knows {} \
             (block_size)",
            start + t,
            self.config.block_size
        );
        let positions: Vec<f32> = (start..start + t).map(|p| p as f32).collect();
        let positions = Tensor::from_vec(positions, [t]);
        let mut tokens = self.token_embedding.forward(ids);
        if self.tied {
            // §3.4: the shared matrix is multiplied by √d where it embeds.
            tokens = tokens * (self.config.num_hiddens as f32).sqrt();
        }
        let x = tokens + self.position_embedding.forward(&positions);
        self.dropout.forward(&x)
    }
    // ANCHOR_END: embed

    /// The final LayerNorm (pre-norm) and the head.
    fn logits(&self, x: &Tensor) -> Tensor {
        match &self.final_norm {
            Some(norm) => self.head.forward(&norm.forward(x)),
            None => self.head.forward(x),
        }
    }

    // ANCHOR: forward
    /// The logits `[B, T, vocab]` of the next character at every position of
    /// `ids: [B, T]`: position `t` has read characters `0..=t`.
    pub fn forward(&self, ids: &Tensor) -> Tensor {
        let mut x = self.embed(ids, 0);
        for layer in &self.layers {
            x = layer.forward(&x, &Mask::none());
        }
        self.logits(&x)
    }
    // ANCHOR_END: forward

    /// The mean cross-entropy of predicting `targets` from `inputs` (both `[B, T]`).
    pub fn loss(&self, inputs: &Tensor, targets: &Tensor) -> Tensor {
        self.forward(inputs).cross_entropy(targets, Reduction::Mean)
    }

    // ANCHOR: cached
    /// The prompt `ids: [1, T]` through every layer, filling one empty cache per
    /// layer; the logits of its last position, `[vocab]`.
    pub fn prefill(&self, ids: &Tensor, caches: &mut [KvCache]) -> Vec<f32> {
        let mut x = self.embed(ids, 0);
        for (layer, cache) in self.layers.iter().zip(caches.iter_mut()) {
            x = layer.prefill(&x, cache, &Mask::none());
        }
        let t = x.size(1);
        self.logits(&x.narrow(1, t - 1, 1)).to_vec()
    }

    /// One new character `id` at position `caches[0].len()`: each layer attends to
    /// its cache and appends this position's key and value. The logits of the next
    /// one.
    pub fn step(&self, id: usize, caches: &mut [KvCache]) -> Vec<f32> {
        let position = caches[0].len();
        let mut x = self.embed(&Tensor::from_vec(vec![id as f32], [1, 1]), position);
        for (layer, cache) in self.layers.iter().zip(caches.iter_mut()) {
            x = layer.step(&x, cache, &Mask::none());
        }
        self.logits(&x).to_vec()
    }
    // ANCHOR_END: cached
}

impl Module for CharLm {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut all = [
            prefixed("token_embedding", &self.token_embedding),
            prefixed("position_embedding", &self.position_embedding),
        ]
        .concat();
        for (i, layer) in self.layers.iter().enumerate() {
            all.extend(prefixed(&format!("layers.{i}"), layer));
        }
        if let Some(norm) = &self.final_norm {
            all.extend(prefixed("final_norm", norm));
        }
        // A tied head's weight is the token embedding's table, listed once, so that
        // it is counted and updated once.
        all.extend(
            prefixed("head", &self.head)
                .into_iter()
                .filter(|(name, _)| !(self.tied && name == "head.weight")),
        );
        all
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
        for layer in &mut self.layers {
            layer.set_training(training);
        }
    }
}

// ANCHOR: sampling
/// How the next character is chosen from the logits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Divides the logits before the softmax: below 1 sharpens the distribution,
    /// above 1 flattens it; 0 means greedy (always the most likely character).
    pub temperature: f32,
    /// Keep only the `k` most likely characters (`None`: all of them).
    pub top_k: Option<usize>,
    /// Seeds the draws: the same seed, the same text.
    pub seed: u64,
}

/// Picks the next id from `logits` with `sampling`, drawing from `rng`. The softmax
/// and the draw are done in f64 on the logits' values, so the choice depends only on
/// them and on the seed.
pub fn sample(logits: &[f32], sampling: &Sampling, rng: &mut SplitMix64) -> usize {
    let best = (0..logits.len())
        .max_by(|&a, &b| logits[a].total_cmp(&logits[b]).then(b.cmp(&a)))
        .expect("at least one logit");
    if sampling.temperature == 0.0 {
        return best;
    }
    // The k largest logits, ties broken towards the smaller id.
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
    order.truncate(sampling.top_k.unwrap_or(logits.len()).max(1));
    let t = f64::from(sampling.temperature);
    let top = f64::from(logits[best]) / t;
    let weights: Vec<f64> = order
        .iter()
        .map(|&i| (f64::from(logits[i]) / t - top).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    // A uniform draw in [0, 1) from the top 53 bits.
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
    let mut sum = 0.0;
    for (&i, w) in order.iter().zip(&weights) {
        sum += w;
        if u < sum {
            return i;
        }
    }
    *order.last().expect("at least one kept")
}
// ANCHOR_END: sampling

// ANCHOR: generate
/// `new_tokens` characters after `prompt`, chosen by `sampling`.
///
/// The model reads at most `block_size` characters. When the text reaches that
/// length, the window it reads jumps ahead by half a block: the model then reads the
/// last `block_size / 2` characters, from position 0 again, and goes on.
///
/// With `use_cache`, the window's text fills one [`KvCache`] per layer (a prefill),
/// and each new character costs one position's work, until the window jumps and the
/// caches are filled again. Without, each new character runs the model over the whole
/// window, as training does. Both read the same windows, choose from the same
/// logits (up to rounding) and so give the same text.
pub fn generate(
    model: &CharLm,
    prompt: &[usize],
    new_tokens: usize,
    sampling: &Sampling,
    use_cache: bool,
) -> Vec<usize> {
    let block = model.config().block_size;
    assert!(
        !prompt.is_empty() && prompt.len() < block,
        "generate: the prompt must hold 1 to {} characters (block_size - 1), \
         found {}",
        block - 1,
        prompt.len()
    );
    let mut rng = SplitMix64::new(sampling.seed);
    let mut ids = prompt.to_vec();
    let as_tensor = |ids: &[usize]| {
        Tensor::from_vec(ids.iter().map(|&i| i as f32).collect(), [1, ids.len()])
    };
    no_grad(|| {
        let mut caches: Vec<KvCache> =
            model.layers().iter().map(|_| KvCache::new(block)).collect();
        let (mut start, mut logits, mut stale) = (0, Vec::new(), true);
        for i in 0..new_tokens {
            if ids.len() - start == block {
                start += block / 2; // the window jumps; the caches are stale
                stale = true;
            }
            let window = &ids[start..];
            if !use_cache {
                let all = model.forward(&as_tensor(window)); // [1, T, V]
                logits = all.narrow(1, window.len() - 1, 1).to_vec();
            } else if stale {
                caches.iter_mut().for_each(KvCache::reset);
                logits = model.prefill(&as_tensor(window), &mut caches);
                stale = false;
            }
            let next = sample(&logits, sampling, &mut rng);
            ids.push(next);
            let more = i + 1 < new_tokens && ids.len() - start < block;
            if use_cache && more {
                logits = model.step(next, &mut caches);
            }
        }
    });
    ids[prompt.len()..].to_vec()
}
// ANCHOR_END: generate
