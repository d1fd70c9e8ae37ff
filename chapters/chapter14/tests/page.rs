//! The page quotes what the code prints: the tour's output verbatim, and the committed
//! sample's table, so a change to the code that changes a number fails here until the
//! page is updated too.

const PAGE: &str = include_str!("../../../book/src/ch14-attention-on-the-gpu.md");

#[test]
fn the_page_quotes_the_tour_output_exactly() {
    let output = chapter14::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the example's output as a ```text block; it prints:\n{output}"
    );
}

#[test]
fn the_page_shows_the_committed_sample_table() {
    let table = chapter14::Sample::committed().table();
    assert!(
        PAGE.contains(&table),
        "the page must hold the committed sample's table:\n{table}"
    );
}
