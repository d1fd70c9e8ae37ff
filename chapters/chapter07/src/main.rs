//! Prints everything chapter 7's page shows and draws its figures:
//! `cargo run -p chapter07`.

fn main() -> Result<(), String> {
    print!("{}", chapter07::tour());
    figures::write("ch07-heads.svg", &chapter07::heads_heatmap())?;
    figures::write("ch07-tiled-mask.svg", &chapter07::tiled_mask_heatmap())?;
    Ok(())
}
