//! Exact attention in blocks for long sequences: the engine's `blocked_attention` op
//! behind the library's masks and options, and the choice between it and the full
//! computation that modules make ([`AttentionPath`]).

use engine::{BlockedAttentionOptions, DEFAULT_ATTENTION_BLOCK, Tensor};

use crate::check;
use crate::dot_product::SdpaOptions;
use crate::mask::Mask;
use crate::masked_softmax::Fill;

/// From this many keys, [`AttentionPath::Auto`] computes attention in blocks.
///
/// Measured with `cargo run --release -p benchmarks --bin blocked_crossover` (one thread,
/// batch 8 × 8 heads of 32 features, forward and backward; one run on a 2-core AMD EPYC
/// Zen 4 machine, AVX-512 path): the blocked path took 1.13 times the full path's time at
/// 32 keys, about the same at 64 (0.97 to 1.27 over two runs), 0.86 at 128, 0.77 at 256,
/// 0.28 at 1024 and 0.21 at 2048 (it never writes the `[Q, K]` weights to memory, and
/// its advantage grows with the length). Its memory is less at every length: 5 MiB
/// against 22 MiB at 128 keys, 40 against 1,296 at 1024.
pub const BLOCKED_FROM_KEYS: usize = 128;

/// How a scaled dot-product attention module computes `softmax(Q Kᵀ · scale) V`.
///
/// | variant | what runs | the weights for [`last_attention_weights`](crate::AttentionWeights::last_attention_weights) |
/// |---|---|---|
/// | `Auto` (the default) | `Blocked` with [`DEFAULT_ATTENTION_BLOCK`] keys per block from [`BLOCKED_FROM_KEYS`] keys on, where it can (below); `Full` otherwise | as below |
/// | `Full` | scores, a masked softmax and a product: the `[B, Q, K]` weights are a tensor of the graph | kept from the forward pass |
/// | `Blocked { block }` | the engine's [`blocked_attention`](Tensor::blocked_attention): the same numbers to rounding, memory linear in the keys | recomputed from the queries and keys when asked for |
///
/// The blocked path computes the safe fill ([`Fill::Safe`]) and has no dropout on the
/// weights: `Auto` takes it only with that fill, with dropout off (a dropout of 0, or
/// evaluation mode), on the CPU, and where causal order does not ask for more queries than
/// keys; `Blocked` stops with a message where those do not hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttentionPath {
    /// The blocked path from [`BLOCKED_FROM_KEYS`] keys on, where it applies.
    #[default]
    Auto,
    /// Always the full computation.
    Full,
    /// Always the blocked computation, `block` keys at a time.
    Blocked {
        /// Keys per block, at least 1.
        block: usize,
    },
}

impl AttentionPath {
    /// The block size to attend with, or `None` for the full computation, for `keys` keys
    /// under `fill`, with dropout on the weights active or not. `Blocked` with a fill or a
    /// dropout it cannot compute stops with a message naming `module`.
    #[track_caller]
    pub(crate) fn block_for(
        self,
        module: &str,
        (queries, keys): (&Tensor, &Tensor),
        mask: &Mask,
        fill: Fill,
        dropout_active: bool,
    ) -> Option<usize> {
        let (q, k) = (queries.size(-2), keys.size(-2));
        let causal_fits = !mask.is_causal_from_last() || k >= q;
        match self {
            AttentionPath::Full => None,
            AttentionPath::Auto => (k >= BLOCKED_FROM_KEYS
                && fill == Fill::Safe
                && !dropout_active
                && queries.device().is_cpu()
                && causal_fits)
                .then_some(DEFAULT_ATTENTION_BLOCK),
            AttentionPath::Blocked { block } => {
                check::positive(module, "AttentionPath::Blocked's block", block);
                check::ensure(fill == Fill::Safe, module, || {
                    format!(
                        "AttentionPath::Blocked computes the safe fill only, and the config asks for {fill:?}; hint: use AttentionPath::Full (or Auto) with this fill"
                    )
                });
                check::ensure(!dropout_active, module, || {
                    "AttentionPath::Blocked has no dropout on the attention weights, and dropout is on (p > 0 in training mode); hint: set dropout to 0, call eval(), or use AttentionPath::Full".into()
                });
                Some(block)
            }
        }
    }
}

/// Exact scaled dot-product attention computed in blocks of `block` keys, with the
/// library's masks: [`scaled_dot_product_attention_with`](crate::scaled_dot_product_attention_with)'s
/// output, to rounding, in memory linear in the number of keys (see
/// [`Tensor::blocked_attention`]). Returns the output only: the weights are never built.
///
/// `options` are those of `scaled_dot_product_attention_with`, with two limits: the fill
/// must be [`Fill::Safe`] (what the blocked computation gives: hidden keys left out, a
/// query that sees no key gets zeros) and `dropout_p` must be 0.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[..., Q, d]` |
/// | `keys` | `[..., K, d]` |
/// | `values` | `[..., K, dv]` |
/// | output | `[..., Q, dv]` |
///
/// Leading dimensions broadcast, as in `scaled_dot_product_attention_with`.
///
/// ```
/// use attention::{Mask, SdpaOptions, blocked_attention, scaled_dot_product_attention_with};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let (q, k, v) = (Tensor::randn([2, 5, 4]), Tensor::randn([2, 9, 4]), Tensor::randn([2, 9, 3]));
/// let options = SdpaOptions { mask: Mask::causal(), ..Default::default() };
/// let blocked = blocked_attention(&q, &k, &v, &options, 4); // 9 keys in blocks of 4
/// let (full, _) = scaled_dot_product_attention_with(&q, &k, &v, &options);
/// for (a, b) in blocked.to_vec().iter().zip(full.to_vec()) {
///     assert!((a - b).abs() < 1e-5);
/// }
/// ```
#[track_caller]
pub fn blocked_attention(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    options: &SdpaOptions,
    block: usize,
) -> Tensor {
    let module = "blocked_attention";
    check::scale(module, options.scale);
    check::ensure(options.fill == Fill::Safe, module, || {
        format!(
            "computes the safe fill only, found {:?}; hint: scaled_dot_product_attention_with computes the other fills",
            options.fill
        )
    });
    check::ensure(options.dropout_p == 0.0, module, || {
        format!(
            "has no dropout on the weights, found dropout_p = {}; hint: scaled_dot_product_attention_with has it",
            options.dropout_p
        )
    });
    let causal;
    let mask = if options.is_causal {
        causal = &options.mask & &Mask::causal_with_offset(0);
        &causal
    } else {
        &options.mask
    };
    attend_in_blocks(module, queries, keys, values, mask, options.scale, block)
}

/// The blocked computation behind the modules and [`blocked_attention`]: checks the
/// arguments as the full computation does, broadcasts the leading dimensions, and turns
/// the mask into the op's options.
#[track_caller]
pub(crate) fn attend_in_blocks(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    mask: &Mask,
    scale: Option<f32>,
    block: usize,
) -> Tensor {
    crate::dot_product::check_qkv(module, queries, keys, values);
    check::positive(module, "the block size", block);
    let leading = |t: &Tensor| t.shape()[..t.rank() - 2].to_vec();
    let batch = [leading(queries), leading(keys), leading(values)]
        .iter()
        .try_fold(Vec::new(), |acc, l| {
            engine::shape::broadcast_shapes(&acc, l)
        })
        .expect("checked to broadcast by check_qkv");
    let widen = |t: &Tensor| {
        if leading(t) == batch {
            t.clone()
        } else {
            let mut shape = batch.clone();
            shape.extend_from_slice(&t.shape()[t.rank() - 2..]);
            t.expand(shape)
        }
    };
    let (q, k, v) = (widen(queries), widen(keys), widen(values));
    let mut scores = batch.clone();
    scores.extend([q.size(-2), k.size(-2)]);
    let parts = mask.blocked_parts(module, &scores);
    let options = BlockedAttentionOptions {
        scale,
        block,
        causal_offset: parts.causal_offset,
        lengths: parts.lengths,
        keep: parts.keep,
    };
    q.blocked_attention(&k, &v, &options)
}
