//! The page quotes what the code prints: the output of `cargo run -p chapter05`
//! appears in the page verbatim, so a change to the code that changes a number fails
//! here until the page is updated too.

const PAGE: &str = include_str!("../../../book/src/ch05-additive-attention.md");

#[test]
fn the_page_quotes_the_tour_output_exactly() {
    let output = chapter05::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the example's output as a ```text block; it prints:\n{output}"
    );
}

#[test]
fn every_decimal_of_the_section_on_lighter_forms_is_printed_by_the_tour() {
    let start = PAGE.find("## Lighter forms").expect("the section");
    let end = PAGE.find("## What to try").expect("the next section");
    let printed = chapter05::tour();
    let missing: Vec<String> = lesson::decimals(&lesson::prose(&PAGE[start..end]))
        .into_iter()
        .filter(|n| !printed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "quoted but printed nowhere: {missing:?}"
    );
}
