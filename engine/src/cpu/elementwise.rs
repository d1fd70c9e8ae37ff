//! Elementwise kernels: one input (map), two inputs with broadcasting, and `where`.

use super::StridedOffsets;

/// Applies `f` to every element.
pub(crate) fn map(a: &[f32], f: impl Fn(f32) -> f32) -> Vec<f32> {
    a.iter().map(|&x| f(x)).collect()
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
    if a_shape == b_shape {
        return a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect();
    }
    StridedOffsets::broadcast(a_shape, out)
        .zip(StridedOffsets::broadcast(b_shape, out))
        .map(|(i, j)| f(a[i], b[j]))
        .collect()
}

/// `cond != 0 ? a : b`, each of the three broadcast to `out`.
pub(crate) fn select(
    cond: (&[f32], &[usize]),
    a: (&[f32], &[usize]),
    b: (&[f32], &[usize]),
    out: &[usize],
) -> Vec<f32> {
    StridedOffsets::broadcast(cond.1, out)
        .zip(StridedOffsets::broadcast(a.1, out))
        .zip(StridedOffsets::broadcast(b.1, out))
        .map(|((c, i), j)| if cond.0[c] != 0.0 { a.0[i] } else { b.0[j] })
        .collect()
}

/// Copies `a` broadcast to `out` (the forward of `expand`).
pub(crate) fn broadcast_to(a: &[f32], a_shape: &[usize], out: &[usize]) -> Vec<f32> {
    StridedOffsets::broadcast(a_shape, out)
        .map(|i| a[i])
        .collect()
}
