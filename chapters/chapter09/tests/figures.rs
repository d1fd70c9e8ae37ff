//! The committed figures are what the code draws. Both come from the recorded runs in
//! `chapters/chapter09/trained/` (written by `cargo run --release -p chapter09 --example
//! train -- --record`): the loss curves from their histories, the alignment heatmap from
//! greedy decodings by the recorded additive model. Redrawing them takes seconds.
//! Regenerate them with `UPDATE_FIGURES=1 cargo test -p chapter09 --test figures`.

#[test]
fn the_committed_figures_are_what_the_code_draws() {
    for (name, svg) in chapter09::figures() {
        figures::check_or_update(name, &svg).unwrap();
    }
}
