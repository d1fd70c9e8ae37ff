//! The page quotes what the code prints: each section of the tour (`cargo run -p
//! chapter16`) appears in the page verbatim as a ```text block, and every decimal
//! number the prose quotes is printed by the tour.

use chapter16::tour;

const PAGE: &str = include_str!("../../../book/src/ch16-transformer.md");

#[test]
fn the_page_quotes_every_section_of_the_tour_exactly() {
    lesson::assert_quoted(PAGE, "section 1", &tour::layers_section());
    lesson::assert_quoted(PAGE, "section 2", &tour::translation_section());
    lesson::assert_quoted(PAGE, "section 3", &tour::heads_section());
    lesson::assert_quoted(PAGE, "section 4", &tour::lm_section());
    lesson::assert_quoted(PAGE, "section 4's baselines", &tour::baselines_section());
    lesson::assert_quoted(PAGE, "section 5", &tour::resume_section());
    lesson::assert_quoted(PAGE, "section 6", &tour::placement_section());
    lesson::assert_quoted(PAGE, "section 7", &tour::recipe_section());
}

#[test]
fn every_decimal_the_prose_quotes_is_printed_by_the_tour() {
    let printed = tour::tour();
    let missing: Vec<String> = lesson::decimals(&lesson::prose(PAGE))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the prose quotes numbers the tour does not print: {missing:?}"
    );
}
