//! Everything chapter 14's page prints:
//!
//! ```console
//! cargo run -p chapter14 --example tour
//! ```

fn main() {
    print!("{}", chapter14::tour());
}
