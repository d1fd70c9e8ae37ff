//! The chapter's small token examples: a right-padded batch for an encoder, a
//! left-padded sequence for a decoder, their attention scores, and the figures drawn
//! from them.

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;

// ANCHOR: vocab
/// The toy vocabulary; token id `i` is `VOCAB[i]`, and id 0 is the padding token.
pub const VOCAB: [&str; 6] = ["<pad>", "the", "cat", "sat", "a", "dog"];

/// The id of the padding token.
pub const PAD: f32 = 0.0;

/// Two sentences of different lengths padded on the right to one length, 4:
/// `the cat sat <pad>` (3 real tokens) and `a dog <pad> <pad>` (2). Shape `[2, 4]`.
pub fn padded_batch() -> Tensor {
    Tensor::from_vec(vec![1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0, 0.0], [2, 4])
}
// ANCHOR_END: vocab

/// A decoder's batch padded on the *left*, as batched generation pads it so that
/// every sequence ends at the last position: `<pad> <pad> the cat sat`, shape `[1,
/// 5]`.
pub fn left_padded_sequence() -> Tensor {
    Tensor::from_vec(vec![0.0, 0.0, 1.0, 2.0, 3.0], [1, 5])
}

/// The tokens of a row of ids, for axis labels.
pub fn tokens(ids: &[f32]) -> Vec<String> {
    ids.iter().map(|&i| VOCAB[i as usize].to_string()).collect()
}

// ANCHOR: token_scores
/// Self-attention scores of a batch of token ids `[B, T]`: each token is looked up in
/// an embedding `table: [vocab, d]`, and every token is scored against every other by
/// the scaled dot product of their embeddings, `x xᵀ / √d`.
///
/// | tensor | shape |
/// |---|---|
/// | `ids` | `[B, T]` |
/// | embeddings `x` | `[B, T, d]` |
/// | result | `[B, T, T]` (queries × keys) |
pub fn token_scores(ids: &Tensor, table: &Tensor) -> Tensor {
    let x = Tensor::embedding(ids, table); //                   [B, T, d]
    let d = table.size(1) as f32;
    x.bmm(&x.transpose(1, 2)) / d.sqrt() //                    [B, T, T]
}
// ANCHOR_END: token_scores

/// The embedding table every example of the chapter uses: `[6, 8]`, drawn from seed
/// 0.
pub fn embedding_table() -> Tensor {
    engine::manual_seed(0);
    Tensor::randn([VOCAB.len(), 8])
}

/// The padded batch's scores `[2, 4, 4]`, from [`embedding_table`].
pub fn padded_batch_scores() -> Tensor {
    token_scores(&padded_batch(), &embedding_table())
}

/// The valid lengths of [`padded_batch`]: 3 and 2 real tokens.
pub fn padded_batch_lens() -> Tensor {
    Tensor::from_vec(vec![3.0, 2.0], [2])
}

// ANCHOR: decoder_mask
/// The mask of a decoder on [`left_padded_sequence`]: causal order *and* no padding
/// key. The queries at the two padding positions may see only keys 0..=q, all
/// padding: their rows are fully masked.
pub fn decoder_mask() -> Mask {
    // "<pad> <pad> the cat sat": 1 marks a real token (exercise 2 derives it from the
    // ids).
    let real = Tensor::from_vec(vec![0.0, 0.0, 1.0, 1.0, 1.0], [1, 5]); // [B, K]
    Mask::causal() & Mask::key_padding(&real)
}
// ANCHOR_END: decoder_mask

/// The left-padded sequence's weights under [`decoder_mask`] with the given fill,
/// `[1, 5, 5]`.
pub fn decoder_weights(fill: Fill) -> Tensor {
    let scores = token_scores(&left_padded_sequence(), &embedding_table());
    masked_softmax(&scores, &decoder_mask(), fill)
}

/// Figure `ch04-valid-lens.svg`: the padded batch's weights under its valid lengths,
/// one panel per sentence, queries down and keys across, labelled with the tokens.
pub fn valid_lens_figure() -> String {
    let ids = padded_batch();
    let weights = masked_softmax(
        &padded_batch_scores(),
        &Mask::valid_lens(&padded_batch_lens()),
        Fill::Safe,
    );
    let (ids, weights) = (ids.to_vec(), weights.to_vec());
    let labels: Vec<Vec<String>> = ids.chunks(4).map(tokens).collect();
    let titles = ["valid length 3", "valid length 2"];
    let panels: Vec<figures::Panel<'_>> = (0..2)
        .map(|b| figures::Panel {
            title: titles[b].to_string(),
            values: &weights[b * 16..(b + 1) * 16],
            row_labels: &labels[b],
            col_labels: &labels[b],
        })
        .collect();
    figures::heatmap(&figures::Heatmap {
        title: "Masked softmax with valid lengths [3, 2]",
        row_desc: "query",
        col_desc: "key",
        panels: &panels,
        range: Some((0.0, 1.0)),
    })
}

/// Figure `ch04-causal-left-padding.svg`: the left-padded sequence under causal order
/// and its padding mask, with `Fill::D2l` (the fully masked rows turn uniform over
/// *every* key, future included) and with `Fill::Safe` (they are zero).
pub fn causal_figure() -> String {
    let labels = tokens(&left_padded_sequence().to_vec());
    let d2l = decoder_weights(Fill::D2l).to_vec();
    let safe = decoder_weights(Fill::Safe).to_vec();
    let panels = [
        figures::Panel {
            title: "Fill::D2l (-1e6)".into(),
            values: &d2l,
            row_labels: &labels,
            col_labels: &labels,
        },
        figures::Panel {
            title: "Fill::Safe".into(),
            values: &safe,
            row_labels: &labels,
            col_labels: &labels,
        },
    ];
    figures::heatmap(&figures::Heatmap {
        title: "Causal mask & key padding, left-padded sequence",
        row_desc: "query",
        col_desc: "key",
        panels: &panels,
        range: Some((0.0, 1.0)),
    })
}
