//! Prints everything chapter 3's page shows and draws its figures:
//! `cargo run -p chapter03`.

fn main() {
    let tour = chapter03::run_tour();
    print!("{}", tour.text);
    for (name, svg) in chapter03::charts::all(&tour) {
        if let Err(e) = figures::write(name, &svg) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
