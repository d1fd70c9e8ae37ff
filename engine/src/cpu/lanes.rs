//! Sums in a fixed number of partial sums: the order in which a kernel adds is part of its
//! result, and one sum per lane, added in order at the end, is an order that vectorises
//! (a single running sum cannot, since float addition is not associative) and gives the
//! same bits at every SIMD width.

/// The number of partial sums.
pub(crate) const LANES: usize = 8;

/// The sum of `x` in [`LANES`] partial sums (element `i` goes to sum `i % LANES`), added in
/// order at the end, then the tail: a fixed order that vectorises.
#[inline(always)]
pub(crate) fn lane_sum(x: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for chunk in &mut chunks {
        for j in 0..LANES {
            lanes[j] += chunk[j];
        }
    }
    let mut sum = lanes.iter().sum::<f32>();
    for &v in chunks.remainder() {
        sum += v;
    }
    sum
}

/// `Σ x[i] · y[i]` in [`LANES`] partial sums (element `i` goes to sum `i % LANES`), added
/// in order at the end, then the tail: a fixed order that vectorises.
#[inline(always)]
pub(crate) fn dot(x: &[f32], y: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let whole = x.len() - x.len() % LANES;
    for (xc, yc) in x[..whole]
        .chunks_exact(LANES)
        .zip(y[..whole].chunks_exact(LANES))
    {
        for j in 0..LANES {
            lanes[j] += xc[j] * yc[j];
        }
    }
    let mut sum = lanes.iter().sum::<f32>();
    for (&xv, &yv) in x[whole..].iter().zip(&y[whole..]) {
        sum += xv * yv;
    }
    sum
}
