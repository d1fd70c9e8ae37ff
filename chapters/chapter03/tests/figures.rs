//! Every figure the page shows is what the code draws now: each is built from the seeded
//! tour with the functions the example uses and compared with the committed file.
//! Regenerate them with `UPDATE_FIGURES=1 cargo test -p chapter03 --test figures`.

/// One test, so the tour runs once.
#[test]
fn the_committed_figures_are_what_the_code_draws() {
    let tour = chapter03::run_tour();
    let figures = chapter03::charts::all(&tour);
    let names: Vec<&str> = figures.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "ch03-data.svg",
            "ch03-fits.svg",
            "ch03-weights-fixed.svg",
            "ch03-loss.svg",
            "ch03-weights-learned.svg",
            "ch03-widths.svg"
        ]
    );
    for (name, svg) in &figures {
        figures::check_or_update(name, svg).unwrap();
    }
    // The weight heatmaps name both axes and carry a colour scale (whose tick labels are
    // weights with two decimals, below 1).
    for (name, svg) in figures.iter().filter(|(n, _)| n.contains("weights")) {
        assert!(svg.contains("query (test input x)"), "{name}");
        assert!(svg.contains("key (training input xᵢ)"), "{name}");
        let scale_tick = |l: &str| {
            let l = l.trim();
            l.len() == 4
                && l.starts_with("0.")
                && l[2..].chars().all(|c| c.is_ascii_digit())
        };
        assert!(svg.lines().any(scale_tick), "{name} has no colour scale");
    }
}
