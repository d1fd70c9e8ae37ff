//! The page quotes what the code prints: each section of the tour (`cargo run -p
//! chapter15`) and each table of the `precision_runs` and `small_gradients` examples
//! (`data/compare.txt`, `data/small.txt`) appear in the page verbatim as ```text blocks,
//! and every decimal number the prose quotes is one of theirs.

use chapter15::record::{RECORDED_TABLES, SMALL_TABLES};
use chapter15::tour;

const PAGE: &str = include_str!("../../../book/src/ch15-mixed-precision.md");

#[test]
fn the_page_quotes_every_section_of_the_tour_exactly() {
    lesson::assert_quoted(PAGE, "section 1", &tour::formats_section());
    lesson::assert_quoted(PAGE, "section 2", &tour::fills_section());
    lesson::assert_quoted(PAGE, "section 3", &tour::autocast_section());
    lesson::assert_quoted(PAGE, "section 4", &tour::scaler_section());
    lesson::assert_quoted(PAGE, "section 5", &tour::memory_section());
}

#[test]
fn the_page_quotes_every_recorded_table_exactly() {
    let tables: Vec<&str> = RECORDED_TABLES.split("\n\n").collect();
    assert_eq!(tables.len(), 4, "four tables in data/compare.txt");
    for (i, table) in tables.iter().enumerate() {
        let table = format!("{}\n", table.trim_end_matches('\n'));
        lesson::assert_quoted(
            PAGE,
            &format!("table {} of data/compare.txt", i + 1),
            &table,
        );
    }
}

#[test]
fn the_page_quotes_every_table_of_the_small_gradient_run_exactly() {
    let tables: Vec<&str> = SMALL_TABLES.split("\n\n").collect();
    assert_eq!(tables.len(), 5, "five tables in data/small.txt");
    for (i, table) in tables.iter().enumerate() {
        let table = format!("{}\n", table.trim_end_matches('\n'));
        lesson::assert_quoted(
            PAGE,
            &format!("table {} of data/small.txt", i + 1),
            &table,
        );
    }
}

#[test]
fn every_decimal_the_prose_quotes_is_printed_here() {
    let printed = format!("{}{RECORDED_TABLES}{SMALL_TABLES}", tour::tour());
    let missing: Vec<String> = lesson::decimals(&lesson::prose(PAGE))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the prose quotes numbers that neither the tour nor the comparison prints: \
         {missing:?}"
    );
}
