//! Packing: copying the blocks of both operands that one stretch of the product reads into
//! the order in which the micro-kernel reads them.
//!
//! The micro-kernel computes an `MR × NR` tile of the result as `kc` outer products, one per
//! step along `k`: a column of `MR` values of `a` times a row of `NR` values of `b`. Packing
//! puts each step's values side by side, so the kernel walks both buffers forwards, one
//! cache line after the next, whatever the layout of the operands was. Rows or columns past
//! the edge of the matrix are packed as zeros, so the kernel never needs a shorter tile;
//! their results are simply not stored.

use super::View;

/// Packs rows `i0..i0 + mc` and columns `p0..p0 + kc` of `a` as `⌈mc / MR⌉` panels of
/// `MR` rows: `out[q·kc·MR + p·MR + r] = a[i0 + q·MR + r, p0 + p]`, zeros past row `mc`.
pub(super) fn pack_a<const MR: usize>(
    a: View,
    (i0, mc): (usize, usize),
    (p0, kc): (usize, usize),
    out: &mut [f32],
) {
    let panels = out[..mc.div_ceil(MR) * kc * MR].chunks_exact_mut(kc * MR);
    for (q, panel) in panels.enumerate() {
        let first = i0 + q * MR;
        let rows = MR.min(i0 + mc - first);
        if a.transposed {
            // Stored as [k, m]: the rows of one step are side by side.
            let step = |p: usize| &a.data[(p0 + p) * a.rows + first..][..rows];
            copy_steps::<MR>(rows, step, panel);
        } else {
            // Stored as [m, k]: each row is contiguous.
            let row = |r: usize| &a.data[(first + r) * a.cols + p0..][..kc];
            interleave::<MR>(rows, row, panel);
        }
    }
}

/// Packs rows `p0..p0 + kc` and columns `j0..j0 + nr` (`nr ≤ NR`) of `b` as one panel:
/// `out[p·NR + c] = b[p0 + p, j0 + c]`, zeros past column `nr`.
pub(super) fn pack_b<const NR: usize>(
    b: View,
    (p0, kc): (usize, usize),
    (j0, nr): (usize, usize),
    out: &mut [f32],
) {
    let panel = &mut out[..kc * NR];
    if b.transposed {
        // Stored as [n, k] (a weight read as its transpose): each column is contiguous.
        let column = |c: usize| &b.data[(j0 + c) * b.rows + p0..][..kc];
        interleave::<NR>(nr, column, panel);
    } else {
        // Stored as [k, n]: the columns of one step are side by side.
        let step = |p: usize| &b.data[(p0 + p) * b.cols + j0..][..nr];
        copy_steps::<NR>(nr, step, panel);
    }
}

/// Fills a panel of `W`-value steps from `lines` stored apart: `panel[p·W + i] =
/// line(i)[p]` for the first `count` lines, zeros for the rest.
fn interleave<'a, const W: usize>(
    count: usize,
    line: impl Fn(usize) -> &'a [f32],
    panel: &mut [f32],
) {
    if count == W {
        // A whole panel, in blocks of `STEPS` steps: each line gives `STEPS` values side by
        // side (one read of known size), spread over the block's steps; then the steps
        // left over, each gathering one value of each line.
        const STEPS: usize = 8;
        let lines: [&[f32]; W] = std::array::from_fn(line);
        let kc = panel.len() / W;
        let whole = kc - kc % STEPS;
        for (block, p0) in panel[..whole * W]
            .chunks_exact_mut(STEPS * W)
            .zip((0..whole).step_by(STEPS))
        {
            for (i, line) in lines.iter().enumerate() {
                let values: &[f32; STEPS] =
                    line[p0..p0 + STEPS].try_into().expect("STEPS values");
                for (step, &v) in block.chunks_exact_mut(W).zip(values) {
                    step[i] = v;
                }
            }
        }
        for (p, step) in panel[whole * W..].chunks_exact_mut(W).enumerate() {
            let step: &mut [f32; W] = step.try_into().expect("chunks of W");
            *step = std::array::from_fn(|i| lines[i][whole + p]);
        }
    } else {
        for i in 0..W {
            let steps = panel.chunks_exact_mut(W);
            if i < count {
                steps.zip(line(i)).for_each(|(step, &v)| step[i] = v);
            } else {
                steps.for_each(|step| step[i] = 0.0);
            }
        }
    }
}

/// Fills a panel of `W`-value steps from steps stored side by side: `panel[p·W..][..count]
/// = step(p)`, zeros after them.
fn copy_steps<'a, const W: usize>(
    count: usize,
    step: impl Fn(usize) -> &'a [f32],
    panel: &mut [f32],
) {
    for (p, out) in panel.chunks_exact_mut(W).enumerate() {
        let values = step(p);
        if let (Ok(out), Ok(values)) = (
            <&mut [f32; W]>::try_from(&mut *out),
            <&[f32; W]>::try_from(values),
        ) {
            *out = *values; // a whole step: a copy of known size, a few vector moves
        } else {
            out[..count].copy_from_slice(values);
            out[count..].fill(0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MR: usize = 12;
    const NR: usize = 32;

    /// a[i, j] = 100·i + j, stored as asked.
    fn numbered(rows: usize, cols: usize, transposed: bool) -> Vec<f32> {
        let value = |i: usize, j: usize| (100 * i + j) as f32;
        if transposed {
            (0..cols)
                .flat_map(|j| (0..rows).map(move |i| value(i, j)))
                .collect()
        } else {
            (0..rows)
                .flat_map(|i| (0..cols).map(move |j| value(i, j)))
                .collect()
        }
    }

    #[test]
    fn a_panels_hold_mr_rows_per_step_and_zeros_past_the_edge() {
        // 14 rows from row 3, columns 2..7 of a [20, 9] matrix: two panels, the second
        // with 2 real rows.
        for transposed in [false, true] {
            let data = numbered(20, 9, transposed);
            let a = View {
                data: &data,
                rows: 20,
                cols: 9,
                transposed,
            };
            let mut out = vec![f32::NAN; 2 * 5 * MR];
            pack_a::<MR>(a, (3, 14), (2, 5), &mut out);
            for q in 0..2 {
                for p in 0..5 {
                    for r in 0..MR {
                        let i = q * MR + r;
                        let want = if i < 14 {
                            (100 * (3 + i) + 2 + p) as f32
                        } else {
                            0.0
                        };
                        assert_eq!(
                            out[q * 5 * MR + p * MR + r],
                            want,
                            "transposed {transposed}, q {q} p {p} r {r}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn b_panels_hold_nr_columns_per_step_and_zeros_past_the_edge() {
        // Rows 1..4 and 5 columns from column 6 of a [6, 40] matrix.
        for transposed in [false, true] {
            let data = numbered(6, 40, transposed);
            let b = View {
                data: &data,
                rows: 6,
                cols: 40,
                transposed,
            };
            let mut out = vec![f32::NAN; 3 * NR];
            pack_b::<NR>(b, (1, 3), (6, 5), &mut out);
            for p in 0..3 {
                for c in 0..NR {
                    let want = if c < 5 {
                        (100 * (1 + p) + 6 + c) as f32
                    } else {
                        0.0
                    };
                    assert_eq!(
                        out[p * NR + c],
                        want,
                        "transposed {transposed}, p {p} c {c}"
                    );
                }
            }
        }
    }
}
