//! Elementwise kernels: one input (map), two inputs with broadcasting, and `where`.
//!
//! Broadcasting kernels walk the output a row at a time ([`BroadcastRows`]): along a row
//! each operand is either a contiguous slice or one repeated value, so the inner loop is a
//! plain iteration over slices that the compiler can vectorise, and the index arithmetic
//! happens once per row instead of once per element.

use super::BroadcastRows;

/// Applies `f` to every element.
pub(crate) fn map(a: &[f32], f: impl Fn(f32) -> f32) -> Vec<f32> {
    a.iter().map(|&x| f(x)).collect()
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
    f: impl Fn(f32, f32) -> f32,
) -> Vec<f32> {
    let rows = BroadcastRows::new(&[a_shape, b_shape], out);
    let (n, sa, sb) = (rows.inner, rows.inner_steps[0], rows.inner_steps[1]);
    let mut result = Vec::with_capacity(out.iter().product());
    for (ia, ib) in rows.starts(0).zip(rows.starts(1)) {
        match (row(a, ia, sa, n), row(b, ib, sb, n)) {
            (Row::Slice(x), Row::Slice(y)) => {
                result.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)));
            }
            (Row::Slice(x), Row::Repeat(y)) => result.extend(x.iter().map(|&x| f(x, y))),
            (Row::Repeat(x), Row::Slice(y)) => result.extend(y.iter().map(|&y| f(x, y))),
            (Row::Repeat(x), Row::Repeat(y)) => {
                let v = f(x, y);
                result.extend(std::iter::repeat_n(v, n));
            }
        }
    }
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
    let mut result = Vec::with_capacity(out.iter().product());
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
    let mut result = Vec::with_capacity(out.iter().product());
    for start in rows.starts(0) {
        match row(a, start, step, n) {
            Row::Slice(x) => result.extend_from_slice(x),
            Row::Repeat(x) => result.extend(std::iter::repeat_n(x, n)),
        }
    }
    result
}
