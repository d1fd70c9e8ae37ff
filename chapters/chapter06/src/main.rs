//! Prints everything chapter 6's page shows and draws its figures:
//! `cargo run -p chapter06`.

fn main() -> Result<(), String> {
    print!("{}", chapter06::tour());
    let rows = chapter06::scaling_study();
    for (name, svg) in [
        ("ch06-variance.svg", chapter06::variance_chart(&rows)),
        ("ch06-saturation.svg", chapter06::saturation_chart(&rows)),
        ("ch06-gradient.svg", chapter06::gradient_chart(&rows)),
        ("ch06-weights.svg", chapter06::weights_heatmap()),
    ] {
        figures::write(name, &svg)?;
    }
    Ok(())
}
