//! The committed figures are what the code draws: the patterns from the library's
//! masks and LSH's buckets, the costs from the committed run (`data/costs.tsv`).
//! Regenerate them with `UPDATE_FIGURES=1 cargo test -p chapter11 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter11::plots::all() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
