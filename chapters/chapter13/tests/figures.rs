//! The committed figures are what the code draws: the ladder from the committed sample run
//! (`data/sample_ladder.tsv`), the memory from the engine's accounting. Regenerate them
//! with `UPDATE_FIGURES=1 cargo test -p chapter13 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter13::plots::all() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
