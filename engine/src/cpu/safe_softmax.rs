//! The softmax over the visible entries of each row, forward and backward, fused: the same
//! bits as the composed formula that defines it (`ops/safe_softmax.rs`), in one pass for
//! the maximum and a few over the row, where the composed form makes a dozen tensors of
//! the size of the scores.
//!
//! Every step below is the step of the composed form for one element, in the same order
//! (each row's shift is the composed form's wherever a result depends on it, see
//! `row_shift`): the sums are the sum reduction's
//! (one running sum from 0, in order along the row), `exp` is the engine's, and each
//! multiplication by the 0/1 mask is written as what it gives (the value itself, or the
//! `+0` of `exp(0) · 0`). The
//! backward pass is the chain of the composed form's derivatives (`backprop.rs`: `div`,
//! `where`, `sum`, `mul`, `exp`, `where`, `sub`), element by element.

use super::math::exp;
use super::parallel::for_each_block;
use crate::kernels::{self, KernelPath};
use crate::spare;

/// Which entries of each row are visible: those the keep mask marks (if any) and, under
/// causal order, those at or before the row's query position plus an offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Visibility<'a> {
    /// The keep mask's values, the offset of each row's values in them, and the step along
    /// a row (1, or 0 when one value is repeated).
    pub(crate) keep: Option<(&'a [f32], &'a [usize], usize)>,
    /// Query `i` (the row's index along the second-to-last dimension) sees entries
    /// `j ≤ i + offset`.
    pub(crate) causal: Option<(usize, usize)>,
}

impl Visibility<'_> {
    /// Row `r`'s visible entries as a limit and a mask: entries `j < limit` may be visible
    /// (causal order hides the rest), and among them those where the mask holds 1 (the
    /// keep mask's row, or `None` when nothing else is masked).
    #[inline(always)]
    fn row(&self, r: usize, n: usize) -> (usize, KeepRow<'_>) {
        let limit = match self.causal {
            Some((queries, offset)) => {
                n.min((r % queries).saturating_add(offset).saturating_add(1))
            }
            None => n,
        };
        let keep = match self.keep {
            None => KeepRow::All,
            Some((values, rows, 1)) => KeepRow::Values(&values[rows[r]..rows[r] + n]),
            Some((values, rows, _)) => {
                if values[rows[r]] != 0.0 {
                    KeepRow::All
                } else {
                    KeepRow::None
                }
            }
        };
        (limit, keep)
    }
}

/// The keep mask of one row, as the kernel reads it.
#[derive(Clone, Copy)]
enum KeepRow<'a> {
    /// Every entry (before the causal limit) is visible.
    All,
    /// No entry is.
    None,
    /// Entry `j` is visible where the value is 1.
    Values(&'a [f32]),
}

impl KeepRow<'_> {
    #[inline(always)]
    fn keeps(self, j: usize) -> bool {
        match self {
            KeepRow::All => true,
            KeepRow::None => false,
            KeepRow::Values(values) => values[j] != 0.0,
        }
    }
}

/// The row's shift: its largest visible score, or 0 when that is not above `-inf` (nothing
/// visible, or only `-inf`).
///
/// This is the composed form's shift wherever a result depends on it. Where the two
/// differ, none does: with a visible NaN the composed form shifts by 0 and this by the
/// largest other score, but the row's sum is NaN and every weight and gradient NaN either
/// way; when every visible score is `-inf`, the composed form's maximum is `f32::MIN` if
/// some entry is masked, but every exponential is `exp(-inf) = 0` either way. (Nor does
/// the order of a maximum matter, but for the sign of a zero maximum: `x − 0` is `x`
/// either way, and `exp(±0) = 1`.)
#[inline(always)]
fn row_shift(row: &[f32], limit: usize, keep: KeepRow) -> f32 {
    let mut max = f32::NEG_INFINITY;
    for (j, &s) in row[..limit].iter().enumerate() {
        if keep.keeps(j) && s > max {
            max = s;
        }
    }
    if max > f32::NEG_INFINITY { max } else { 0.0 }
}

/// What the backward pass needs besides the output: each row's shift (the largest visible
/// score, or 0) and the divisor of its exponentials (their sum, or 1 when it is 0), and
/// whether the divisor is the sum.
pub(crate) struct Saved {
    pub(crate) shift: Vec<f32>,
    pub(crate) divisor: Vec<f32>,
    pub(crate) has_mass: Vec<bool>,
}

/// The weights of each row of `n` scores, and what the backward pass needs.
pub(crate) fn forward(
    x: &[f32],
    n: usize,
    visibility: Visibility,
) -> (Vec<f32>, Saved) {
    let rows = x.len() / n;
    let mut out = spare::for_overwrite(x.len());
    let mut saved = Saved {
        shift: Vec::with_capacity(rows),
        divisor: Vec::with_capacity(rows),
        has_mass: Vec::with_capacity(rows),
    };
    let path = kernels::active();
    for (r, (row, out)) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)).enumerate()
    {
        let (shift, divisor, has_mass) =
            forward_row_on(path, row, out, visibility.row(r, n));
        saved.shift.push(shift);
        saved.divisor.push(divisor);
        saved.has_mass.push(has_mass);
    }
    (out, saved)
}

/// [`forward_row`] on `path`.
fn forward_row_on(
    path: KernelPath,
    row: &[f32],
    out: &mut [f32],
    visible: (usize, KeepRow),
) -> (f32, f32, bool) {
    match path {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe { forward_row_avx512(row, out, visible) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe { forward_row_avx2(row, out, visible) },
        _ => forward_row(row, out, visible),
    }
}

/// [`forward_row`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn forward_row_avx512(
    row: &[f32],
    out: &mut [f32],
    visible: (usize, KeepRow),
) -> (f32, f32, bool) {
    forward_row(row, out, visible)
}

/// [`forward_row`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn forward_row_avx2(
    row: &[f32],
    out: &mut [f32],
    visible: (usize, KeepRow),
) -> (f32, f32, bool) {
    forward_row(row, out, visible)
}

/// One row's weights into `out`; returns its shift, its divisor and whether the divisor
/// is the sum of its exponentials (it is 1 when that sum is 0).
#[inline(always)]
fn forward_row(
    row: &[f32],
    out: &mut [f32],
    (limit, keep): (usize, KeepRow),
) -> (f32, f32, bool) {
    let shift = row_shift(row, limit, keep);
    // `exp(keep ? x − shift : 0) · keep`: the exponential where visible, exactly 0 where not.
    let (near, far) = out.split_at_mut(limit);
    for (j, (o, &s)) in near.iter_mut().zip(&row[..limit]).enumerate() {
        let e = exp(s - shift);
        *o = if keep.keeps(j) { e } else { 0.0 };
    }
    far.fill(0.0);
    // One running sum in order (adding the zeros past the limit would change nothing).
    let sum = near.iter().fold(0.0f32, |acc, &e| acc + e);
    let has_mass = sum != 0.0; // a NaN sum divides, so the row is NaN
    let divisor = if has_mass { sum } else { 1.0 };
    for o in out.iter_mut() {
        *o /= divisor;
    }
    (shift, divisor, has_mass)
}

/// The gradient with respect to the scores `x`, given the weights `out` and the gradient
/// `g` of the loss with respect to them: the composed form's chain of derivatives.
pub(crate) fn backward(
    x: &[f32],
    out: &[f32],
    g: &[f32],
    n: usize,
    saved: &Saved,
    visibility: Visibility,
) -> Vec<f32> {
    let path = kernels::active();
    let mut dx = spare::for_overwrite(x.len());
    for_each_block(&mut dx, n, |start, block| {
        let first = start / n;
        let end = start + block.len();
        let rows = x[start..end]
            .chunks_exact(n)
            .zip(out[start..end].chunks_exact(n))
            .zip(g[start..end].chunks_exact(n))
            .zip(block.chunks_exact_mut(n));
        for (i, (((x, out), g), dx)) in rows.enumerate() {
            let r = first + i;
            let row = RowSaved {
                shift: saved.shift[r],
                divisor: saved.divisor[r],
                has_mass: saved.has_mass[r],
            };
            backward_row_on(path, (x, out, g), dx, row, visibility.row(r, n));
        }
    });
    dx
}

/// One row's values from the forward pass.
#[derive(Clone, Copy)]
struct RowSaved {
    shift: f32,
    divisor: f32,
    has_mass: bool,
}

/// [`backward_row`] on `path`.
fn backward_row_on(
    path: KernelPath,
    row: (&[f32], &[f32], &[f32]),
    dx: &mut [f32],
    saved: RowSaved,
    visible: (usize, KeepRow),
) {
    match path {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe { backward_row_avx512(row, dx, saved, visible) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe { backward_row_avx2(row, dx, saved, visible) },
        _ => backward_row(row, dx, saved, visible),
    }
}

/// [`backward_row`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn backward_row_avx512(
    row: (&[f32], &[f32], &[f32]),
    dx: &mut [f32],
    saved: RowSaved,
    visible: (usize, KeepRow),
) {
    backward_row(row, dx, saved, visible)
}

/// [`backward_row`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn backward_row_avx2(
    row: (&[f32], &[f32], &[f32]),
    dx: &mut [f32],
    saved: RowSaved,
    visible: (usize, KeepRow),
) {
    backward_row(row, dx, saved, visible)
}

/// One row's gradient into `dx`.
#[inline(always)]
fn backward_row(
    (x, out, g): (&[f32], &[f32], &[f32]),
    dx: &mut [f32],
    saved: RowSaved,
    (limit, keep): (usize, KeepRow),
) {
    let RowSaved {
        shift,
        divisor,
        has_mass,
    } = saved;
    // `div`: d(e / D) gives g / D to e and Σ −(g · out / D) to D; `where` passes the latter
    // to the sum only where the sum is the divisor; `sum` hands it back to every
    // exponential. (Every entry counts here: a masked entry's weight is 0, but an infinite
    // g times it is NaN.)
    let to_divisor = out
        .iter()
        .zip(g)
        .fold(0.0f32, |acc, (&o, &g)| acc + -(g * o / divisor));
    let to_sum = if has_mass { to_divisor } else { 0.0 };
    // Then `mul` by the mask (by 1, which changes nothing), `exp` (times its output) and
    // `where` on the mask: a masked entry gets 0.
    let (near, far) = dx.split_at_mut(limit);
    for (j, (d, (&s, &g))) in near.iter_mut().zip(x.iter().zip(g)).enumerate() {
        let to_exps = g / divisor + to_sum;
        let e = exp(s - shift);
        *d = if keep.keeps(j) { to_exps * e } else { 0.0 };
    }
    far.fill(0.0);
}
