//! Elementwise kernels: one input (map), two inputs with broadcasting, and `where`.
//!
//! Broadcasting kernels walk the output a row at a time ([`BroadcastRows`]): along a row
//! each operand is either a contiguous slice or one repeated value, so the inner loop is a
//! plain iteration over slices that the compiler can vectorise, and the index arithmetic
//! happens once per row instead of once per element.
//!
//! `map` and `zip_broadcast` fill their output in blocks that large tensors share out
//! between threads (`parallel::for_each_block`); each element depends on its index alone.

use super::BroadcastRows;
use super::parallel::for_each_block;
use crate::spare;

/// Applies `f` to every element.
pub(crate) fn map(a: &[f32], f: impl Fn(f32) -> f32 + Sync) -> Vec<f32> {
    let mut out = spare::for_overwrite(a.len());
    for_each_block(&mut out, 1, |start, block| {
        for (o, &x) in block.iter_mut().zip(&a[start..]) {
            *o = f(x);
        }
    });
    out
}

/// One row of an operand: `len` values from `start`, or the value at `start` repeated.
fn row(data: &[f32], start: usize, step: usize, len: usize) -> Row<'_> {
    if step == 1 {
        Row::Slice(&data[start..start + len])
    } else {
        Row::Repeat(data[start])
    }
}

enum Row<'a> {
    Slice(&'a [f32]),
    Repeat(f32),
}

/// Applies `f` to paired elements of `a` and `b`, each broadcast to `out`.
pub(crate) fn zip_broadcast(
    a: &[f32],
    a_shape: &[usize],
    b: &[f32],
    b_shape: &[usize],
    out: &[usize],
    f: impl Fn(f32, f32) -> f32 + Sync,
) -> Vec<f32> {
    let rows = BroadcastRows::new(&[a_shape, b_shape], out);
    let (n, sa, sb) = (rows.inner, rows.inner_steps[0], rows.inner_steps[1]);
    let mut result = spare::for_overwrite(out.iter().product());
    if result.is_empty() {
        return result;
    }
    let starts: Vec<(usize, usize)> = rows.starts(0).zip(rows.starts(1)).collect();
    // A block may begin or end inside a row: along a row each operand moves by its step, so
    // the stretch from position p starts at the row's start + step · p.
    for_each_block(&mut result, 1, |start, block| {
        let mut done = 0;
        while done < block.len() {
            let (r, p) = ((start + done) / n, (start + done) % n);
            let len = (n - p).min(block.len() - done);
            let (ia, ib) = starts[r];
            let dst = &mut block[done..done + len];
            match (row(a, ia + sa * p, sa, len), row(b, ib + sb * p, sb, len)) {
                (Row::Slice(x), Row::Slice(y)) => {
                    for ((d, &x), &y) in dst.iter_mut().zip(x).zip(y) {
                        *d = f(x, y);
                    }
                }
                (Row::Slice(x), Row::Repeat(y)) => {
                    for (d, &x) in dst.iter_mut().zip(x) {
                        *d = f(x, y);
                    }
                }
                (Row::Repeat(x), Row::Slice(y)) => {
                    for (d, &y) in dst.iter_mut().zip(y) {
                        *d = f(x, y);
                    }
                }
                (Row::Repeat(x), Row::Repeat(y)) => dst.fill(f(x, y)),
            }
            done += len;
        }
    });
    result
}

/// `cond != 0 ? a : b`, each of the three broadcast to `out`.
pub(crate) fn select(
    cond: (&[f32], &[usize]),
    a: (&[f32], &[usize]),
    b: (&[f32], &[usize]),
    out: &[usize],
) -> Vec<f32> {
    let rows = BroadcastRows::new(&[cond.1, a.1, b.1], out);
    let n = rows.inner;
    let [sc, sa, sb] = [0, 1, 2].map(|i| rows.inner_steps[i]);
    let mut result = spare::with_capacity(out.iter().product());
    for ((ic, ia), ib) in rows.starts(0).zip(rows.starts(1)).zip(rows.starts(2)) {
        for k in 0..n {
            let pick = cond.0[ic + sc * k] != 0.0;
            result.push(if pick {
                a.0[ia + sa * k]
            } else {
                b.0[ib + sb * k]
            });
        }
    }
    result
}

/// Copies `a` broadcast to `out` (the forward of `expand`).
pub(crate) fn broadcast_to(a: &[f32], a_shape: &[usize], out: &[usize]) -> Vec<f32> {
    let rows = BroadcastRows::new(&[a_shape], out);
    let (n, step) = (rows.inner, rows.inner_steps[0]);
    let mut result = spare::with_capacity(out.iter().product());
    for start in rows.starts(0) {
        match row(a, start, step, n) {
            Row::Slice(x) => result.extend_from_slice(x),
            Row::Repeat(x) => result.extend(std::iter::repeat_n(x, n)),
        }
    }
    result
}
