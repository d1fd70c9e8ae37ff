//! The committed figures are what the code draws: each is redrawn from the recorded
//! comparison (`data/compare.tsv`) and compared with `book/src/figures/`. Regenerate
//! them with `UPDATE_FIGURES=1 cargo test -p chapter15 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter15::plots::all() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
