//! The mask fill in half precision: each fill written over the masked scores of a
//! tensor stored in f32, f16 or bf16, then the softmax in f32 as autocast runs it.

use attention::prelude::*;
use engine::precision::Precision;

/// A way to mask scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MaskFill {
    /// `masked_fill` with this value; the `&str` is how the table names it.
    Value(&'static str, f32),
    /// No value at all: [`Fill::Safe`] leaves the masked keys out.
    Safe,
}

/// The fills the table compares, in its order.
pub const FILLS: [MaskFill; 7] = [
    MaskFill::Value("-1e9 (the article)", -1e9),
    MaskFill::Value("-1e6 (d2l)", -1e6),
    MaskFill::Value("-1e4", -1e4),
    MaskFill::Value("f32 finfo.min", f32::MIN),
    MaskFill::Value("f16 finfo.min", -65504.0),
    MaskFill::Value("-inf", f32::NEG_INFINITY),
    MaskFill::Safe,
];

/// The formats of the table's columns.
pub const PRECISIONS: [Precision; 3] =
    [Precision::F32, Precision::F16, Precision::Bf16];

impl MaskFill {
    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            MaskFill::Value(name, _) => name,
            MaskFill::Safe => "safe (no value)",
        }
    }
}

// ANCHOR: masked
/// The weights of `scores` (`[..., K]`) with the keys outside `mask` masked by
/// `fill`, the scores held in `precision`: the fill is written, the tensor rounded
/// as storing it in that format would, and the softmax runs in f32.
pub fn masked_weights(
    scores: &Tensor,
    mask: &Mask,
    fill: MaskFill,
    precision: Precision,
) -> Tensor {
    let stored = scores.to_precision(precision);
    match fill {
        MaskFill::Value(_, value) => {
            let filled = masked_softmax_scores(&stored, mask, value);
            filled.to_precision(precision).softmax(-1)
        }
        MaskFill::Safe => masked_softmax(&stored, mask, Fill::Safe),
    }
}

/// `scores.masked_fill(masked, value)` for the keys outside `mask`.
fn masked_softmax_scores(scores: &Tensor, mask: &Mask, value: f32) -> Tensor {
    let lens = mask.keep_for("masked_weights", scores.shape());
    let keep = lens.expect("a mask with keys to hide");
    scores.masked_fill(&keep.eq_mask(&Tensor::scalar(0.0)), value)
}
// ANCHOR_END: masked

/// One cell of the table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// The fill as the format holds it (`None` for the safe softmax).
    pub stored: Option<f32>,
    /// Whether the partly masked row gives the right weights (within 1e-3 of the
    /// exact ones; masked keys exactly 0).
    pub partial_ok: bool,
    /// What a fully masked row becomes.
    pub full: FullRow,
}

/// What the weights of a row with every key masked are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullRow {
    /// Every weight NaN.
    Nan,
    /// Every key the same weight (d2l's convention).
    Uniform,
    /// Every weight zero (the safe softmax).
    Zeros,
    /// Anything else.
    Other,
}

impl FullRow {
    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            FullRow::Nan => "NaN",
            FullRow::Uniform => "uniform",
            FullRow::Zeros => "zeros",
            FullRow::Other => "other",
        }
    }
}

/// The two rows every cell is computed on (`[2, 1, 4]`): scores `[2, 1, 0.5, -1]`, the first row
/// with 2 real keys, the second with none.
pub fn rows() -> (Tensor, Mask) {
    let scores =
        Tensor::from_vec(vec![2.0, 1.0, 0.5, -1.0, 2.0, 1.0, 0.5, -1.0], [2, 1, 4]);
    let lens = Tensor::from_vec(vec![2.0, 0.0], [2]);
    (scores, Mask::valid_lens(&lens))
}

/// Computes one cell.
pub fn cell(fill: MaskFill, precision: Precision) -> Cell {
    let (scores, mask) = rows();
    let w = masked_weights(&scores, &mask, fill, precision).to_vec();
    let e = 1f32.exp();
    let exact = [e / (e + 1.0), 1.0 / (e + 1.0), 0.0, 0.0];
    let partial_ok = w[..4].iter().zip(exact).all(|(a, b)| (a - b).abs() < 1e-3)
        && w[2] == 0.0
        && w[3] == 0.0;
    let full = &w[4..];
    let full = if full.iter().all(|v| v.is_nan()) {
        FullRow::Nan
    } else if full.iter().all(|&v| v == 0.0) {
        FullRow::Zeros
    } else if full.iter().all(|&v| (v - 0.25).abs() < 1e-6) {
        FullRow::Uniform
    } else {
        FullRow::Other
    };
    let stored = match fill {
        MaskFill::Value(_, v) => Some(precision.round(v)),
        MaskFill::Safe => None,
    };
    Cell {
        stored,
        partial_ok,
        full,
    }
}

/// A stored fill as the table writes it: `-inf`, or three significant digits.
pub fn show(stored: Option<f32>) -> String {
    match stored {
        None => "-".to_string(),
        Some(v) if v.is_infinite() => {
            format!("{}inf", if v < 0.0 { "-" } else { "" })
        }
        Some(v) => format!("{v:.2e}"),
    }
}

/// The table: for each fill and each format, the fill as stored and what a fully
/// masked row becomes (marked `!` when even the partly masked row is wrong).
pub fn table() -> String {
    let mut out = format!("{:<19}", "fill");
    for p in PRECISIONS {
        out += &format!("  {:<18}", p.name());
    }
    out = out.trim_end().to_string() + "\n";
    for fill in FILLS {
        let mut line = format!("{:<19}", fill.name());
        for p in PRECISIONS {
            let c = cell(fill, p);
            let mark = if c.partial_ok { "" } else { "!" };
            let text = format!("{:>9} {}{mark}", show(c.stored), c.full.name());
            line += &format!("  {text:<18}");
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}
