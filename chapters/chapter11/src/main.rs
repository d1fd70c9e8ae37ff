//! Prints everything chapter 11's page shows and draws its figures: `cargo run -p
//! chapter11`. The timings it prints are the committed run of the `costs` example
//! (`cargo run --release -p chapter11 --example costs` measures yours).

fn main() {
    print!("{}", chapter11::tour::tour());
    for (name, svg) in chapter11::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
