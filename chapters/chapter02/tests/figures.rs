//! The committed figure is what the code draws: regenerate it with
//! `UPDATE_FIGURES=1 cargo test -p chapter02 --test figures`.

#[test]
fn the_graph_figure_is_up_to_date() {
    figures::check_or_update("ch02-graph.svg", &chapter02::graph_figure()).unwrap();
}
