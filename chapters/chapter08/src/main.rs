//! Prints everything chapter 8's page shows and draws its heatmap:
//! `cargo run -p chapter08`. (The speed chart is drawn from the committed
//! sample run; `cargo run --release -p chapter08 --example speed` measures your machine.)

fn main() -> Result<(), String> {
    print!("{}", chapter08::tour());
    print!("\n{}", chapter08::positions::tour());
    figures::write(
        "ch08-causal-weights.svg",
        &chapter08::causal_weights_heatmap(),
    )?;
    figures::write("ch08-speed.svg", &chapter08::sample_speed_chart())?;
    figures::write(
        "ch08-positional-encoding.svg",
        &chapter08::positions::encoding_heatmap(),
    )?;
    Ok(())
}
