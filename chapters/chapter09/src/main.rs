//! Prints everything chapter 9's page shows and draws its figures:
//! `cargo run -p chapter09`.

fn main() {
    print!("{}", chapter09::tour());
    for (name, svg) in chapter09::figures() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
