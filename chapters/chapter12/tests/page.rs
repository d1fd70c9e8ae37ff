//! The page quotes what the code prints: each section of the tour (`cargo run -p
//! chapter12`), each table of the `scorings` example (`data/compare.txt`) and of the
//! `separate` example (`data/separate.txt`) appear in
//! the page verbatim as ```text blocks, and every decimal number the prose quotes is
//! one of theirs, or one that an earlier chapter's page prints and this page cites,
//! so a change to the code that changes a number fails here until the page is updated
//! too.

use chapter12::record::RECORDED_TABLES;
use chapter12::separate;
use chapter12::tour;

const PAGE: &str = include_str!("../../../book/src/ch12-scoring-functions.md");
const CH05: &str = include_str!("../../../book/src/ch05-additive-attention.md");
const CH06: &str = include_str!("../../../book/src/ch06-scaled-dot-product.md");
const CH09: &str = include_str!("../../../book/src/ch09-training-with-attention.md");
const CH11: &str = include_str!("../../../book/src/ch11-long-sequences.md");

/// The numbers the page cites from earlier chapters, each with the page that prints
/// it.
const CITED: &[(&str, &str, &str)] = &[
    ("16.00", "chapter 5", CH05),
    ("0.970", "chapter 6", CH06),
    ("2.00", "chapter 6", CH06),
    ("22.459", "chapter 6", CH06),
    ("0.777", "chapter 6", CH06),
    ("128.50", "chapter 6", CH06),
    ("0.978", "chapter 9", CH09),
    ("5.01", "chapter 11", CH11),
    ("20.06", "chapter 11", CH11),
];

#[test]
fn the_page_quotes_every_section_of_the_tour_exactly() {
    lesson::assert_quoted(PAGE, "section 1", &tour::scorings_section());
    lesson::assert_quoted(PAGE, "section 2", &tour::claims_section());
    lesson::assert_quoted(PAGE, "section 3", &tour::complexity_section());
    lesson::assert_quoted(PAGE, "section 4", &tour::hybrid_section());
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
fn the_page_quotes_every_table_of_the_separating_runs_exactly() {
    let tables: Vec<&str> = separate::RECORDED_TABLES.split("\n\n").collect();
    assert_eq!(tables.len(), 5, "five tables in data/separate.txt");
    for (i, table) in tables.iter().enumerate() {
        let table = format!("{}\n", table.trim_end_matches('\n'));
        lesson::assert_quoted(
            PAGE,
            &format!("table {} of data/separate.txt", i + 1),
            &table,
        );
    }
}

#[test]
fn every_decimal_the_prose_quotes_is_printed_here_or_cited_from_its_chapter() {
    let printed = format!(
        "{}{RECORDED_TABLES}{}",
        tour::tour(),
        separate::RECORDED_TABLES
    );
    let missing: Vec<String> = lesson::decimals(&lesson::prose(PAGE))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .filter(|n| !CITED.iter().any(|(c, _, _)| c == n))
        .collect();
    assert!(
        missing.is_empty(),
        "the prose quotes numbers that neither the tour nor the comparison prints, \
         and that no earlier chapter is cited for: {missing:?}"
    );
}

#[test]
fn every_number_cited_from_an_earlier_chapter_is_on_that_chapter_s_page() {
    for (number, chapter, page) in CITED {
        assert!(
            page.contains(number),
            "{chapter}'s page no longer prints {number}, which this page cites"
        );
        assert!(
            lesson::decimals(&lesson::prose(PAGE))
                .iter()
                .any(|n| n == number),
            "{number} is listed as cited from {chapter} but the prose does not \
             quote it"
        );
    }
}
