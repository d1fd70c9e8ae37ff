//! The settings the Transformer's layers share.

use crate::check;

/// The activation between the feed-forward network's two layers: PyTorch's
/// `activation="relu"` or `"gelu"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FeedForwardActivation {
    /// `max(x, 0)`: the original paper's, and PyTorch's default.
    #[default]
    Relu,
    /// The Gaussian error linear unit in its exact (`erf`) form, PyTorch's `"gelu"`;
    /// GPT-2 uses it.
    Gelu,
}

impl FeedForwardActivation {
    /// The function, applied element-wise with the engine's own ops.
    pub fn apply(self, x: &engine::Tensor) -> engine::Tensor {
        match self {
            FeedForwardActivation::Relu => x.relu(),
            FeedForwardActivation::Gelu => x.gelu(engine::GeluApprox::Erf),
        }
    }
}

/// The settings of a Transformer layer ([`TransformerEncoderLayer`],
/// [`TransformerDecoderLayer`], [`CausalTransformerLayer`]). PyTorch's
/// `nn.TransformerEncoderLayer` and `nn.TransformerDecoderLayer` take the same
/// arguments, and so do these; d2l's `TransformerEncoderBlock(num_hiddens,
/// ffn_num_hiddens, num_heads, dropout)` gives three of the names.
///
/// | here | PyTorch | default |
/// |---|---|---|
/// | `num_hiddens` | `d_model` | none: must be set |
/// | `num_heads` | `nhead` | none: must be set |
/// | `ffn_num_hiddens` | `dim_feedforward` | none (PyTorch: 2048; the paper: 4 × `d_model`) |
/// | `dropout` | `dropout` | 0.1, as in PyTorch |
/// | `activation` | `activation` | [`FeedForwardActivation::Relu`] |
/// | `layer_norm_eps` | `layer_norm_eps` | `1e-5` |
/// | `norm_first` | `norm_first` | `false`: post-norm, the original paper's |
///
/// Every linear layer, attention projection and LayerNorm has a bias, as with PyTorch's
/// default `bias=True`; PyTorch's `bias=False` is not offered.
///
/// [`TransformerEncoderLayer`]: crate::transformer::TransformerEncoderLayer
/// [`TransformerDecoderLayer`]: crate::transformer::TransformerDecoderLayer
/// [`CausalTransformerLayer`]: crate::transformer::CausalTransformerLayer
///
/// ```
/// use attention::transformer::TransformerLayerConfig;
/// let config = TransformerLayerConfig {
///     num_hiddens: 32,
///     num_heads: 4,
///     ffn_num_hiddens: 64,
///     ..Default::default()
/// };
/// assert_eq!((config.dropout, config.norm_first), (0.1, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransformerLayerConfig {
    /// The model width: the size of every token's vector in and out (no default).
    pub num_hiddens: usize,
    /// The number of attention heads, which must divide `num_hiddens` (no default).
    pub num_heads: usize,
    /// The width of the feed-forward network's hidden layer (no default).
    pub ffn_num_hiddens: usize,
    /// The dropout probability, in training mode, at every place PyTorch's layers
    /// drop: the attention weights, the feed-forward network's hidden layer, and each
    /// sublayer's output before the residual sum (default 0.1).
    pub dropout: f32,
    /// The feed-forward network's activation (default ReLU).
    pub activation: FeedForwardActivation,
    /// The `eps` of every LayerNorm (default `1e-5`).
    pub layer_norm_eps: f32,
    /// `false` (the default): post-norm, `x = norm(x + sublayer(x))`, as in the
    /// original paper. `true`: pre-norm, `x = x + sublayer(norm(x))`, as in GPT-2; the
    /// residual path then carries the input unchanged through every layer.
    pub norm_first: bool,
}

impl Default for TransformerLayerConfig {
    fn default() -> Self {
        TransformerLayerConfig {
            num_hiddens: 0,
            num_heads: 0,
            ffn_num_hiddens: 0,
            dropout: 0.1,
            activation: FeedForwardActivation::Relu,
            layer_norm_eps: 1e-5,
            norm_first: false,
        }
    }
}

impl TransformerLayerConfig {
    /// Checks every field, panicking with `module: …` at the caller's line.
    #[track_caller]
    pub(crate) fn check(&self, module: &str) {
        check::heads_divide(module, "num_hiddens", self.num_hiddens, self.num_heads);
        check::positive(module, "ffn_num_hiddens", self.ffn_num_hiddens);
        check::probability(module, "dropout", self.dropout);
        check::ensure(
            self.layer_norm_eps.is_finite() && self.layer_norm_eps > 0.0,
            module,
            || {
                format!(
                    "layer_norm_eps must be finite and > 0, found {}",
                    self.layer_norm_eps
                )
            },
        );
    }

    /// The settings of the feed-forward network these give.
    pub(crate) fn ffn(&self) -> super::PositionWiseFfnConfig {
        super::PositionWiseFfnConfig {
            num_hiddens: self.num_hiddens,
            ffn_num_hiddens: self.ffn_num_hiddens,
            activation: self.activation,
            dropout: self.dropout,
        }
    }

    /// The settings of a multi-head attention these give (PyTorch passes the layer's
    /// dropout to its attention).
    pub(crate) fn attention(&self) -> crate::MultiHeadAttentionConfig {
        crate::MultiHeadAttentionConfig {
            num_hiddens: self.num_hiddens,
            num_heads: self.num_heads,
            dropout: self.dropout,
            bias: true,
            ..Default::default()
        }
    }
}
