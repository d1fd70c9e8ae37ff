//! Every figure of the page is what the code draws now: each is rebuilt with the function
//! the `tour` example uses and compared with the committed file. Regenerate them with
//! `UPDATE_FIGURES=1 cargo test -p chapter07 --test figures`.

#[test]
fn the_heads_heatmap_is_up_to_date() {
    figures::check_or_update("ch07-heads.svg", &chapter07::heads_heatmap()).unwrap();
}

#[test]
fn the_tiled_mask_heatmap_is_up_to_date() {
    figures::check_or_update("ch07-tiled-mask.svg", &chapter07::tiled_mask_heatmap())
        .unwrap();
}
