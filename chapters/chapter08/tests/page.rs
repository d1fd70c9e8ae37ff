//! The page quotes what the code prints: the output of `cargo run -p chapter08 --example
//! tour` appears in the page verbatim, and so do the tables of the committed sample runs
//! (`data/sample_speed.tsv`, `data/sample_speed_before.tsv`) and the committed output of the
//! `copies` example (`data/sample_copies.txt`), so a change to the code or to a sample that
//! changes a number fails here until the page is updated too.

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

#[test]
fn the_page_quotes_the_run_from_before_a_step_read_the_cache_in_place_exactly() {
    let table = chapter08::sample_run_before().table();
    let block = format!("```text\n{table}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the earlier run's table as a ```text block:\n{table}"
    );
}

#[test]
fn the_page_quotes_the_committed_cost_of_a_copy_exactly() {
    let block = format!("```text\n{}```", chapter08::SAMPLE_COPIES);
    assert!(
        PAGE.contains(&block),
        "the page must hold data/sample_copies.txt as a ```text block:\n{}",
        chapter08::SAMPLE_COPIES
    );
}

#[test]
fn the_page_quotes_the_positions_section_exactly() {
    let output = chapter08::positions::tour();
    let block = format!("```text\n{output}```");
    assert!(
        PAGE.contains(&block),
        "the page must hold the positions section's output as a ```text block; it prints:\n{output}"
    );
}
