//! Every figure of the page is what the code draws now: each is rebuilt with the function
//! the `tour` example uses and compared with the committed file. Regenerate them with
//! `UPDATE_FIGURES=1 cargo test -p chapter08 --test figures`.

#[test]
fn the_weights_heatmap_is_up_to_date() {
    figures::check_or_update(
        "ch08-causal-weights.svg",
        &chapter08::causal_weights_heatmap(),
    )
    .unwrap();
}

#[test]
fn the_speed_chart_is_drawn_from_the_committed_sample_run() {
    figures::check_or_update("ch08-speed.svg", &chapter08::sample_speed_chart())
        .unwrap();
}

#[test]
fn the_positional_encoding_heatmap_is_up_to_date() {
    figures::check_or_update(
        "ch08-positional-encoding.svg",
        &chapter08::positions::encoding_heatmap(),
    )
    .unwrap();
}
