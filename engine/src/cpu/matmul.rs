//! Matrix multiplication, batched over leading dimensions that broadcast.

use super::StridedOffsets;
use super::strided::broadcast_strides;

/// `out[m, n] += a[m, k] · b[k, n]` for one pair of row-major matrices.
///
/// The loop order is `i → p → j`: the innermost loop walks a row of `b` and a row of `out`,
/// both contiguous, instead of a column of `b` (a stride of `n` floats per step). This is the
/// plain, cache-friendly version; it is not blocked or multi-threaded.
fn matmul_one(a: &[f32], b: &[f32], out: &mut [f32], m: usize, k: usize, n: usize) {
    for i in 0..m {
        let out_row = &mut out[i * n..(i + 1) * n];
        for p in 0..k {
            let a_ip = a[i * k + p];
            let b_row = &b[p * n..(p + 1) * n];
            for (o, &bv) in out_row.iter_mut().zip(b_row) {
                *o += a_ip * bv;
            }
        }
    }
}

/// Batched matmul: `a: [..batch_a, m, k]`, `b: [..batch_b, k, n]`, batches broadcast to
/// `batch` (already computed by the caller). Returns `[..batch, m, n]` values.
pub(crate) fn matmul(
    a: &[f32],
    a_shape: &[usize],
    b: &[f32],
    b_shape: &[usize],
    batch: &[usize],
) -> Vec<f32> {
    let (ra, rb) = (a_shape.len(), b_shape.len());
    let (m, k, n) = (a_shape[ra - 2], a_shape[ra - 1], b_shape[rb - 1]);
    let count: usize = batch.iter().product();
    let mut out = vec![0.0; count * m * n];
    // Offsets count whole matrices; broadcast batch dims get stride 0.
    let a_mats = StridedOffsets::new(batch, broadcast_strides(&a_shape[..ra - 2], batch));
    let b_mats = StridedOffsets::new(batch, broadcast_strides(&b_shape[..rb - 2], batch));
    for (idx, (ia, ib)) in a_mats.zip(b_mats).enumerate() {
        matmul_one(
            &a[ia * m * k..(ia + 1) * m * k],
            &b[ib * k * n..(ib + 1) * k * n],
            &mut out[idx * m * n..(idx + 1) * m * n],
            m,
            k,
            n,
        );
    }
    out
}
