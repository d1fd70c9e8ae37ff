//! Prints everything chapter 12's page shows from its tour and draws its figures:
//! `cargo run -p chapter12`. The tables of the comparison come from the `compare`
//! example (`cargo run --release -p chapter12 --example scorings`).

fn main() {
    print!("{}", chapter12::tour::tour());
    for (name, svg) in chapter12::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
