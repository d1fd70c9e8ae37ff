//! Prints everything chapter 10's page shows from its tour and draws its figures:
//! `cargo run -p chapter10`. The tables of pitfalls 2 and 3 come from the `sweep`
//! example (`cargo run --release -p chapter10 --example sweep`).

fn main() {
    print!("{}", chapter10::tour::tour());
    for (name, svg) in chapter10::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
