//! Pitfall 4: the NaN of a fully masked row.
//!
//! A batch of sequences padded to one length may hold a sequence of length 0: an
//! empty source sentence, a sample whose every token was filtered out, a left-padded
//! decoder's first step. Its row of scores is masked from end to end. The first
//! article fills masked scores as PyTorch code often does,
//! `scores.masked_fill(mask == 0, float('-inf'))`, and on that row the softmax
//! computes `exp(-inf − (-inf)) = exp(NaN)`: the whole row is NaN, so is that
//! example's context, so is the loss, and after `backward` so is the gradient of
//! every parameter the values went through. One empty sequence spoils the update of
//! the whole batch.
//!
//! The debugging workflow this module follows, step by step:
//!
//! 1. [`forward`] the batch of [`empty_row_batch`] (example [`EMPTY`] has length 0)
//!    with [`RowFill::NegInf`]: the loss is NaN.
//! 2. Run it again under anomaly mode, the engine's `torch.autograd.detect_anomaly`
//!    ([`anomaly_report`]). Every op checks its output, and the first non-finite
//!    value stops the run with the op's name, the value, its element and the input
//!    shapes; [`AnomalyReport`] reads the message field by field and [`locate`] turns
//!    the element into `(example, query, key)`. (The engine's anomaly mode checks the
//!    *forward* pass too, and infinities as well as NaN, so it stops at the `-inf`
//!    the fill writes, before any NaN exists: on the cause, not the symptom.
//!    PyTorch's checks only the backward pass for NaN; [`backward_anomaly_report`]
//!    shows what that finds.)
//! 3. [`health`] counts the NaN and infinities of every intermediate step: the `-inf`
//!    values are harmless where a row still has a visible key, and the first NaN
//!    appears in the softmax, on the empty row only.
//! 4. The fix: [`RowFill::Safe`] (the library's [`Fill::Safe`], PyTorch's
//!    `_safe_softmax`) leaves masked keys out without any sentinel value, so the
//!    empty row gets weights of exactly zero, a context of zero, and the loss is
//!    finite.
//!
//! Then [`gradient_table`]: what each fill does to the gradient of that row. The
//! finite fills `-1e6` (d2l) and `-1e9` (the article) give the row uniform weights
//! `1/K`, so the loss still sends a gradient of `1/K` of the row's context gradient
//! to each of its padded values, and through them to the shared value projection: a
//! silent error that anomaly mode cannot see, since every number is finite. `-inf`
//! sends NaN. `Fill::Safe` sends exactly zero. (Chapter 4 measured the same fills on
//! a hand-made training step; here they run through a whole additive-attention
//! layer.)

use std::fmt;

use attention::{Fill, Mask, masked_softmax};
use engine::Tensor;
use engine::anomaly::detect_anomaly;
use lesson::panic_message;

use crate::article_tests::caught;

/// Examples in the batch.
pub const BATCH: usize = 3;
/// Keys per example (the padded length).
pub const KEYS: usize = 4;
/// The valid length of each example: example [`EMPTY`] has none.
pub const LENGTHS: [f32; BATCH] = [4.0, 0.0, 2.0];
/// The example whose sequence is empty.
pub const EMPTY: usize = 1;
/// The size of a query (a decoder state).
pub const QUERY_SIZE: usize = 3;
/// The size of a key (an encoder output).
pub const KEY_SIZE: usize = 3;
/// The size of a value, and of the context.
pub const VALUE_SIZE: usize = 2;
/// The hidden size `h` of the additive scores.
pub const HIDDEN: usize = 4;

/// A small seeded batch for the single-query additive attention of the article, with
/// the parameters as fresh leaves that require gradients.
#[derive(Clone, Debug)]
pub struct EmptyRowBatch {
    /// The decoder states, `[B, QUERY_SIZE]`.
    pub query: Tensor,
    /// The encoder outputs, `[B, K, KEY_SIZE]`.
    pub keys: Tensor,
    /// What the values are projected from, `[B, K, VALUE_SIZE]`.
    pub inputs: Tensor,
    /// The context each example should produce, `[B, VALUE_SIZE]`.
    pub target: Tensor,
    /// The valid lengths, `[B]`: [`LENGTHS`].
    pub lens: Tensor,
    /// The query projection `W_q`, `[h, QUERY_SIZE]`.
    pub w_q: Tensor,
    /// The key projection `W_k`, `[h, KEY_SIZE]`.
    pub w_k: Tensor,
    /// The score vector `v`, `[h]`.
    pub v: Tensor,
    /// The value projection `W_v`, `[VALUE_SIZE, VALUE_SIZE]`, shared by every
    /// example.
    pub w_v: Tensor,
}

impl EmptyRowBatch {
    /// The parameters by name, in the order `W_q`, `W_k`, `v`, `W_v`.
    pub fn parameters(&self) -> [(&'static str, &Tensor); 4] {
        [
            ("W_q", &self.w_q),
            ("W_k", &self.w_k),
            ("v", &self.v),
            ("W_v", &self.w_v),
        ]
    }
}

/// The batch, drawn from seed 4; every call gives the same numbers and new leaves (so
/// no gradient carries over from one run to the next).
pub fn empty_row_batch() -> EmptyRowBatch {
    engine::manual_seed(4);
    EmptyRowBatch {
        query: Tensor::randn([BATCH, QUERY_SIZE]),
        keys: Tensor::randn([BATCH, KEYS, KEY_SIZE]),
        inputs: Tensor::randn([BATCH, KEYS, VALUE_SIZE]),
        target: Tensor::randn([BATCH, VALUE_SIZE]),
        lens: Tensor::from_vec(LENGTHS.to_vec(), [BATCH]),
        w_q: Tensor::randn([HIDDEN, QUERY_SIZE]).requires_grad_(),
        w_k: Tensor::randn([HIDDEN, KEY_SIZE]).requires_grad_(),
        v: Tensor::randn([HIDDEN]).requires_grad_(),
        w_v: Tensor::randn([VALUE_SIZE, VALUE_SIZE]).requires_grad_(),
    }
}

/// What masked scores become: the three fills of chapter 4, and the safe softmax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFill {
    /// `-1e6`, d2l's `masked_softmax`.
    D2l,
    /// `-1e9`, the first article's.
    Article,
    /// `float('-inf')`, as much PyTorch code writes it.
    NegInf,
    /// No sentinel value: the library's [`Fill::Safe`].
    Safe,
}

impl RowFill {
    /// Every fill, in the order the table prints them.
    pub const ALL: [RowFill; 4] = [
        RowFill::D2l,
        RowFill::Article,
        RowFill::NegInf,
        RowFill::Safe,
    ];

    /// The name the page prints.
    pub fn name(self) -> &'static str {
        match self {
            RowFill::D2l => "-1e6 (d2l)",
            RowFill::Article => "-1e9 (article)",
            RowFill::NegInf => "-inf",
            RowFill::Safe => "Fill::Safe",
        }
    }

    /// The value written over masked scores, or `None` for the safe softmax.
    pub fn value(self) -> Option<f32> {
        match self {
            RowFill::D2l => Some(-1e6),
            RowFill::Article => Some(-1e9),
            RowFill::NegInf => Some(f32::NEG_INFINITY),
            RowFill::Safe => None,
        }
    }
}

// ANCHOR: fill_line
/// The masked scores, `scores.masked_fill(mask == 0, fill)` as the article writes it,
/// for scores `[B, 1, K]` and valid lengths `[B]`; `None` for the safe fill, which
/// writes no value.
pub fn filled_scores(
    scores: &Tensor,
    lens: &Tensor,
    fill: RowFill,
) -> Option<Tensor> {
    let keep = Mask::valid_lens(lens)
        .keep_for("filled_scores", scores.shape())
        .expect("valid lengths mask something");
    let masked = keep.eq_mask(&Tensor::scalar(0.0));
    fill.value().map(|value| scores.masked_fill(&masked, value))
}

/// The attention weights `[B, 1, K]` under `fill`: the softmax of the filled scores,
/// or the library's safe softmax.
pub fn masked_weights(scores: &Tensor, lens: &Tensor, fill: RowFill) -> Tensor {
    match filled_scores(scores, lens, fill) {
        Some(filled) => filled.softmax(-1),
        None => masked_softmax(scores, &Mask::valid_lens(lens), Fill::Safe),
    }
}
// ANCHOR_END: fill_line

/// Every intermediate result of one forward pass, kept so that each can be inspected.
#[derive(Clone, Debug)]
pub struct Pass {
    /// The additive scores `v · tanh(W_q q + W_k kⱼ)`, `[B, 1, K]`.
    pub scores: Tensor,
    /// The scores after the fill, `[B, 1, K]` (`None` under the safe fill).
    pub filled: Option<Tensor>,
    /// The attention weights, `[B, 1, K]`.
    pub weights: Tensor,
    /// The projected values `W_v x`, `[B, K, VALUE_SIZE]`.
    pub values: Tensor,
    /// The context of each example, `[B, VALUE_SIZE]`.
    pub context: Tensor,
    /// The mean squared error of the context against the target, a scalar.
    pub loss: Tensor,
}

impl Pass {
    /// The steps in order, by name (the filled scores only when there are some).
    pub fn steps(&self) -> Vec<(&'static str, &Tensor)> {
        let mut steps = vec![("scores", &self.scores)];
        if let Some(filled) = &self.filled {
            steps.push(("filled", filled));
        }
        steps.extend([
            ("weights", &self.weights),
            ("values", &self.values),
            ("context", &self.context),
            ("loss", &self.loss),
        ]);
        steps
    }
}

// ANCHOR: forward
/// One forward pass of the article's single-query additive attention over the batch,
/// masked with `fill`, then the loss. Every intermediate result keeps its gradient,
/// so that after `pass.loss.backward()` each can be read.
pub fn forward(batch: &EmptyRowBatch, fill: RowFill) -> Pass {
    let q = batch.query.matmul_t(&batch.w_q).unsqueeze(1); //        [B, 1, h]
    let k = batch.keys.matmul_t(&batch.w_k); //                      [B, K, h]
    let energies = (&q + &k).tanh(); //                              [B, K, h]
    let scores = energies.matmul(&batch.v.unsqueeze(1)); //           [B, K, 1]
    let scores = scores.transpose(1, 2); //                          [B, 1, K]
    let filled = filled_scores(&scores, &batch.lens, fill);
    let weights = masked_weights(&scores, &batch.lens, fill); //     [B, 1, K]
    let values = batch.inputs.matmul_t(&batch.w_v); //               [B, K, dv]
    let context = weights.bmm(&values).squeeze(1); //                [B, dv]
    let loss = (&context - &batch.target).square().mean();
    for t in [&scores, &weights, &values, &context] {
        t.retain_grad();
    }
    Pass {
        scores,
        filled,
        weights,
        values,
        context,
        loss,
    }
}
// ANCHOR_END: forward

/// The loss of a fresh batch under `fill`.
pub fn loss(fill: RowFill) -> f32 {
    forward(&empty_row_batch(), fill).loss.item()
}

/// How many NaN and infinite values one step holds.
#[derive(Clone, Debug, PartialEq)]
pub struct StepHealth {
    /// The step's name (see [`Pass::steps`]).
    pub step: &'static str,
    /// Its shape.
    pub shape: Vec<usize>,
    /// How many of its values are NaN.
    pub nan: usize,
    /// How many are `+inf` or `-inf`.
    pub inf: usize,
}

impl fmt::Display for StepHealth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = format!("{:?}", self.shape);
        write!(
            f,
            "{:>8} {shape:<10} NaN: {:>2}  inf: {:>2}",
            self.step, self.nan, self.inf
        )
    }
}

// ANCHOR: health
/// The NaN and infinities of every step of `pass`, in order: the first step with a
/// NaN is where the NaN is born (the check PyTorch users write with
/// `torch.isnan(t).any()` after each line).
pub fn health(pass: &Pass) -> Vec<StepHealth> {
    pass.steps()
        .into_iter()
        .map(|(step, t)| {
            let values = t.to_vec();
            StepHealth {
                step,
                shape: t.shape().to_vec(),
                nan: values.iter().filter(|v| v.is_nan()).count(),
                inf: values.iter().filter(|v| v.is_infinite()).count(),
            }
        })
        .collect()
}
// ANCHOR_END: health

// ANCHOR: anomaly
/// The message anomaly mode stops the `-inf` run with: forward and backward under
/// `engine::anomaly::detect_anomaly`, as `with torch.autograd.detect_anomaly():`
/// wraps them in PyTorch.
pub fn anomaly_report() -> String {
    let batch = empty_row_batch();
    panic_message(|| {
        detect_anomaly(|| forward(&batch, RowFill::NegInf).loss.backward());
    })
}

/// Anomaly mode around `backward` only (the forward pass ran without checks, and its
/// NaN is already in the loss): the first derivative that produced a non-finite
/// value. This is closer to what PyTorch's anomaly mode reports, which checks
/// gradients only.
pub fn backward_anomaly_report() -> String {
    let pass = forward(&empty_row_batch(), RowFill::NegInf);
    panic_message(|| detect_anomaly(|| pass.loss.backward()))
}
// ANCHOR_END: anomaly

/// Runs forward and backward under anomaly mode with `fill`: `Ok(loss)` when no op
/// produced a NaN or an infinity, else `Err(report)`. The finite fills pass, whatever
/// they do to the empty row: anomaly mode finds non-finite values, not wrong ones.
pub fn anomaly_check(fill: RowFill) -> Result<f32, String> {
    let batch = empty_row_batch();
    caught(|| {
        detect_anomaly(|| {
            let pass = forward(&batch, fill);
            pass.loss.backward();
            pass.loss.item()
        })
    })
}

/// The message of the library when asked for `Fill::Constant(-inf)`: it refuses the
/// value that makes a fully masked row NaN, and says why.
pub fn neg_inf_refused() -> String {
    let scores = Tensor::zeros([1, 1, 2]);
    let nothing = Mask::valid_lens(&Tensor::from_vec(vec![0.0], [1]));
    panic_message(|| {
        let _ = masked_softmax(&scores, &nothing, Fill::Constant(f32::NEG_INFINITY));
    })
}

/// An anomaly-mode message, field by field.
///
/// ```text
/// anomaly: the forward pass of `where` produced -inf at element 4 of its output
///   input shapes: [3, 1, 4], [], [3, 1, 4]
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnomalyReport {
    /// `"forward"` or `"backward"`.
    pub pass: String,
    /// The op that produced the value (`where` is what `masked_fill` is made of).
    pub op: String,
    /// The value, as printed: `NaN`, `inf` or `-inf`.
    pub value: String,
    /// The row-major index of the element, in the op's output (forward) or in the
    /// gradient of one of its inputs (backward).
    pub element: usize,
    /// In the backward pass: which input's gradient.
    pub input: Option<usize>,
    /// The shapes of the op's inputs.
    pub input_shapes: Vec<Vec<usize>>,
}

// ANCHOR: read_report
impl AnomalyReport {
    /// Reads a message of `engine::anomaly`; `None` when it is not one.
    pub fn parse(message: &str) -> Option<AnomalyReport> {
        let (first, shapes) = message.split_once("\n  input shapes: ")?;
        let rest = first.strip_prefix("anomaly: the ")?;
        let (pass, rest) = rest.split_once(" pass of `")?;
        let (op, rest) = rest.split_once("` produced ")?;
        let (value, rest) = rest.split_once(" at element ")?;
        let (element, rest) = rest.split_once(' ')?;
        let input = rest
            .strip_prefix("of the gradient for its input ")
            .and_then(|i| i.parse().ok());
        Some(AnomalyReport {
            pass: pass.into(),
            op: op.into(),
            value: value.into(),
            element: element.parse().ok()?,
            input,
            input_shapes: parse_shapes(shapes)?,
        })
    }
}

/// The multi-index of the row-major `element` of a tensor of `shape`: element 4 of
/// `[3, 1, 4]` is `[1, 0, 0]`, example 1, query 0, key 0.
pub fn locate(element: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    let mut rest = element;
    for (i, &size) in shape.iter().enumerate().rev() {
        index[i] = rest % size;
        rest /= size;
    }
    index
}
// ANCHOR_END: read_report

/// `[3, 1, 4], [], [3, 1, 4]` as shapes.
fn parse_shapes(list: &str) -> Option<Vec<Vec<usize>>> {
    list.split("], ")
        .map(|s| {
            let inner = s.trim().trim_start_matches('[').trim_end_matches(']');
            if inner.is_empty() {
                return Some(Vec::new());
            }
            inner.split(", ").map(|n| n.parse().ok()).collect()
        })
        .collect()
}

/// What one backward pass sends to the empty example under one fill.
#[derive(Clone, Debug)]
pub struct RowGradients {
    /// The fill.
    pub fill: RowFill,
    /// The loss.
    pub loss: f32,
    /// The empty example's weights, `[K]`.
    pub weights: Vec<f32>,
    /// `dL/dscores` of the empty example, `[K]`.
    pub score_grad: Vec<f32>,
    /// `dL/dcontext` of the empty example, `[VALUE_SIZE]`.
    pub context_grad: Vec<f32>,
    /// `dL/dvalues` of the empty example's (padded) values, `[K · VALUE_SIZE]`.
    pub value_grad: Vec<f32>,
    /// `dL/dvalues` of the padded keys of example 2 (length 2), `[2 · VALUE_SIZE]`:
    /// padding in a row that has visible keys, for comparison.
    pub other_padding_grad: Vec<f32>,
    /// `dL/dW_v`, the value projection every example shares.
    pub w_v_grad: Vec<f32>,
    /// The parameters whose gradient holds a NaN or an infinity.
    pub poisoned: Vec<&'static str>,
}

// ANCHOR: row_gradients
/// One forward and backward pass under `fill`, and what reached the empty example.
pub fn row_gradients(fill: RowFill) -> RowGradients {
    let batch = empty_row_batch();
    let pass = forward(&batch, fill);
    pass.loss.backward();
    let grad = |t: &Tensor| t.grad().expect("kept by forward").to_vec();
    let row = |v: Vec<f32>, len: usize| v[EMPTY * len..(EMPTY + 1) * len].to_vec();
    let values = grad(&pass.values);
    let padded = 2 * KEYS * VALUE_SIZE + 2 * VALUE_SIZE..3 * KEYS * VALUE_SIZE;
    let poisoned = batch
        .parameters()
        .into_iter()
        .filter(|(_, p)| grad(p).iter().any(|g| !g.is_finite()))
        .map(|(name, _)| name)
        .collect();
    RowGradients {
        fill,
        loss: pass.loss.item(),
        weights: row(pass.weights.to_vec(), KEYS),
        score_grad: row(grad(&pass.scores), KEYS),
        context_grad: row(grad(&pass.context), VALUE_SIZE),
        value_grad: row(values.clone(), KEYS * VALUE_SIZE),
        other_padding_grad: values[padded].to_vec(),
        w_v_grad: grad(&batch.w_v),
        poisoned,
    }
}

/// [`row_gradients`] for every fill, in the order of [`RowFill::ALL`].
pub fn gradient_table() -> Vec<RowGradients> {
    RowFill::ALL.into_iter().map(row_gradients).collect()
}
// ANCHOR_END: row_gradients

/// Values with four decimals, space-separated: `0.2500 0.2500`.
fn list(values: &[f32]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:.4}")).collect();
    items.join(" ")
}

impl fmt::Display for RowGradients {
    /// Four lines: the fill and loss, the row's weights, its score gradient, the
    /// gradient of its padded values (and which parameters hold a NaN).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let poisoned = if self.poisoned.is_empty() {
            "none".to_string()
        } else {
            self.poisoned.join(", ")
        };
        writeln!(
            f,
            "{}: loss = {:.4}, parameters with NaN gradients: {poisoned}",
            self.fill.name(),
            self.loss
        )?;
        writeln!(f, "  weights    = {}", list(&self.weights))?;
        writeln!(f, "  dL/dscores = {}", list(&self.score_grad))?;
        write!(f, "  dL/dvalues = {}", list(&self.value_grad))
    }
}
