//! Prints everything chapter 2's page shows and draws its figure:
//! `cargo run -p chapter02`.

fn main() {
    print!("{}", chapter02::tour());
    if let Err(e) = figures::write("ch02-graph.svg", &chapter02::graph_figure()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
