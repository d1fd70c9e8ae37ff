//! The softmax over the visible entries of each row, forward and backward, fused: the same
//! bits as the composed formula that defines it (`ops/safe_softmax.rs`), in one pass for
//! the maximum and a few over the row, where the composed form makes a dozen tensors of
//! the size of the scores.
//!
//! Every step below is the step of the composed form for one element, in the same order:
//! the maximum is the maximum reduction's (NaN wins), the sums are the sum reduction's
//! (one running sum from 0, in order along the row), `exp` is the engine's, and each
//! multiplication by the 0/1 mask is written out, as the composed form multiplies. The
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
    /// The mask of row `r` at entry `j`: 1 (visible) or 0, as the composed form's keep
    /// tensor holds it.
    #[inline(always)]
    fn keep(&self, r: usize, j: usize) -> f32 {
        if let Some((queries, offset)) = self.causal
            && j > (r % queries).saturating_add(offset)
        {
            return 0.0;
        }
        match self.keep {
            Some((values, rows, step)) => values[rows[r] + j * step],
            None => 1.0,
        }
    }
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
    let mut shift = vec![0.0; rows];
    let mut divisor = vec![1.0; rows];
    let mut has_mass = vec![false; rows];
    for (r, ((shift, divisor), has_mass)) in shift
        .iter_mut()
        .zip(&mut divisor)
        .zip(&mut has_mass)
        .enumerate()
    {
        let row = &x[r * n..(r + 1) * n];
        // The largest visible score (the maximum reduction of `keep ? x : f32::MIN`, NaN
        // winning), and whether anything is visible (the maximum of the mask above 0).
        let mut max = f32::NEG_INFINITY;
        let mut visible = false;
        for (j, &s) in row.iter().enumerate() {
            let kept = visibility.keep(r, j) != 0.0;
            visible |= kept;
            let v = if kept { s } else { f32::MIN };
            if !max.is_nan() && (v.is_nan() || v > max) {
                max = v;
            }
        }
        let chosen = if visible { max } else { 0.0 };
        *shift = if chosen > f32::NEG_INFINITY {
            chosen
        } else {
            0.0
        };
        // The exponentials' sum, one running sum in order.
        let mut sum = 0.0f32;
        for (j, &s) in row.iter().enumerate() {
            let k = visibility.keep(r, j);
            let e = exp(if k != 0.0 { s - *shift } else { 0.0 }) * k;
            sum += e;
        }
        *has_mass = sum != 0.0; // a NaN sum divides, so the row is NaN
        *divisor = if *has_mass { sum } else { 1.0 };
    }
    let path = kernels::active();
    let mut out = spare::for_overwrite(x.len());
    let (shift_ref, divisor_ref) = (&shift, &divisor);
    for_each_block(&mut out, n, |start, block| {
        weights_on(
            path,
            &x[start..start + block.len()],
            block,
            (start / n, n),
            (shift_ref, divisor_ref),
            visibility,
        );
    });
    let saved = Saved {
        shift,
        divisor,
        has_mass,
    };
    (out, saved)
}

/// `exp(x − shift) · keep / divisor` for the rows from `first`, on `path`.
fn weights_on(
    path: KernelPath,
    x: &[f32],
    out: &mut [f32],
    (first, n): (usize, usize),
    saved: (&[f32], &[f32]),
    visibility: Visibility,
) {
    match path {
        // SAFETY: `kernels::active` names only paths this CPU supports.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx512 => unsafe {
            weights_avx512(x, out, (first, n), saved, visibility)
        },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        KernelPath::Avx2 => unsafe {
            weights_avx2(x, out, (first, n), saved, visibility)
        },
        _ => weights_portable(x, out, (first, n), saved, visibility),
    }
}

/// [`weights_portable`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn weights_avx512(
    x: &[f32],
    out: &mut [f32],
    rows: (usize, usize),
    saved: (&[f32], &[f32]),
    visibility: Visibility,
) {
    weights_portable(x, out, rows, saved, visibility)
}

/// [`weights_portable`] compiled for AVX2 with FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn weights_avx2(
    x: &[f32],
    out: &mut [f32],
    rows: (usize, usize),
    saved: (&[f32], &[f32]),
    visibility: Visibility,
) {
    weights_portable(x, out, rows, saved, visibility)
}

#[inline(always)]
fn weights_portable(
    x: &[f32],
    out: &mut [f32],
    (first, n): (usize, usize),
    (shift, divisor): (&[f32], &[f32]),
    visibility: Visibility,
) {
    for (i, (row, out)) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)).enumerate()
    {
        let r = first + i;
        let (shift, divisor) = (shift[r], divisor[r]);
        for (j, (o, &s)) in out.iter_mut().zip(row).enumerate() {
            let k = visibility.keep(r, j);
            *o = (exp(if k != 0.0 { s - shift } else { 0.0 }) * k) / divisor;
        }
    }
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
            let (shift, divisor) = (saved.shift[r], saved.divisor[r]);
            // `div`: d(e / D) gives g / D to e and Σ −(g · out / D) to D; `where` passes
            // the latter to the sum only where the sum is the divisor; `sum` hands it back
            // to every exponential.
            let to_divisor = out
                .iter()
                .zip(g)
                .fold(0.0f32, |acc, (&o, &g)| acc + -(g * o / divisor));
            let to_sum = if saved.has_mass[r] { to_divisor } else { 0.0 };
            for (j, ((d, &s), &g)) in dx.iter_mut().zip(x).zip(g).enumerate() {
                let k = visibility.keep(r, j);
                let to_exps = g / divisor + to_sum;
                // `mul` by the mask, `exp` (times its output), `where` on the mask.
                let e = exp(if k != 0.0 { s - shift } else { 0.0 });
                let to_shifted = (to_exps * k) * e;
                *d = if k != 0.0 { to_shifted } else { 0.0 };
            }
        }
    });
    dx
}
