//! The position-wise feed-forward network: two linear layers with an activation
//! between, applied to every position on its own.

use engine::Tensor;
use engine::nn::{
    Dropout, DropoutConfig, Linear, LoadError, Module, StateDict, StateReader,
    prefixed,
};

use super::FeedForwardActivation;
use crate::additive::projection;
use crate::check;

/// The settings of a [`PositionWiseFfn`].
///
/// ```
/// use attention::transformer::PositionWiseFfnConfig;
/// let config = PositionWiseFfnConfig { num_hiddens: 8, ffn_num_hiddens: 32, ..Default::default() };
/// assert_eq!(config.dropout, 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PositionWiseFfnConfig {
    /// The size of each position's vector, in and out (no default).
    pub num_hiddens: usize,
    /// The width of the hidden layer (no default; the paper uses 4 × `num_hiddens`).
    pub ffn_num_hiddens: usize,
    /// The activation between the two layers (default ReLU).
    pub activation: FeedForwardActivation,
    /// Dropout on the hidden layer, in training mode (default 0; a
    /// [`TransformerLayerConfig`](super::TransformerLayerConfig) passes its own).
    pub dropout: f32,
}

/// `linear2(dropout(activation(linear1(x))))`: d2l's `PositionWiseFFN`, and the
/// feed-forward half of PyTorch's Transformer layers, whose parameter names it keeps.
/// It acts on the last dimension only, so every position is transformed by the same
/// network and independently of the others: the attention before it is where the
/// positions mix.
///
/// | argument | shape |
/// |---|---|
/// | `x` | `[..., num_hiddens]` |
/// | output | `[..., num_hiddens]` |
///
/// Parameters: `linear1.weight: [ffn_num_hiddens, num_hiddens]`,
/// `linear1.bias: [ffn_num_hiddens]`, `linear2.weight: [num_hiddens, ffn_num_hiddens]`,
/// `linear2.bias: [num_hiddens]`.
///
/// ```
/// use attention::transformer::{PositionWiseFfn, PositionWiseFfnConfig};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let ffn = PositionWiseFfn::new(PositionWiseFfnConfig {
///     num_hiddens: 4,
///     ffn_num_hiddens: 8,
///     ..Default::default()
/// });
/// let x = Tensor::randn([2, 3, 4]);
/// let y = ffn.forward(&x);
/// assert_eq!(y.shape(), &[2, 3, 4]);
/// // Position 1 alone gives the same row: positions do not mix here.
/// let alone = ffn.forward(&x.narrow(1, 1, 1));
/// assert_eq!(alone.to_vec(), y.narrow(1, 1, 1).to_vec());
/// ```
#[derive(Debug)]
pub struct PositionWiseFfn {
    linear1: Linear,
    linear2: Linear,
    activation: FeedForwardActivation,
    dropout: Dropout,
}

impl PositionWiseFfn {
    /// A network initialised like PyTorch's `Linear` layers.
    #[track_caller]
    pub fn new(config: PositionWiseFfnConfig) -> Self {
        Self::check_config("PositionWiseFfn::new", &config);
        let (d, f) = (config.num_hiddens, config.ffn_num_hiddens);
        Self::from_layers(
            Linear::new(projection(d, f, true)),
            Linear::new(projection(f, d, true)),
            config,
        )
    }

    /// A network whose parameters are copies of `linear1.*` and `linear2.*` in `state`;
    /// every problem is reported at once.
    #[track_caller]
    pub fn from_state_dict(
        config: PositionWiseFfnConfig,
        state: &StateDict,
    ) -> Result<Self, LoadError> {
        let mut reader = StateReader::new(state);
        let ffn = Self::read_at(&mut reader, "", config);
        reader.finish()?;
        Ok(ffn)
    }

    /// A network read from `{prefix}linear1.*` and `{prefix}linear2.*`.
    #[track_caller]
    pub(crate) fn read_at(
        reader: &mut StateReader<'_>,
        prefix: &str,
        config: PositionWiseFfnConfig,
    ) -> Self {
        Self::check_config("PositionWiseFfn::from_state_dict", &config);
        let (d, f) = (config.num_hiddens, config.ffn_num_hiddens);
        Self::from_layers(
            reader.linear(&format!("{prefix}linear1"), projection(d, f, true)),
            reader.linear(&format!("{prefix}linear2"), projection(f, d, true)),
            config,
        )
    }

    #[track_caller]
    fn check_config(module: &str, c: &PositionWiseFfnConfig) {
        check::positive(module, "num_hiddens", c.num_hiddens);
        check::positive(module, "ffn_num_hiddens", c.ffn_num_hiddens);
        check::probability(module, "dropout", c.dropout);
    }

    fn from_layers(
        linear1: Linear,
        linear2: Linear,
        c: PositionWiseFfnConfig,
    ) -> Self {
        PositionWiseFfn {
            linear1,
            linear2,
            activation: c.activation,
            dropout: Dropout::new(DropoutConfig { p: c.dropout }),
        }
    }

    /// Transforms every position of `x: [..., num_hiddens]`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let d = self.linear1.in_features();
        check::ensure(
            x.rank() >= 1 && x.size(-1) == d,
            "PositionWiseFfn::forward",
            || {
                format!(
                    "x must be [..., num_hiddens] with num_hiddens = {d}, found {:?}",
                    x.shape()
                )
            },
        );
        // ANCHOR: ffn_forward
        let hidden = self.activation.apply(&self.linear1.forward(x));
        self.linear2.forward(&self.dropout.forward(&hidden))
        // ANCHOR_END: ffn_forward
    }
}

impl Module for PositionWiseFfn {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("linear1", &self.linear1),
            prefixed("linear2", &self.linear2),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.dropout.set_training(training);
    }
}
