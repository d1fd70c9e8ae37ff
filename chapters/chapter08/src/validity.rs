//! Why a cache is allowed at all: in causal attention the output at a position does
//! not depend on any later token, shown numerically, and the attention weights
//! computed both ways, drawn side by side.

use attention::prelude::*;

use crate::decoding::max_abs_diff;

// ANCHOR: change_the_future
/// Runs `layer` on `x: [B, T, num_hiddens]`, and again on a copy whose tokens
/// `from..T` are replaced by `replacement: [B, T − from, num_hiddens]`. Returns the
/// largest change of the outputs at the positions before `from`, and at `from` and
/// after.
///
/// Causal attention promises that the first number is zero: the output at position
/// `t` is computed from tokens `0..=t` only.
pub fn change_the_future(
    layer: &CausalSelfAttention,
    x: &Tensor,
    from: usize,
    replacement: &Tensor,
) -> (f32, f32) {
    let (b, t, d) = (x.size(0), x.size(1), x.size(2));
    assert_eq!(replacement.shape(), &[b, t - from, d]);
    let changed = Tensor::concat(&[x.narrow(1, 0, from), replacement.clone()], 1);
    let (before, after) = no_grad(|| {
        (
            layer.forward(x, &Mask::none()),
            layer.forward(&changed, &Mask::none()),
        )
    });
    let part = |y: &Tensor, start, len| y.narrow(1, start, len);
    (
        max_abs_diff(&part(&before, 0, from), &part(&after, 0, from)),
        max_abs_diff(
            &part(&before, from, t - from),
            &part(&after, from, t - from),
        ),
    )
}
// ANCHOR_END: change_the_future

/// Head 0's attention weights for `x: [1, T, num_hiddens]`, computed two ways, each
/// as a `T × T` matrix (row = query position, column = key position), row-major:
/// - by `forward` over the whole sequence (zeros above the diagonal: computed, then
///   masked);
/// - by `prefill` of the first `prompt` tokens and one `step` per token after, where
///   row `t` has only the `t + 1` keys that exist when token `t` is decoded; the
///   cells after them were never computed and are NaN.
pub fn weights_two_ways(
    layer: &CausalSelfAttention,
    x: &Tensor,
    prompt: usize,
) -> [Vec<f32>; 2] {
    assert_eq!(x.size(0), 1, "weights_two_ways: one sequence");
    let t = x.size(1);
    let head0 = |w: Tensor| {
        // [1, H, rows, keys] -> head 0, [rows, keys]
        let (rows, keys) = (w.size(2), w.size(3));
        (w.narrow(1, 0, 1).reshape([rows, keys]).to_vec(), keys)
    };
    let weights = |layer: &CausalSelfAttention| {
        layer
            .last_attention_weights()
            .expect("the layer has run once")
    };
    let _ = no_grad(|| layer.forward(x, &Mask::none()));
    let (full, _) = head0(weights(layer));

    let mut cached = vec![f32::NAN; t * t];
    let mut cache = KvCache::new(t);
    no_grad(|| {
        layer.prefill(&x.narrow(1, 0, prompt), &mut cache, &Mask::none());
        let (w, keys) = head0(weights(layer));
        for row in 0..prompt {
            cached[row * t..row * t + keys]
                .copy_from_slice(&w[row * keys..(row + 1) * keys]);
        }
        for row in prompt..t {
            layer.step(&x.narrow(1, row, 1), &mut cache, &Mask::none());
            let (w, keys) = head0(weights(layer)); // keys = row + 1
            cached[row * t..row * t + keys].copy_from_slice(&w);
        }
    });
    [full, cached]
}

/// The heatmap of [`weights_two_ways`]: the full computation on the left, the cached
/// one on the right, where grey cells are the scores decoding never computes.
pub fn weights_heatmap(
    layer: &CausalSelfAttention,
    x: &Tensor,
    prompt: usize,
) -> String {
    let [full, cached] = weights_two_ways(layer, x, prompt);
    let labels: Vec<String> = (0..x.size(1)).map(|i| i.to_string()).collect();
    figures::heatmap(&figures::Heatmap {
        title: "causal attention weights (head 0): the same numbers, less work",
        row_desc: "query position",
        col_desc: "key position",
        panels: &[
            figures::Panel {
                title: "forward: whole sequence".into(),
                values: &full,
                row_labels: &labels,
                col_labels: &labels,
            },
            figures::Panel {
                title: format!("prefill {prompt}, then steps (grey: never computed)"),
                values: &cached,
                row_labels: &labels,
                col_labels: &labels,
            },
        ],
        range: Some((0.0, 1.0)),
    })
}
