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
use super::blocked::{MR, NR};

/// Packs rows `i0..i0 + mc` and columns `p0..p0 + kc` of `a` as `⌈mc / MR⌉` panels of
/// `MR` rows: `out[q·kc·MR + p·MR + r] = a[i0 + q·MR + r, p0 + p]`, zeros past row `mc`.
pub(super) fn pack_a(a: View, (i0, mc): (usize, usize), (p0, kc): (usize, usize), out: &mut [f32]) {
    let panels = mc.div_ceil(MR);
    let out = &mut out[..panels * kc * MR];
    if a.transposed {
        // Stored as [k, m]: for each p, the rows of the block are contiguous.
        for p in 0..kc {
            let start = (p0 + p) * a.rows + i0;
            let column = &a.data[start..start + mc];
            let panels = out.chunks_exact_mut(kc * MR);
            for (panel, rows) in panels.zip(column.chunks(MR)) {
                let step = &mut panel[p * MR..(p + 1) * MR];
                if let (Ok(step), Ok(rows)) = (
                    <&mut [f32; MR]>::try_from(&mut *step),
                    <&[f32; MR]>::try_from(rows),
                ) {
                    *step = *rows; // a whole step: a copy of known size
                } else {
                    step[..rows.len()].copy_from_slice(rows);
                    step[rows.len()..].fill(0.0);
                }
            }
        }
    } else {
        // Stored as [m, k]: each row of the block is contiguous.
        for (q, panel) in out.chunks_exact_mut(kc * MR).enumerate() {
            let first = q * MR;
            let row = |r: usize| {
                let start = (i0 + first + r) * a.cols + p0;
                &a.data[start..start + kc]
            };
            if first + MR <= mc {
                // A whole panel: each step gathers one value of each of the MR rows.
                let rows: [&[f32]; MR] = std::array::from_fn(row);
                for (p, step) in panel.chunks_exact_mut(MR).enumerate() {
                    let step: &mut [f32; MR] = step.try_into().expect("chunks of MR");
                    *step = std::array::from_fn(|r| rows[r][p]);
                }
            } else {
                for r in 0..MR {
                    if first + r < mc {
                        for (step, &v) in panel.chunks_exact_mut(MR).zip(row(r)) {
                            step[r] = v;
                        }
                    } else {
                        panel.chunks_exact_mut(MR).for_each(|step| step[r] = 0.0);
                    }
                }
            }
        }
    }
}

/// Packs rows `p0..p0 + kc` and columns `j0..j0 + nr` (`nr ≤ NR`) of `b` as one panel:
/// `out[p·NR + c] = b[p0 + p, j0 + c]`, zeros past column `nr`.
pub(super) fn pack_b(b: View, (p0, kc): (usize, usize), (j0, nr): (usize, usize), out: &mut [f32]) {
    let out = &mut out[..kc * NR];
    if b.transposed {
        // Stored as [n, k] (a weight read as its transpose): each column is contiguous.
        let column = |c: usize| {
            let start = (j0 + c) * b.rows + p0;
            &b.data[start..start + kc]
        };
        if nr == NR {
            // A whole panel: each step gathers one value of each of the NR columns.
            let columns: [&[f32]; NR] = std::array::from_fn(column);
            for (p, step) in out.chunks_exact_mut(NR).enumerate() {
                let step: &mut [f32; NR] = step.try_into().expect("chunks of NR");
                *step = std::array::from_fn(|c| columns[c][p]);
            }
        } else {
            for c in 0..NR {
                if c < nr {
                    for (step, &v) in out.chunks_exact_mut(NR).zip(column(c)) {
                        step[c] = v;
                    }
                } else {
                    out.chunks_exact_mut(NR).for_each(|step| step[c] = 0.0);
                }
            }
        }
    } else {
        // Stored as [k, n]: each row of the block is contiguous.
        for (p, step) in out.chunks_exact_mut(NR).enumerate() {
            let start = (p0 + p) * b.cols + j0;
            if nr == NR {
                // A whole row of the panel: a copy of known size, a few vector moves.
                let step: &mut [f32; NR] = step.try_into().expect("chunks of NR");
                *step = b.data[start..start + NR].try_into().expect("NR values");
            } else {
                step[..nr].copy_from_slice(&b.data[start..start + nr]);
                step[nr..].fill(0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            pack_a(a, (3, 14), (2, 5), &mut out);
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
            pack_b(b, (1, 3), (6, 5), &mut out);
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
