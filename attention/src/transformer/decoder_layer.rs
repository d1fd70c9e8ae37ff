//! The Transformer's decoder layer: masked self-attention, cross-attention to the
//! encoder's output, then the feed-forward network.

use engine::Tensor;
use engine::nn::{LoadError, Module, StateDict, StateReader, prefixed};

use super::residual::{Residual, from_state};
use super::{PositionWiseFfn, TransformerLayerConfig};
use crate::check;
use crate::mask::Mask;
use crate::multi_head::MultiHeadAttention;
use crate::state::load_through;

/// One layer of the Transformer's decoder, `nn.TransformerDecoderLayer(batch_first=True)`
/// number for number:
///
/// ```text
/// post-norm (norm_first: false)                    pre-norm (norm_first: true)
/// x = norm1(x + dropout1(self_attn(x)))             x = x + dropout1(self_attn(norm1(x)))
/// x = norm2(x + dropout2(cross(x, memory)))         x = x + dropout2(cross(norm2(x), memory))
/// x = norm3(x + dropout3(ffn(x)))                   x = x + dropout3(ffn(norm3(x)))
/// ```
///
/// `memory` is the encoder's output; the layer attends to it as it is (in a pre-norm
/// model the encoder's final LayerNorm has normalised it).
///
/// | argument | shape |
/// |---|---|
/// | `x` | `[B, T, num_hiddens]`: the target so far |
/// | `memory` | `[B, S, num_hiddens]` |
/// | `self_mask` | scores `[B, T, T]`: `Mask::causal()`, combined with padding if any |
/// | `memory_mask` | scores `[B, T, S]`: [`Mask::valid_lens`] of the source lengths |
/// | output | `[B, T, num_hiddens]` |
///
/// As in PyTorch, causal order is not implied: pass [`Mask::causal()`] (PyTorch's
/// `tgt_mask`) for a decoder that must not see the future.
///
/// Parameters: `self_attn.*` and `multihead_attn.*` (each a [`MultiHeadAttention`] with
/// biases, read also under PyTorch's `in_proj_weight`, `in_proj_bias`, `out_proj.*`),
/// `linear1.*`, `linear2.*`, `norm1.*`, `norm2.*`, `norm3.*`.
///
/// ```
/// use attention::transformer::{TransformerDecoderLayer, TransformerLayerConfig};
/// use attention::Mask;
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let layer = TransformerDecoderLayer::new(TransformerLayerConfig {
///     num_hiddens: 8,
///     num_heads: 2,
///     ffn_num_hiddens: 16,
///     ..Default::default()
/// });
/// let (x, memory) = (Tensor::randn([2, 4, 8]), Tensor::randn([2, 6, 8]));
/// let src = Mask::valid_lens(&Tensor::from_vec(vec![6.0, 2.0], [2]));
/// let y = layer.forward(&x, &memory, &Mask::causal(), &src);
/// assert_eq!(y.shape(), &[2, 4, 8]);
/// ```
#[derive(Debug)]
pub struct TransformerDecoderLayer {
    config: TransformerLayerConfig,
    self_attn: MultiHeadAttention,
    cross_attn: MultiHeadAttention,
    ffn: PositionWiseFfn,
    self_block: Residual,
    cross_block: Residual,
    ffn_block: Residual,
}

impl TransformerDecoderLayer {
    /// A layer with fresh weights: PyTorch's `Linear` initialisation, LayerNorms at
    /// weight 1 and bias 0.
    #[track_caller]
    pub fn new(config: TransformerLayerConfig) -> Self {
        config.check("TransformerDecoderLayer::new");
        let c = config;
        TransformerDecoderLayer {
            config,
            self_attn: MultiHeadAttention::new(c.attention()),
            cross_attn: MultiHeadAttention::new(c.attention()),
            ffn: PositionWiseFfn::new(c.ffn()),
            self_block: Residual::new(&c),
            cross_block: Residual::new(&c),
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
            "TransformerDecoderLayer::from_state_dict",
            config,
            state,
            Self::read,
        )
    }

    #[track_caller]
    fn read(reader: &mut StateReader<'_>, c: TransformerLayerConfig) -> Self {
        TransformerDecoderLayer {
            config: c,
            self_attn: MultiHeadAttention::read_at(
                reader,
                "self_attn.",
                c.attention(),
            ),
            cross_attn: MultiHeadAttention::read_at(
                reader,
                "multihead_attn.",
                c.attention(),
            ),
            ffn: PositionWiseFfn::read_at(reader, "", c.ffn()),
            self_block: Residual::read(reader, "norm1", &c),
            cross_block: Residual::read(reader, "norm2", &c),
            ffn_block: Residual::read(reader, "norm3", &c),
        }
    }

    /// The settings the layer was built with.
    pub fn config(&self) -> &TransformerLayerConfig {
        &self.config
    }

    /// The masked self-attention (its weights: `[B, num_heads, T, T]`).
    pub fn self_attention(&self) -> &MultiHeadAttention {
        &self.self_attn
    }

    /// The cross-attention to the encoder's output, PyTorch's `multihead_attn` (its
    /// weights: `[B, num_heads, T, S]`, where each target position looked in the source).
    pub fn cross_attention(&self) -> &MultiHeadAttention {
        &self.cross_attn
    }

    /// Runs the layer over the target `x`, attending to `memory`.
    #[track_caller]
    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        self_mask: &Mask,
        memory_mask: &Mask,
    ) -> Tensor {
        let d = self.config.num_hiddens;
        let module = "TransformerDecoderLayer::forward";
        for (name, t) in [("x", x), ("memory", memory)] {
            check::ensure(t.rank() == 3 && t.size(2) == d, module, || {
                format!(
                    "{name} must be [B, length, num_hiddens] with num_hiddens = {d}, found {:?}",
                    t.shape()
                )
            });
        }
        check::ensure(x.size(0) == memory.size(0), module, || {
            format!(
                "x {:?} and memory {:?} must have the same batch size",
                x.shape(),
                memory.shape()
            )
        });
        // ANCHOR: decoder_forward
        let x = self
            .self_block
            .apply(x, |h| self.self_attn.forward(h, h, h, self_mask));
        let x = self.cross_block.apply(&x, |h| {
            self.cross_attn.forward(h, memory, memory, memory_mask)
        });
        self.ffn_block.apply(&x, |h| self.ffn.forward(h))
        // ANCHOR_END: decoder_forward
    }
}

impl Module for TransformerDecoderLayer {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("self_attn", &self.self_attn),
            prefixed("multihead_attn", &self.cross_attn),
            self.ffn.list_parameters(),
            prefixed("norm1", &self.self_block.norm),
            prefixed("norm2", &self.cross_block.norm),
            prefixed("norm3", &self.ffn_block.norm),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.self_attn.set_training(training);
        self.cross_attn.set_training(training);
        self.ffn.set_training(training);
        self.self_block.set_training(training);
        self.cross_block.set_training(training);
        self.ffn_block.set_training(training);
    }

    /// Copies a state, by this module's names or PyTorch's (see the type's documentation),
    /// into the parameters; nothing changes unless all of it fits.
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_through(self, state, |reader| Self::read(reader, self.config))
    }
}
