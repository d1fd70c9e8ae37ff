//! Everything chapter 14's page prints:
//!
//! ```console
//! cargo run -p chapter14
//! ```

fn main() {
    print!("{}", chapter14::tour());
}
