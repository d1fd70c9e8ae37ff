//! Prints everything chapter 15's page shows from its tour and draws its figures:
//! `cargo run -p chapter15`. The tables of the comparison come from the `compare`
//! example (`cargo run --release -p chapter15 --example precision_runs`).

fn main() {
    print!("{}", chapter15::tour::tour());
    for (name, svg) in chapter15::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
