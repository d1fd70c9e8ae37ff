//! Everything the page prints, section by section: `cargo run -p chapter10`.

use std::fmt::Write;

use engine::Tensor;
use lesson::{COLUMNS, panic_message, wrap};

use crate::mismatch::{
    checked_energies, energies, energies_forgotten_unsqueeze, example, trace, weights,
};

/// The largest absolute difference between two tensors of one shape.
fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).abs().max().item()
}

/// Section 1: the forgotten `unsqueeze`, refused, then silent.
pub fn mismatch_section() -> String {
    let mut out = String::from("== 1. the forgotten unsqueeze\n");
    // ANCHOR: tour_mismatch
    let (query, keys, _) = example(2, 3, 4); // B = 2 queries, K = 3 keys each, h = 4
    let refused = panic_message(|| {
        energies_forgotten_unsqueeze(&query, &keys);
    });
    let (query, keys, v) = example(3, 3, 4); // B = K = 3
    let wrong = energies_forgotten_unsqueeze(&query, &keys);
    let right = energies(&query, &keys);
    // ANCHOR_END: tour_mismatch
    writeln!(out, "B = 2, K = 3, the unsqueeze forgotten:").unwrap();
    writeln!(out, "{}", wrap(&refused, COLUMNS)).unwrap();
    writeln!(out, "B = K = 3, the unsqueeze forgotten: no error").unwrap();
    writeln!(
        out,
        "  shapes: wrong {:?}, right {:?}",
        wrong.shape(),
        right.shape()
    )
    .unwrap();
    writeln!(
        out,
        "  largest difference: energies {:.3}, weights {:.3}",
        max_abs_diff(&wrong, &right),
        max_abs_diff(&weights(&wrong, &v), &weights(&right, &v))
    )
    .unwrap();
    writeln!(
        out,
        "  the key with the most weight, per example: right {:?}, wrong {:?}",
        most_attended(&weights(&right, &v)),
        most_attended(&weights(&wrong, &v))
    )
    .unwrap();
    let caught = panic_message(|| {
        checked_energies(&query.unsqueeze(1), &keys);
    });
    writeln!(out, "the check at the boundary, given a [B, 1, h] query:").unwrap();
    writeln!(out, "{}", wrap(&caught, COLUMNS)).unwrap();
    writeln!(out, "the shapes, step by step:").unwrap();
    write!(out, "{}", trace(&query, &keys)).unwrap();
    out
}

/// For each example of `weights: [B, K]`, the key with the most weight.
fn most_attended(weights: &Tensor) -> Vec<usize> {
    weights
        .argmax(-1)
        .to_vec()
        .iter()
        .map(|&i| i as usize)
        .collect()
}

/// Section 3, last part: clipping and Adam's step.
pub fn adam_section() -> String {
    crate::adam_clip::section()
}

/// Section 4: the NaN of an empty row, where anomaly mode finds it, and each fill.
pub fn nan_section() -> String {
    use crate::nan_rows::{
        RowFill, anomaly_check, anomaly_report, backward_anomaly_report,
        empty_row_batch, forward, gradient_table, health,
    };
    let mut out = String::from("== 4. a fully masked row\n");
    writeln!(out, "the -inf fill, every step of the forward pass:").unwrap();
    for step in health(&forward(&empty_row_batch(), RowFill::NegInf)) {
        writeln!(out, "  {step}").unwrap();
    }
    writeln!(out, "anomaly mode, forward and backward:").unwrap();
    writeln!(out, "{}", wrap(&anomaly_report(), COLUMNS)).unwrap();
    writeln!(out, "anomaly mode, backward only:").unwrap();
    writeln!(out, "{}", wrap(&backward_anomaly_report(), COLUMNS)).unwrap();
    match anomaly_check(RowFill::Safe) {
        Ok(loss) => writeln!(
            out,
            "Fill::Safe under anomaly mode: no report, loss {loss:.4}"
        ),
        Err(report) => writeln!(out, "Fill::Safe under anomaly mode:\n{report}"),
    }
    .unwrap();
    writeln!(out, "what reaches the empty example under each fill:").unwrap();
    for row in gradient_table() {
        writeln!(out, "{}", wrap(&row.to_string(), COLUMNS)).unwrap();
    }
    out
}

/// Section 5: masks the wrong way round, and the checks that catch each.
pub fn mask_section() -> String {
    let mut out = String::from("== 5. masks the wrong way round\n");
    let verdict =
        |c: &crate::mask_sense::Check| if c.passed { "pass" } else { "FAIL" };
    writeln!(
        out,
        "{:<36} {:>15} {:>22}",
        "", "rows sum to 1", "no weight on padding"
    )
    .unwrap();
    writeln!(
        out,
        "{:<36} {:>7} {:>7} {:>14} {:>7}",
        "", "wrong", "fixed", "wrong", "fixed"
    )
    .unwrap();
    let pitfalls = crate::mask_sense::pitfalls();
    for pitfall in &pitfalls {
        let [[sums, padding], [fixed_sums, fixed_padding]] = pitfall.checks();
        writeln!(
            out,
            "{:<36} {:>7} {:>7} {:>14} {:>7}",
            pitfall.name,
            verdict(&sums),
            verdict(&fixed_sums),
            verdict(&padding),
            verdict(&fixed_padding)
        )
        .unwrap();
    }
    writeln!(
        out,
        "what the wrong versions give, per row of the 2 × 4 queries:"
    )
    .unwrap();
    for pitfall in &pitfalls {
        let [[sums, padding], _] = pitfall.checks();
        let shown = if padding.passed { sums } else { padding };
        let line = format!("  {}: {}", pitfall.name, shown);
        writeln!(out, "{}", wrap(&line, COLUMNS)).unwrap();
    }
    out
}

/// Section 6: the article's two tests and the stronger ones, on eight
/// implementations.
pub fn tests_section() -> String {
    format!(
        "== 6. the article's tests, and stronger ones\n{}\n",
        crate::article_tests::table()
    )
}

/// Everything the page prints from the tour.
pub fn tour() -> String {
    [
        mismatch_section(),
        adam_section(),
        nan_section(),
        mask_section(),
        tests_section(),
    ]
    .join("\n")
}
