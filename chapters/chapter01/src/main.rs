//! Prints everything chapter 1's page shows: `cargo run -p chapter01`.

fn main() {
    print!("{}", chapter01::tour());
}
