//! The committed figures are what the code draws, from the recorded runs in
//! `trained/` and `data/`. Regenerate them with `UPDATE_FIGURES=1 cargo test -p
//! chapter16 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter16::plots::all() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
