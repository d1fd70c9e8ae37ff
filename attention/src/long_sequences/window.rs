//! Local window attention: each position attends to the positions at most `w` away, in
//! `O(n·w)` time and memory (Longformer's sliding chunks).

use engine::Tensor;

use super::{
    Sizes, chunks_with_neighbours, pad_positions, scale_or_default,
    self_attention_sizes,
};
use crate::mask::Mask;
use crate::masked_softmax::{Fill, masked_softmax_in};

/// Which keys a query sees in [`local_window_attention_with`]: the band of half-width
/// `window` around it, or only its side of the band when `causal`.
///
/// | setting | query `i` sees key `j` when |
/// |---|---|
/// | `causal: false` (default) | `i − window ≤ j ≤ i + window`: `2·window + 1` keys away from the ends |
/// | `causal: true` | `i − window ≤ j ≤ i`: itself and the `window` keys before it |
///
/// `window: 0` lets each position see only itself. Near the ends of the sequence the band
/// is cut off, so the first and last queries see fewer keys.
///
/// ```
/// use attention::LocalWindow;
///
/// let band = LocalWindow { window: 1, ..Default::default() };
/// assert!(band.sees(3, 2) && band.sees(3, 4) && !band.sees(3, 5));
/// assert_eq!(band.keep_mask(4).to_vec(), vec![
///     1.0, 1.0, 0.0, 0.0,
///     1.0, 1.0, 1.0, 0.0,
///     0.0, 1.0, 1.0, 1.0,
///     0.0, 0.0, 1.0, 1.0,
/// ]);
/// let past = LocalWindow { window: 1, causal: true, ..Default::default() };
/// assert!(past.sees(3, 2) && !past.sees(3, 4));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalWindow {
    /// How far a query looks on each side, `w` (default 0: only itself).
    pub window: usize,
    /// Only keys at or before the query, as a decoder needs (default `false`).
    pub causal: bool,
    /// The factor the scores are multiplied by; `None` (the default) uses `1/√d`. A given
    /// scale must be finite and greater than 0.
    pub scale: Option<f32>,
}

impl LocalWindow {
    /// True when query `i` may attend to key `j` (the table above).
    pub fn sees(&self, i: usize, j: usize) -> bool {
        if self.causal {
            j <= i && i - j <= self.window
        } else {
            i.abs_diff(j) <= self.window
        }
    }

    /// The whole pattern as an `[n, n]` tensor of 0s and 1s, row `i` holding 1 at the keys
    /// query `i` sees: to plot, or to give to
    /// [`scaled_dot_product_attention_with`](crate::scaled_dot_product_attention_with) as
    /// `Mask::keep(&mask.unsqueeze(0))` for the same numbers the slow way. This *is* the
    /// `n²` matrix the attention itself avoids; keep `n` small.
    pub fn keep_mask(&self, n: usize) -> Tensor {
        let keep = (0..n)
            .flat_map(|i| (0..n).map(move |j| f32::from(u8::from(self.sees(i, j)))))
            .collect();
        Tensor::from_vec(keep, [n, n])
    }
}

/// Self-attention in which query `i` sees only the keys `j` with `i − window ≤ j ≤ i +
/// window`, computed in `O(n · window)` time and memory, without an `[n, n]` matrix.
/// [`local_window_attention_with`] takes the causal form and another scale.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[B, n, d]` |
/// | `keys` | `[B, n, d]` |
/// | `values` | `[B, n, dv]` |
/// | output | `[B, n, dv]` |
///
/// The numbers are those of full attention under the band mask,
/// `scaled_dot_product_attention_with(q, k, v, &SdpaOptions { mask:
/// Mask::keep(&LocalWindow { window, .. }.keep_mask(n).unsqueeze(0)), .. })`, gradients
/// included.
///
/// ```
/// use attention::{local_window_attention, scaled_dot_product_attention_with};
/// use attention::{LocalWindow, Mask, SdpaOptions};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let (q, k, v) = (Tensor::randn([2, 10, 4]), Tensor::randn([2, 10, 4]), Tensor::randn([2, 10, 3]));
/// let out = local_window_attention(&q, &k, &v, 2);
/// assert_eq!(out.shape(), &[2, 10, 3]);
///
/// // The same as full attention with the band as a mask (which builds [10, 10] scores).
/// let band = LocalWindow { window: 2, ..Default::default() }.keep_mask(10).unsqueeze(0);
/// let options = SdpaOptions { mask: Mask::keep(&band), ..Default::default() };
/// let (full, _) = scaled_dot_product_attention_with(&q, &k, &v, &options);
/// let diff = (&out - &full).abs().max().item();
/// assert!(diff < 1e-5);
/// ```
#[track_caller]
pub fn local_window_attention(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    window: usize,
) -> Tensor {
    let band = LocalWindow {
        window,
        ..Default::default()
    };
    window_attention("local_window_attention", queries, keys, values, &band)
}

/// [`local_window_attention`] with its settings named: the half-width, causal order, and
/// the scale (see [`LocalWindow`]). Shapes are those of [`local_window_attention`].
///
/// **How.** The sequence is cut into chunks of `s = min(window, n)` positions (at least 1;
/// the last chunk padded with zeros when `s` does not divide `n`). The keys a query may
/// see all lie in its own chunk and the one on each side, so each chunk's `s` queries are
/// compared with those `3s` keys at once: one batched product `[B, n/s, s, d] × [B, n/s,
/// 3s, d]ᵀ → [B, n/s, s, 3s]`, `3·n·s` scores in all where full attention has `n²`. A band
/// mask then keeps the keys within the window (and drops the padding), the softmax runs
/// over each row of `3s` with masked keys left out ([`Fill::Safe`]), and the weights
/// multiply the same `3s` values. The causal form needs only the chunk before, `2s` keys.
///
/// ```
/// use attention::{local_window_attention_with, LocalWindow};
/// use engine::Tensor;
///
/// // Values 0, 1, …, 5 with equal scores: each position averages the values it sees.
/// let (x, v) = (Tensor::zeros([1, 6, 2]), Tensor::arange(6).reshape([1, 6, 1]));
/// let past = LocalWindow { window: 1, causal: true, ..Default::default() };
/// let out = local_window_attention_with(&x, &x, &v, &past);
/// assert_eq!(out.to_vec(), vec![0.0, 0.5, 1.5, 2.5, 3.5, 4.5]);
/// ```
#[track_caller]
pub fn local_window_attention_with(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    window: &LocalWindow,
) -> Tensor {
    window_attention("local_window_attention_with", queries, keys, values, window)
}

#[track_caller]
fn window_attention(
    module: &str,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    band: &LocalWindow,
) -> Tensor {
    let Sizes { batch, n, d, dv } =
        self_attention_sizes(module, queries, keys, values);
    let scale = scale_or_default(module, band.scale, d);
    if n == 0 {
        return values.narrow(1, 0, 0);
    }
    // Chunks of at least `window` positions, so that every key a query sees is in its own
    // chunk or a neighbour; no larger than the sequence, which one chunk then holds.
    let size = band.window.min(n).max(1);
    let chunks = n.div_ceil(size);
    let len = chunks * size;
    let q = pad_positions(queries, len).reshape([batch, chunks, size, d]);
    let after = !band.causal;
    let k = chunks_with_neighbours(&pad_positions(keys, len), size, true, after);
    let v = chunks_with_neighbours(&pad_positions(values, len), size, true, after);
    let width = k.shape()[2];
    let scores = q.matmul_t(&k) * scale; // [B, chunks, size, width]
    let keep = band_keep(band, n, chunks, size, width);
    let weights = masked_softmax_in(module, &scores, &Mask::keep(&keep), Fill::Safe);
    let out = weights.matmul(&v).reshape([batch, len, dv]);
    if len == n { out } else { out.narrow(1, 0, n) }
}

/// The band as `[1, chunks, size, width]`: row `r` of chunk `c` is query `c·size + r`, slot
/// `t` is key `(c − 1)·size + t`; kept when the key is a real position the query sees.
fn band_keep(
    band: &LocalWindow,
    n: usize,
    chunks: usize,
    size: usize,
    width: usize,
) -> Tensor {
    let mut keep = Vec::with_capacity(chunks * size * width);
    for c in 0..chunks {
        for r in 0..size {
            let i = c * size + r;
            for t in 0..width {
                // Key position (c − 1)·size + t, which is before the start when negative.
                let j = (c * size + t).checked_sub(size);
                let seen = j.is_some_and(|j| j < n && band.sees(i, j));
                keep.push(f32::from(u8::from(seen)));
            }
        }
    }
    Tensor::from_vec(keep, [1, chunks, size, width])
}
