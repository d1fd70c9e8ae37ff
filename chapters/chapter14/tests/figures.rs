//! The committed figure is what the code draws from the committed sample run
//! (`data/sample_measure.tsv`). Regenerate it with
//! `UPDATE_FIGURES=1 cargo test -p chapter14 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter14::plots::all() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
