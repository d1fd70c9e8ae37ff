//! Prints everything chapter 5's page shows and draws its figures:
//! `cargo run -p chapter05`.

fn main() {
    print!("{}", chapter05::tour());
    for (name, svg) in
        chapter05::plots::all(&chapter05::toy_run(chapter05::Init::Default))
    {
        figures::write(name, &svg).unwrap_or_else(|e| panic!("{e}"));
    }
}
