//! The committed figures are what the code draws: each is rebuilt from the seeded toy run
//! and compared with `book/src/figures/`. Regenerate them with
//! `UPDATE_FIGURES=1 cargo test -p chapter05 --test figures`.

use chapter05::{Init, plots, toy_run};

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    let run = toy_run(Init::Default);
    for (name, svg) in plots::all(&run) {
        figures::check_or_update(name, &svg).unwrap();
    }
}
