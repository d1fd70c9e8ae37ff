//! The page quotes what the code prints: each section of the tour (`cargo run -p
//! chapter10`) and the tables of the `sweep` and `causal` examples (`data/sweep.txt`,
//! `data/causal.txt`) appear in the page verbatim as ```text blocks, and every decimal
//! number the prose quotes is one of theirs, so a change to the code that changes a
//! number fails here until the page is updated too.

use chapter10::tour;

const PAGE: &str = include_str!("../../../book/src/ch10-pitfalls.md");
const SWEEP: &str = include_str!("../data/sweep.txt");
const CAUSAL: &str = include_str!("../data/causal.txt");

#[test]
fn the_page_quotes_every_section_of_the_tour_exactly() {
    lesson::assert_quoted(PAGE, "section 1", &tour::mismatch_section());
    lesson::assert_quoted(
        PAGE,
        "section 3, clipping and Adam",
        &tour::adam_section(),
    );
    lesson::assert_quoted(PAGE, "section 4", &tour::nan_section());
    lesson::assert_quoted(PAGE, "section 5", &tour::mask_section());
    lesson::assert_quoted(PAGE, "section 6", &tour::tests_section());
}

#[test]
fn the_page_quotes_the_recorded_tables() {
    lesson::assert_quoted(PAGE, "the sweep's tables (data/sweep.txt)", SWEEP);
    lesson::assert_quoted(PAGE, "section 7's table (data/causal.txt)", CAUSAL);
}

#[test]
fn every_decimal_the_prose_quotes_is_printed_by_the_tour_or_a_recorded_table() {
    let printed = format!("{}{SWEEP}{CAUSAL}", tour::tour());
    let missing: Vec<String> = lesson::decimals(&lesson::prose(PAGE))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the prose quotes numbers that neither the tour nor a recorded table prints: {missing:?}"
    );
}
