//! Prints everything chapter 13's page shows and draws its figures:
//! `cargo run -p chapter13`.

fn main() {
    print!("{}", chapter13::tour());
    for (name, svg) in chapter13::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
