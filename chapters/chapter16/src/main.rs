//! Prints everything chapter 16's page shows and draws its figures:
//! `cargo run -p chapter16`. The runs it reads are recorded by the examples
//! `translation`, `lm`, `generate` and `placement`.

fn main() {
    print!("{}", chapter16::tour::tour());
    for (name, svg) in chapter16::plots::all() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
