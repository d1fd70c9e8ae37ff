//! Prints everything chapter 4's page shows and draws its figures:
//! `cargo run -p chapter04`.

fn main() {
    print!("{}", chapter04::tour());
    for (name, svg) in [
        ("ch04-valid-lens.svg", chapter04::valid_lens_figure()),
        ("ch04-causal-left-padding.svg", chapter04::causal_figure()),
    ] {
        if let Err(e) = figures::write(name, &svg) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
