//! Every figure of the page is what the code draws now: each is rebuilt with the function
//! the `tour` example uses and compared with the committed file. Regenerate them with
//! `UPDATE_FIGURES=1 cargo test -p chapter06 --test figures`.

#[test]
fn the_scaling_charts_are_up_to_date() {
    let rows = chapter06::scaling_study();
    figures::check_or_update("ch06-variance.svg", &chapter06::variance_chart(&rows))
        .unwrap();
    figures::check_or_update(
        "ch06-saturation.svg",
        &chapter06::saturation_chart(&rows),
    )
    .unwrap();
    figures::check_or_update("ch06-gradient.svg", &chapter06::gradient_chart(&rows))
        .unwrap();
}

#[test]
fn the_weights_heatmap_is_up_to_date() {
    figures::check_or_update("ch06-weights.svg", &chapter06::weights_heatmap())
        .unwrap();
}
