//! Masks built once: when every batch has the same length `T` and the valid lengths
//! come from a small set, the mask of every length can be built before training and
//! looked up at each call, instead of being rebuilt from comparisons every time.

use engine::Tensor;

use crate::by_hand::sequence_keep;

// ANCHOR: causal_padding_bias
/// The additive bias of causal order and valid lengths, built from scratch: for
/// example `b`, query `q` and key `k`, 0 when `k ≤ q` and `k < lens[b]`, `-inf`
/// otherwise. Shape `[B, T, T]` for `lens: [B]`.
///
/// Every length must be at least 1: key 0 is then visible to every query, so no row
/// is fully masked and `-inf` is exact (chapter 4's NaN needs a row with nothing to
/// see).
pub fn causal_padding_bias(lens: &Tensor, t: usize) -> Tensor {
    let causal = Tensor::ones([1, t, t]).tril(0); //           [1, T, T]
    let real = sequence_keep(lens, t).unsqueeze(1); //          [B, 1, T]
    let keep = &causal * &real; //                             [B, T, T]
    let hidden = keep.eq_mask(&Tensor::scalar(0.0));
    Tensor::zeros(keep.shape()).masked_fill(&hidden, f32::NEG_INFINITY)
}
// ANCHOR_END: causal_padding_bias

// ANCHOR: bias_table
/// The biases of a fixed length `T` for a small set of valid lengths, built once: row
/// `i` of the table is [`causal_padding_bias`] for `lengths[i]`. A batch's bias is
/// then one `index_select`, whatever the mask's construction costs.
pub struct BiasTable {
    lengths: Vec<usize>,
    table: Tensor,  // [lengths, T, T]
    causal: Tensor, // [1, T, T]: the bias of length T
}

impl BiasTable {
    /// Builds the bias of every length in `lengths` (each in `1..=t`) for batches of
    /// length `t`, with the same function that builds one at each call.
    pub fn new(lengths: &[usize], t: usize) -> BiasTable {
        assert!(
            lengths.iter().all(|&l| (1..=t).contains(&l)),
            "BiasTable::new: every length must be in 1..={t}, found {lengths:?}"
        );
        let all = Tensor::from_vec(
            lengths.iter().map(|&l| l as f32).collect(),
            [lengths.len()],
        );
        BiasTable {
            lengths: lengths.to_vec(),
            table: causal_padding_bias(&all, t),
            causal: causal_padding_bias(&Tensor::from_vec(vec![t as f32], [1]), t),
        }
    }

    /// The bias `[B, T, T]` of a batch whose valid lengths are `lens`, each one of
    /// the table's lengths.
    pub fn bias(&self, lens: &[usize]) -> Tensor {
        let rows: Vec<f32> = lens
            .iter()
            .map(|l| {
                let row = self.lengths.iter().position(|x| x == l);
                row.unwrap_or_else(|| {
                    panic!(
                        "BiasTable::bias: length {l} is not one of {:?}",
                        self.lengths
                    )
                }) as f32
            })
            .collect();
        let rows = Tensor::from_vec(rows, [lens.len()]);
        self.table.index_select(0, &rows)
    }

    /// The bias of a batch whose sequences are all full, `[1, T, T]`: causal
    /// order alone, shared by every example by broadcasting, so a call allocates
    /// nothing for its mask.
    pub fn causal(&self) -> &Tensor {
        &self.causal
    }
}
// ANCHOR_END: bias_table

// ANCHOR: attend
/// Attention weights from scores `[B, T, T]` and an additive bias that broadcasts to
/// them: `softmax(scores + bias)`.
pub fn attend(scores: &Tensor, bias: &Tensor) -> Tensor {
    (scores + bias).softmax(-1)
}
// ANCHOR_END: attend

// ANCHOR: mask_bytes
/// The tensor bytes that building a mask costs on this thread: the peak above what
/// was live before, and what the result holds once the intermediates are freed.
pub fn mask_bytes(build: impl FnOnce() -> Tensor) -> (usize, usize) {
    let before = engine::memory::live_bytes();
    engine::memory::reset_peak();
    let mask = build();
    let peak = engine::memory::peak_bytes() - before;
    let held = engine::memory::live_bytes() - before;
    drop(mask);
    (peak, held)
}
// ANCHOR_END: mask_bytes
