//! The page quotes what the code prints: the output of `cargo run -p chapter08 --example
//! tour` appears in the page verbatim, and so does the table of the committed sample run
//! (`data/sample_speed.tsv`), so a change to the code or to the sample that changes a
//! number fails here until the page is updated too.

const PAGE: &str = include_str!("../../../book/src/ch08-kv-caching.md");

#[test]
fn the_page_quotes_the_tour_output_exactly() {
    let output = chapter08::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the example's output as a ```text block; it prints:\n{output}"
    );
}

#[test]
fn the_page_quotes_the_committed_sample_run_exactly() {
    let table = chapter08::sample_run().table();
    let block = format!("```text\n{table}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the sample run's table as a ```text block:\n{table}"
    );
}
