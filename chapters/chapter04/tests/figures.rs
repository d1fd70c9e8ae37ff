//! The page's figures are what the code draws: each is rebuilt from its seeded run and
//! compared with the committed SVG. Regenerate with
//! `UPDATE_FIGURES=1 cargo test -p chapter04 --test figures`.

/// How many axis labels read `<pad>` (SVG escapes the brackets).
fn pad_labels(svg: &str) -> usize {
    svg.matches("&lt;pad&gt;").count()
}

#[test]
fn the_valid_lengths_heatmap_is_up_to_date() {
    let svg = chapter04::valid_lens_figure();
    // One panel per sentence, tokens on both axes: 1 + 1 and 2 + 2 <pad> labels.
    assert!(svg.contains("valid length 3") && svg.contains("valid length 2"));
    assert_eq!(pad_labels(&svg), 6);
    figures::check_or_update("ch04-valid-lens.svg", &svg).unwrap();
}

#[test]
fn the_causal_left_padding_heatmap_is_up_to_date() {
    let svg = chapter04::causal_figure();
    // Both fills side by side, two <pad> tokens on each axis of each panel.
    assert!(svg.contains("Fill::D2l (-1e6)") && svg.contains("Fill::Safe"));
    assert_eq!(pad_labels(&svg), 8);
    figures::check_or_update("ch04-causal-left-padding.svg", &svg).unwrap();
}
