//! Prints everything chapter 9's page shows and draws its figures:
//! `cargo run -p chapter09`.

fn main() {
    print!("{}", chapter09::tour());
    // The sections after the tour's: the coverage run, then the cached decoder.
    print!("{}", chapter09::coverage_section());
    print!("{}", chapter09::cache_section());
    for (name, svg) in chapter09::figures() {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
