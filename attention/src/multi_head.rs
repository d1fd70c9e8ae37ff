//! Multi-head attention: d2l's `MultiHeadAttention`, heads folded into the batch.

use engine::Tensor;
use engine::nn::{Linear, Module, prefixed};

use crate::check;
use crate::dot_product::DotProductAttention;
use crate::mask::Mask;
use crate::masked_softmax::Fill;
use crate::weights::AttentionWeights;

/// Multi-head scaled dot-product attention, exactly d2l's `MultiHeadAttention`: queries,
/// keys and values are projected to `num_hiddens`, split into `num_heads` heads of
/// `num_hiddens / num_heads` features, attended per head, merged, and projected by `W_o`.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, Q, query_size]` |
/// | `keys` | `[B, K, key_size]` |
/// | `values` | `[B, K, value_size]` |
/// | `mask` | see [`Mask`]; per-batch masks are repeated per head |
/// | output | `[B, Q, num_hiddens]` |
/// | [`last_attention_weights`](AttentionWeights::last_attention_weights) | `[B, num_heads, Q, K]` |
///
/// Parameters: `W_q: [num_hiddens, query_size]`, `W_k: [num_hiddens, key_size]`,
/// `W_v: [num_hiddens, value_size]`, `W_o: [num_hiddens, num_hiddens]`, each with a bias
/// when `bias` is true.
///
/// **Matching `torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True)`:** with all
/// sizes equal to `E`, its `in_proj_weight` is `W_q`, `W_k`, `W_v` stacked along dimension 0
/// (`[3E, E]`) and its `out_proj.weight` is `W_o`. Its `key_padding_mask` is `True` where a
/// key is *ignored*, the opposite of [`Mask::Keep`]; its returned weights are averaged over
/// heads unless `average_attn_weights=False`.
///
/// ```
/// use attention::{MultiHeadAttention, Mask};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let attention = MultiHeadAttention::new(100, 5, 0.0, false);
/// let x = Tensor::randn(&[2, 4, 100]);
/// let y = Tensor::randn(&[2, 6, 100]);
/// let lens = Mask::ValidLens(Tensor::from_vec(vec![3.0, 2.0], &[2]));
/// assert_eq!(attention.forward(&x, &y, &y, &lens).shape(), &[2, 4, 100]);
/// ```
#[derive(Debug)]
pub struct MultiHeadAttention {
    num_heads: usize,
    attention: DotProductAttention,
    w_q: Linear,
    w_k: Linear,
    w_v: Linear,
    w_o: Linear,
}

impl MultiHeadAttention {
    /// Queries, keys and values all of size `num_hiddens` (the usual case).
    #[track_caller]
    pub fn new(num_hiddens: usize, num_heads: usize, dropout: f32, bias: bool) -> Self {
        Self::with_sizes(
            num_hiddens,
            num_hiddens,
            num_hiddens,
            num_hiddens,
            num_heads,
            dropout,
            bias,
        )
    }

    /// Queries, keys and values of their own sizes, projected to `num_hiddens`.
    #[track_caller]
    pub fn with_sizes(
        query_size: usize,
        key_size: usize,
        value_size: usize,
        num_hiddens: usize,
        num_heads: usize,
        dropout: f32,
        bias: bool,
    ) -> Self {
        check::heads_divide(
            "MultiHeadAttention::new",
            "num_hiddens",
            num_hiddens,
            num_heads,
        );
        Self::from_linears(
            [
                Linear::new(query_size, num_hiddens, bias),
                Linear::new(key_size, num_hiddens, bias),
                Linear::new(value_size, num_hiddens, bias),
                Linear::new(num_hiddens, num_hiddens, bias),
            ],
            num_heads,
            dropout,
        )
    }

    /// A module from given projections `[W_q, W_k, W_v, W_o]` (to reproduce a PyTorch model).
    #[track_caller]
    pub fn from_linears(linears: [Linear; 4], num_heads: usize, dropout: f32) -> Self {
        let [w_q, w_k, w_v, w_o] = linears;
        let h = w_q.out_features();
        check::heads_divide("MultiHeadAttention", "num_hiddens", h, num_heads);
        assert!(
            w_k.out_features() == h && w_v.out_features() == h && w_o.in_features() == h,
            "MultiHeadAttention: W_q, W_k and W_v must project to one size num_hiddens that W_o reads, found W_q {:?}, W_k {:?}, W_v {:?}, W_o {:?}",
            w_q.weight().shape(),
            w_k.weight().shape(),
            w_v.weight().shape(),
            w_o.weight().shape()
        );
        MultiHeadAttention {
            num_heads,
            attention: DotProductAttention::new(dropout),
            w_q,
            w_k,
            w_v,
            w_o,
        }
    }

    /// The same module with another fill policy ([`Fill::D2l`] reproduces d2l exactly).
    pub fn with_fill(mut self, fill: Fill) -> Self {
        self.attention = self.attention.with_fill(fill);
        self
    }

    /// The number of heads.
    pub fn num_heads(&self) -> usize {
        self.num_heads
    }

    /// `[B, T, num_hiddens] → [B·H, T, num_hiddens / H]`: head `h` of example `b` becomes
    /// batch row `b·H + h`.
    #[track_caller]
    pub fn transpose_qkv(&self, x: &Tensor) -> Tensor {
        let h = self.num_heads;
        assert!(
            x.rank() == 3 && x.shape()[2] % h == 0,
            "MultiHeadAttention::transpose_qkv: x must be [B, T, num_hiddens] with num_hiddens divisible by num_heads ({h}), found {:?}",
            x.shape()
        );
        let (b, t, d) = (x.shape()[0], x.shape()[1], x.shape()[2] / h);
        x.reshape([b, t, h, d])
            .permute([0, 2, 1, 3])
            .reshape([b * h, t, d])
    }

    /// The inverse of [`transpose_qkv`](Self::transpose_qkv): `[B·H, T, d] → [B, T, H·d]`.
    #[track_caller]
    pub fn transpose_output(&self, x: &Tensor) -> Tensor {
        let h = self.num_heads;
        assert!(
            x.rank() == 3 && x.shape()[0] % h == 0,
            "MultiHeadAttention::transpose_output: x must be [B·num_heads, T, d] with num_heads = {h}, found {:?}",
            x.shape()
        );
        let (b, t, d) = (x.shape()[0] / h, x.shape()[1], x.shape()[2]);
        x.reshape([b, h, t, d])
            .permute([0, 2, 1, 3])
            .reshape([b, t, h * d])
    }

    /// Attends every query to the keys in every head.
    #[track_caller]
    pub fn forward(&self, queries: &Tensor, keys: &Tensor, values: &Tensor, mask: &Mask) -> Tensor {
        let module = "MultiHeadAttention";
        let expected = check::Expected {
            query_rank: 3,
            query_size: self.w_q.in_features(),
            key_size: self.w_k.in_features(),
            value_size: Some(self.w_v.in_features()),
        };
        check::inputs(module, queries, keys, values, expected);
        // Check the mask against the scores as the caller sees them, [B, Q, K], before the
        // heads are folded into the batch.
        mask.keep_for(
            module,
            &[queries.shape()[0], queries.shape()[1], keys.shape()[1]],
        );
        let q = self.transpose_qkv(&self.w_q.forward(queries));
        let k = self.transpose_qkv(&self.w_k.forward(keys));
        let v = self.transpose_qkv(&self.w_v.forward(values));
        let output = self
            .attention
            .forward(&q, &k, &v, &mask.repeat_for_heads(self.num_heads));
        self.w_o.forward(&self.transpose_output(&output))
    }
}

impl Module for MultiHeadAttention {
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        [
            prefixed("W_q", &self.w_q),
            prefixed("W_k", &self.w_k),
            prefixed("W_v", &self.w_v),
            prefixed("W_o", &self.w_o),
        ]
        .concat()
    }

    fn set_training(&mut self, training: bool) {
        self.attention.set_training(training);
    }
}

impl AttentionWeights for MultiHeadAttention {
    /// `[B, num_heads, Q, K]`.
    fn last_attention_weights(&self) -> Option<Tensor> {
        let w = self.attention.last_attention_weights()?;
        let h = self.num_heads;
        Some(w.reshape([w.shape()[0] / h, h, w.shape()[1], w.shape()[2]]))
    }
}
