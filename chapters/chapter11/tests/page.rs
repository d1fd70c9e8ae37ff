//! The page quotes what the code prints: each section of the tour (`cargo run -p
//! chapter11`) appears in the page verbatim as a ```text block, and every decimal
//! number the prose quotes is one the tour prints or one of the committed data files
//! holds, so a change to the code or to the data that changes a number fails here
//! until the page is updated too.

use std::sync::OnceLock;

use chapter11::tour;

const PAGE: &str = include_str!("../../../book/src/ch11-long-sequences.md");
const COSTS: &str = include_str!("../data/costs.tsv");
const SIDE_BY_SIDE: &str = include_str!("../data/side_by_side.tsv");

/// The tour's seven sections, computed once for both tests.
fn sections() -> &'static [String; 7] {
    static SECTIONS: OnceLock<[String; 7]> = OnceLock::new();
    SECTIONS.get_or_init(|| {
        [
            tour::wall_section(),
            tour::online_section(),
            tour::blocked_section(),
            tour::patterns_section(),
            tour::costs_section(),
            tour::accuracy_section(),
            tour::production_section(),
        ]
    })
}

#[test]
fn the_page_quotes_every_section_of_the_tour_exactly() {
    for (i, section) in sections().iter().enumerate() {
        lesson::assert_quoted(PAGE, &format!("section {}", i + 1), section);
    }
}

#[test]
fn every_decimal_the_prose_quotes_is_printed_by_the_tour_or_held_by_the_data() {
    let printed = format!("{}{COSTS}{SIDE_BY_SIDE}", sections().join("\n"));
    let missing: Vec<String> = lesson::decimals(&lesson::prose(PAGE))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the prose quotes numbers that neither the tour nor the data holds: \
         {missing:?}"
    );
}
