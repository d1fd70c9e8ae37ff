//! Translates numbers with the recorded model and shows where each step looked:
//! `cargo run -p chapter09 --example translate -- 342 600000 19019`.

use chapter09::{
    Vocab, greedy_decode, number_to_words, plots, table, trained_additive,
};

fn main() {
    let numbers: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| match a.replace('_', "").parse() {
            Ok(n) if n < 1_000_000 => n,
            _ => {
                eprintln!("error: {a} is not a whole number below one million");
                std::process::exit(1);
            }
        })
        .collect();
    let numbers = if numbers.is_empty() {
        vec![342, 600_000, 19_019]
    } else {
        numbers
    };
    let (model, _) = trained_additive();
    let tgt_vocab = Vocab::target();
    for t in greedy_decode(&model, &numbers, &Vocab::source(), &tgt_vocab, 7) {
        let verdict = if t.is_exact(&tgt_vocab) {
            "right"
        } else {
            "WRONG"
        };
        println!(
            "{:?} -> {} ({verdict})",
            number_to_words(t.number),
            t.text(&tgt_vocab)
        );
        let cols = plots::target_labels(&t, &tgt_vocab);
        println!(
            "{}\n",
            table(&plots::by_word(&t), &plots::source_labels(t.number), &cols)
        );
    }
}
