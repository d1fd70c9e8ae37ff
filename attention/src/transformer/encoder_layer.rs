//! The Transformer's encoder layer: self-attention, then the feed-forward network,
//! each inside a residual connection with a LayerNorm.

use engine::Tensor;
use engine::nn::{LoadError, Module, StateDict, StateReader, prefixed};

use super::residual::{Residual, from_state};
use super::{PositionWiseFfn, TransformerLayerConfig};
use crate::check;
use crate::mask::Mask;
use crate::multi_head::MultiHeadAttention;
use crate::state::load_through;

/// One layer of the Transformer's encoder, `nn.TransformerEncoderLayer(batch_first=True)`
/// number for number:
///
/// ```text
/// post-norm (norm_first: false)            pre-norm (norm_first: true)
/// x = norm1(x + dropout1(self_attn(x)))     x = x + dropout1(self_attn(norm1(x)))
/// x = norm2(x + dropout2(ffn(x)))           x = x + dropout2(ffn(norm2(x)))
/// ```
///
/// | argument | shape |
/// |---|---|
/// | `x` | `[B, T, num_hiddens]` |
/// | `mask` | see [`Mask`]: scores are `[B, T, T]`; [`Mask::valid_lens`] for padding |
/// | output | `[B, T, num_hiddens]` |
///
/// Parameters, PyTorch's names where PyTorch has them: `self_attn.*` (a
/// [`MultiHeadAttention`] with biases: `W_q`, `W_k`, `W_v`, `W_o`), `linear1.*` and
/// `linear2.*` (the [`PositionWiseFfn`]), `norm1.*`, `norm2.*`.
/// [`from_state_dict`](Self::from_state_dict) and [`load_state_dict`](Module::load_state_dict)
/// also read `self_attn.in_proj_weight`, `self_attn.in_proj_bias` and
/// `self_attn.out_proj.*`, so a PyTorch layer's `state_dict()` loads as it is.
///
/// PyTorch's `src_key_padding_mask` is `True` where a key is ignored: pass
/// [`Mask::key_padding_ignore`] of it, or [`Mask::valid_lens`] of the lengths.
///
/// ```
/// use attention::transformer::{TransformerEncoderLayer, TransformerLayerConfig};
/// use attention::Mask;
/// use engine::Tensor;
/// use engine::nn::Module;
///
/// engine::manual_seed(0);
/// let mut layer = TransformerEncoderLayer::new(TransformerLayerConfig {
///     num_hiddens: 8,
///     num_heads: 2,
///     ffn_num_hiddens: 16,
///     ..Default::default()
/// });
/// layer.eval();
/// let x = Tensor::randn([2, 5, 8]);
/// let lens = Mask::valid_lens(&Tensor::from_vec(vec![5.0, 3.0], [2]));
/// assert_eq!(layer.forward(&x, &lens).shape(), &[2, 5, 8]);
/// ```
#[derive(Debug)]
pub struct TransformerEncoderLayer {
    config: TransformerLayerConfig,
    self_attn: MultiHeadAttention,
    ffn: PositionWiseFfn,
    attention_block: Residual,
    ffn_block: Residual,
}

impl TransformerEncoderLayer {
    /// A layer with fresh weights: PyTorch's `Linear` initialisation, LayerNorms at
    /// weight 1 and bias 0.
    #[track_caller]
    pub fn new(config: TransformerLayerConfig) -> Self {
        config.check("TransformerEncoderLayer::new");
        let c = config;
        TransformerEncoderLayer {
            config,
            self_attn: MultiHeadAttention::new(c.attention()),
            ffn: PositionWiseFfn::new(c.ffn()),
            attention_block: Residual::new(&c),
            ffn_block: Residual::new(&c),
        }
    }

    /// A layer whose parameters are copies of the tensors in `state`, by the names above
    /// (this module's, or PyTorch's for the attention); every problem is reported at once.
    #[track_caller]
    pub fn from_state_dict(
        config: TransformerLayerConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        from_state(
            "TransformerEncoderLayer::from_state_dict",
            config,
            state,
            Self::read,
        )
    }

    #[track_caller]
    fn read(reader: &mut StateReader<'_>, c: TransformerLayerConfig) -> Self {
        TransformerEncoderLayer {
            config: c,
            self_attn: MultiHeadAttention::read_at(
                reader,
                "self_attn.",
                c.attention(),
            ),
            ffn: PositionWiseFfn::read_at(reader, "", c.ffn()),
            attention_block: Residual::read(reader, "norm1", &c),
            ffn_block: Residual::read(reader, "norm2", &c),
        }
    }

    /// The settings the layer was built with.
    pub fn config(&self) -> &TransformerLayerConfig {
        &self.config
    }

    /// The self-attention, for its [`last_attention_weights`](crate::AttentionWeights::last_attention_weights)
    /// (`[B, num_heads, T, T]`).
    pub fn self_attention(&self) -> &MultiHeadAttention {
        &self.self_attn
    }

    /// Runs the layer over `x: [B, T, num_hiddens]`; `mask` says which keys each
    /// position may attend to.
    #[track_caller]
    pub fn forward(&self, x: &Tensor, mask: &Mask) -> Tensor {
        let d = self.config.num_hiddens;
        check::ensure(
            x.rank() == 3 && x.size(2) == d,
            "TransformerEncoderLayer::forward",
            || {
                format!(
                    "x must be [B, T, num_hiddens] with num_hiddens = {d}, found {:?}",
                    x.shape()
                )
            },
        );
        // ANCHOR: encoder_forward
        let x = self
            .attention_block
            .apply(x, |h| self.self_attn.forward(h, h, h, mask));
        self.ffn_block.apply(&x, |h| self.ffn.forward(h))
        // ANCHOR_END: encoder_forward
    }
}

impl Module for TransformerEncoderLayer {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("self_attn", &self.self_attn),
            self.ffn.list_parameters(),
            prefixed("norm1", &self.attention_block.norm),
            prefixed("norm2", &self.ffn_block.norm),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.self_attn.set_training(training);
        self.ffn.set_training(training);
        self.attention_block.set_training(training);
        self.ffn_block.set_training(training);
    }

    /// Copies a state, by this module's names or PyTorch's (see the type's documentation),
    /// into the parameters; nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| Self::read(reader, self.config))
    }
}
