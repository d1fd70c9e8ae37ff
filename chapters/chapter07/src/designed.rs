//! Three heads with weights set by hand, so that each one's job can be read off its
//! heatmap: the previous token, the same word, the next token. And what the folded
//! mask does to them when the lengths are tiled instead of repeated per example.

use attention::prelude::*;

use crate::heads::{LensOrder, MultiHeadByHand};
use lesson::Trace;

/// The words the example knows.
pub const WORDS: [&str; 5] = ["the", "cat", "sat", "on", "mat"];

/// The example sentence: six tokens, the word "the" twice.
pub const SENTENCE: [&str; 6] = ["the", "cat", "sat", "on", "the", "mat"];

/// The shorter sentence that shares a batch with [`SENTENCE`] in the mask example;
/// the positions after it are padding.
pub const SHORT_SENTENCE: [&str; 3] = ["the", "cat", "sat"];

/// The token written for a padding position.
pub const PAD: &str = "<pad>";

/// Positions a sentence may have: one-hot position features come first in each token.
pub const POSITIONS: usize = SENTENCE.len();

/// The size of a token's vector: a one-hot position, then a one-hot word.
pub const TOKEN_SIZE: usize = POSITIONS + WORDS.len();

/// The number of heads of the designed module.
pub const DESIGNED_HEADS: usize = 3;

/// The size of each head, `d`: large enough for a one-hot position (6) or word (5),
/// and a square, so that `√d = 3` and the scores below are round numbers.
pub const HEAD_SIZE: usize = 9;

/// The scaled score `q · k / √d` of a query and the key it looks for; every other key
/// scores 0. A key that matches alone among six then gets `e⁴ / (e⁴ + 5) ≈ 0.916`.
pub const MATCH_SCORE: f32 = 4.0;

/// What each designed head looks for, in head order.
pub const HEAD_ROLES: [&str; DESIGNED_HEADS] =
    ["previous token", "same word", "next token"];

// ANCHOR: embed
/// The tokens of a batch of sentences, each token a one-hot position followed by a
/// one-hot word (all zeros for [`PAD`]), every sentence padded to [`POSITIONS`]: `[B,
/// POSITIONS, TOKEN_SIZE]`. A made-up embedding, chosen so that a projection can read
/// a token's position and its word separately.
///
/// # Panics
/// On a word that is not in [`WORDS`] or a sentence longer than [`POSITIONS`].
pub fn embed(sentences: &[&[&str]]) -> Tensor {
    let mut data = vec![0.0; sentences.len() * POSITIONS * TOKEN_SIZE];
    for (b, sentence) in sentences.iter().enumerate() {
        assert!(
            sentence.len() <= POSITIONS,
            "embed: {sentence:?} is too long"
        );
        for t in 0..POSITIONS {
            let token = &mut data[(b * POSITIONS + t) * TOKEN_SIZE..][..TOKEN_SIZE];
            token[t] = 1.0;
            if let Some(word) = sentence.get(t) {
                let w = WORDS
                    .iter()
                    .position(|known| known == word)
                    .unwrap_or_else(|| panic!("embed: unknown word {word:?}"));
                token[POSITIONS + w] = 1.0;
            }
        }
    }
    Tensor::from_vec(data, [sentences.len(), POSITIONS, TOKEN_SIZE])
}
// ANCHOR_END: embed

/// The tokens of `sentence` followed by [`PAD`] up to [`POSITIONS`], as axis labels.
pub fn labels(sentence: &[&str]) -> Vec<String> {
    (0..POSITIONS)
        .map(|t| sentence.get(t).copied().unwrap_or(PAD).to_string())
        .collect()
}

// ANCHOR: designed_heads
/// A [`MultiHeadAttention`] of three heads of size 9 whose weights are written by
/// hand:
///
/// - head 0 looks for the **previous token**: its query at position `t` is the
///   one-hot of position `t − 1` (of `0` at the start), and its key at position `j`
///   the one-hot of `j`;
/// - head 1 looks for the **same word**: query and key are both the one-hot of the
///   word;
/// - head 2 looks for the **next token** (position `t + 1`, the last token itself).
///
/// Queries are scaled so that a match scores [`MATCH_SCORE`] after the `1/√d`. Every
/// head's value is the key's word, one-hot, and `W_o` is the identity, so features
/// `9h .. 9h + 9` of the output are what head `h` read.
pub fn designed_heads() -> MultiHeadAttention {
    let (n, d) = (DESIGNED_HEADS * HEAD_SIZE, HEAD_SIZE);
    let c = MATCH_SCORE * (d as f32).sqrt(); // q · k = c, so q · k / √d = MATCH_SCORE
    let mut w_q = vec![0.0; n * TOKEN_SIZE]; // [out = n, in = TOKEN_SIZE], as PyTorch
    let mut w_k = vec![0.0; n * TOKEN_SIZE];
    let mut w_v = vec![0.0; n * TOKEN_SIZE];
    let set = |w: &mut [f32], head: usize, row: usize, col: usize, value: f32| {
        w[(head * d + row) * TOKEN_SIZE + col] = value;
    };
    let last = POSITIONS - 1;
    for t in 0..POSITIONS {
        // head 0: position t asks for t − 1; head 2: position t asks for t + 1
        set(&mut w_q, 0, t.saturating_sub(1), t, c);
        set(&mut w_q, 2, (t + 1).min(last), t, c);
        for head in [0, 2] {
            set(&mut w_k, head, t, t, 1.0); // a key answers with its own position
        }
    }
    for w in 0..WORDS.len() {
        set(&mut w_q, 1, w, POSITIONS + w, c); // head 1: a word asks for itself
        set(&mut w_k, 1, w, POSITIONS + w, 1.0);
        for head in 0..DESIGNED_HEADS {
            set(&mut w_v, head, w, POSITIONS + w, 1.0); // every head reads the word
        }
    }
    let identity: Vec<f32> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    let state = StateDict::from([
        ("W_q.weight", Tensor::from_vec(w_q, [n, TOKEN_SIZE])),
        ("W_k.weight", Tensor::from_vec(w_k, [n, TOKEN_SIZE])),
        ("W_v.weight", Tensor::from_vec(w_v, [n, TOKEN_SIZE])),
        ("W_o.weight", Tensor::from_vec(identity, [n, n])),
    ]);
    let config = MultiHeadAttentionConfig {
        num_hiddens: n,
        num_heads: DESIGNED_HEADS,
        query_size: Some(TOKEN_SIZE),
        key_size: Some(TOKEN_SIZE),
        value_size: Some(TOKEN_SIZE),
        ..Default::default()
    };
    MultiHeadAttention::from_state_dict(config, &state)
        .expect("the weights fit the config")
}
// ANCHOR_END: designed_heads

/// The designed heads on [`SENTENCE`], self-attention with no mask:
/// `(output [1, 6, 27], weights [1, 3, 6, 6])`.
pub fn sentence_heads() -> (Tensor, Tensor) {
    let mha = designed_heads();
    let x = embed(&[&SENTENCE]);
    let output = mha.forward(&x, &x, &x, &Mask::none());
    let weights = mha.last_attention_weights().expect("ran forward");
    (output, weights)
}

// ANCHOR: two_sentences
/// The designed heads on a batch of [`SENTENCE`] (length 6) and [`SHORT_SENTENCE`]
/// (length 3, then padding), with the valid lengths `[6, 3]` folded for the heads in
/// `order` (by [`MultiHeadByHand`], with the designed module's weights): the weights
/// of every head, `[2, 3, 6, 6]`.
pub fn two_sentences_weights(order: LensOrder) -> Tensor {
    let mha = designed_heads();
    let by_hand = MultiHeadByHand::from_state_dict(&mha.state_dict(), DESIGNED_HEADS);
    let x = embed(&[&SENTENCE, &SHORT_SENTENCE]);
    let lens = Tensor::from_vec(
        vec![SENTENCE.len() as f32, SHORT_SENTENCE.len() as f32],
        [2],
    );
    let attended =
        no_grad(|| by_hand.forward(&x, &x, &x, &lens, order, &mut Trace::default()));
    attended
        .weights // [B·H, Q, K]
        .reshape([2, DESIGNED_HEADS, POSITIONS, POSITIONS])
}
// ANCHOR_END: two_sentences

/// One heatmap panel per head of `weights` (`[heads, Q, K]` values, row-major),
/// titled with the head's number and role.
fn head_panels<'a>(
    weights: &'a [f32],
    titles: &[String],
    rows: &'a [String],
    cols: &'a [String],
) -> Vec<figures::Panel<'a>> {
    let size = rows.len() * cols.len();
    titles
        .iter()
        .enumerate()
        .map(|(h, title)| figures::Panel {
            title: title.clone(),
            values: &weights[h * size..(h + 1) * size],
            row_labels: rows,
            col_labels: cols,
        })
        .collect()
}

// ANCHOR: heads_heatmap
/// The weights of the designed heads on [`SENTENCE`], one panel per head, query
/// tokens down and key tokens across, on one colour scale from 0 to 1.
pub fn heads_heatmap() -> String {
    let (_, weights) = sentence_heads();
    let weights = weights.to_vec(); // [1, H, Q, K]: the panels one after the other
    let tokens = labels(&SENTENCE);
    let titles: Vec<String> = HEAD_ROLES
        .iter()
        .enumerate()
        .map(|(h, role)| format!("head {h}: {role}"))
        .collect();
    figures::heatmap(&figures::Heatmap {
        title: "one panel per head: \"the cat sat on the mat\"",
        row_desc: "query",
        col_desc: "key",
        panels: &head_panels(&weights, &titles, &tokens, &tokens),
        range: Some((0.0, 1.0)),
    })
}
// ANCHOR_END: heads_heatmap

/// The weights of example 0 ([`SENTENCE`]) when the lengths `[6, 3]` are tiled, one
/// panel per head: the rows of example 0 get the lengths 6, 3 and 6, so head 1 sees
/// only three keys.
pub fn tiled_mask_heatmap() -> String {
    let weights = two_sentences_weights(LensOrder::Tiled);
    let example0 = weights.narrow(0, 0, 1).to_vec(); // [1, H, Q, K]
    let lens = LensOrder::Tiled
        .repeat(&Tensor::from_vec(vec![6.0, 3.0], [2]), DESIGNED_HEADS)
        .to_vec();
    let tokens = labels(&SENTENCE);
    let titles: Vec<String> = (0..DESIGNED_HEADS)
        .map(|h| format!("head {h}: length {}", lens[h]))
        .collect();
    figures::heatmap(&figures::Heatmap {
        title: "lengths [6, 3] tiled: example 0's heads",
        row_desc: "query",
        col_desc: "key",
        panels: &head_panels(&example0, &titles, &tokens, &tokens),
        range: Some((0.0, 1.0)),
    })
}
