//! The page quotes what the code prints: the output of `cargo run -p chapter04`
//! appears in the page verbatim, so a change to the code that changes a number
//! fails here until the page is updated too.

const PAGE: &str = include_str!("../../../book/src/ch04-masked-softmax.md");

#[test]
fn the_page_quotes_the_tour_output_exactly() {
    let output = chapter04::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the example's output as a ```text block; it prints:\n{output}"
    );
}

const TIMING: &str = include_str!("../data/mask_timing.txt");

#[test]
fn the_page_quotes_the_recorded_mask_timing() {
    lesson::assert_quoted(
        PAGE,
        "the mask_timing example (data/mask_timing.txt)",
        TIMING,
    );
}

#[test]
fn every_decimal_of_the_section_on_masks_built_once_is_printed() {
    let start = PAGE.find("## Masks built once").expect("the section");
    let end = PAGE
        .find("## Pitfalls, in one place")
        .expect("the next section");
    let printed = format!("{}{TIMING}", chapter04::tour());
    let missing: Vec<String> = lesson::decimals(&lesson::prose(&PAGE[start..end]))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "quoted but printed nowhere: {missing:?}"
    );
}
