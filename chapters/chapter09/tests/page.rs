//! The page quotes what the code prints: the output of `cargo run -p chapter09 --example
//! tour` appears in the page verbatim, so a change to the code that changes a number
//! fails here until the page is updated too.

const PAGE: &str = include_str!("../../../book/src/ch09-training-with-attention.md");

#[test]
fn the_page_quotes_the_tour_output_exactly() {
    let output = chapter09::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the example's output as a ```text block; it prints:\n{output}"
    );
}

#[test]
fn the_page_quotes_the_cache_and_coverage_sections_exactly() {
    lesson::assert_quoted(
        PAGE,
        "the cached decoder's section",
        &chapter09::cache_section(),
    );
    lesson::assert_quoted(
        PAGE,
        "the coverage section",
        &chapter09::coverage_section(),
    );
}
