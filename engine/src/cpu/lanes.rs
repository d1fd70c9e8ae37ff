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

/// The largest value of `x` ignoring NaNs, as [`f32::max`] defines it (`-∞` for an empty
/// slice), in [`LANES`] partial maxima so that it vectorises. The maximum does not depend
/// on the order, so these are the bits of a plain fold.
#[inline(always)]
pub(crate) fn lane_max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for chunk in &mut chunks {
        for j in 0..LANES {
            lanes[j] = lanes[j].max(chunk[j]);
        }
    }
    let mut max = lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for &v in chunks.remainder() {
        max = max.max(v);
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_max_is_the_plain_fold_at_every_length_nans_ignored() {
        let values: Vec<f32> =
            (0..37).map(|i| ((i * 7919 % 101) as f32) - 50.0).collect();
        for len in 0..values.len() {
            let mut x = values[..len].to_vec();
            if len > 3 {
                x[3] = f32::NAN;
            }
            let plain = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(lane_max(&x).to_bits(), plain.to_bits(), "length {len}");
        }
        assert_eq!(lane_max(&[]), f32::NEG_INFINITY);
    }
}
