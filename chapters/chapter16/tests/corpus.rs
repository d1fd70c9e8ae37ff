//! The language model's data (`src/corpus.rs`): the shipped text and its README, the
//! character vocabulary, the split, and the batches.

use std::collections::BTreeSet;
use std::panic::{UnwindSafe, catch_unwind};

use chapter09::SplitMix64;
use chapter16::corpus::{CharVocab, Corpus, SOURCE, TEXT, batch, eval_batches};

/// The message of the panic that `f` raises.
fn panic_message(f: impl FnOnce() + UnwindSafe) -> String {
    let payload = catch_unwind(f).expect_err("expected a panic");
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else {
        panic!("the panic carries no text")
    }
}

/// Panics unless `message` contains every one of `parts`.
fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "the message {message:?} does not mention {part:?}"
        );
    }
}

/// The ids of a tensor of whole numbers.
fn ids(t: &engine::Tensor) -> Vec<usize> {
    t.to_vec()
        .into_iter()
        .map(|x| {
            assert!(x >= 0.0 && x.fract() == 0.0, "{x} is not an id");
            x as usize
        })
        .collect()
}

#[test]
fn the_shipped_text_is_plain_ascii_and_names_its_source() {
    assert!(TEXT.is_ascii(), "data/alice.txt should be plain ASCII");
    assert!(TEXT.starts_with("Alice's Adventures in Wonderland\n"));
    assert!(TEXT.ends_with("THE END\n"));
    assert!(!TEXT.contains('\r'), "line ends are \\n only");
    assert!(
        !TEXT.to_lowercase().contains("gutenberg"),
        "the text should carry no Project Gutenberg boilerplate"
    );
    assert!(
        (100_000..=250_000).contains(&TEXT.len()),
        "{} bytes",
        TEXT.len()
    );
    assert_mentions(SOURCE, &["Carroll", "Alice", "1865", "#11"]);
    assert!(!SOURCE.contains('\n'), "SOURCE is one line");
}

#[test]
fn the_vocabulary_round_trips_the_whole_text() {
    let vocab = CharVocab::from_text(TEXT);
    let encoded = vocab.encode(TEXT);
    assert_eq!(encoded.len(), TEXT.chars().count());
    assert!(encoded.iter().all(|&id| id < vocab.len()));
    // Not `assert_eq!`: on failure it would print two copies of the book.
    assert!(
        vocab.decode(&encoded) == TEXT,
        "decode(encode(TEXT)) != TEXT"
    );
}

#[test]
fn the_vocabulary_is_the_sorted_distinct_characters() {
    let vocab = CharVocab::from_text(TEXT);
    // Counted another way: a set of the characters seen.
    let distinct: BTreeSet<char> = TEXT.chars().collect();
    assert_eq!(vocab.len(), distinct.len());
    assert!(!vocab.is_empty());
    // A BTreeSet iterates in order, so this also checks the ids are sorted.
    assert_eq!(vocab.chars(), distinct.into_iter().collect::<Vec<_>>());
    // The id of a character is its place in the sorted list.
    for (id, &c) in vocab.chars().iter().enumerate() {
        assert_eq!(vocab.encode(&c.to_string()), vec![id]);
    }

    let small = CharVocab::from_text("hello, world");
    assert_eq!(
        small.chars(),
        &[' ', ',', 'd', 'e', 'h', 'l', 'o', 'r', 'w']
    );
    assert_eq!(small.encode("hello"), vec![4, 3, 5, 5, 6]);
    assert_eq!(small.decode(&[8, 6, 7, 5, 2]), "world");
    assert_eq!(small.decode(&[]), "");

    let empty = CharVocab::from_text("");
    assert!(empty.is_empty());
    assert_eq!(empty.len(), 0);
}

#[test]
fn the_split_adds_up_and_validation_is_the_tail() {
    let corpus = Corpus::shipped();
    let n = TEXT.chars().count();
    assert_eq!(corpus.train.len() + corpus.val.len(), n);
    assert_eq!(corpus.val.len(), (n as f64 * 0.1).round() as usize);
    assert_eq!(corpus.vocab, CharVocab::from_text(TEXT));
    // The training part is the beginning of the book, the validation part its end.
    let (head, tail) = TEXT.split_at(corpus.train.len()); // ASCII: bytes = chars
    assert!(
        corpus.vocab.decode(&corpus.train) == head,
        "train is not the head"
    );
    assert!(
        corpus.vocab.decode(&corpus.val) == tail,
        "val is not the tail"
    );
    assert!(tail.ends_with("THE END\n"));

    // Ten characters: the fraction is rounded to whole characters, the f32 error of
    // 0.1 or 0.7 notwithstanding.
    let text = "abcdefghij";
    for (fraction, want_val) in
        [(0.0, ""), (0.1, "j"), (0.25, "hij"), (0.7, "defghij")]
    {
        let c = Corpus::new(text, fraction);
        let (train, val) = (c.vocab.decode(&c.train), c.vocab.decode(&c.val));
        assert_eq!(val, want_val, "val_fraction {fraction}");
        assert_eq!(train + &val, text, "val_fraction {fraction}");
    }
}

#[test]
fn batch_targets_are_the_inputs_shifted_by_one() {
    // Ids equal to their positions: a row's first input is its offset.
    let data: Vec<usize> = (0..50).collect();
    let (block, batch_size) = (8, 16);
    let (x, y) = batch(&data, block, batch_size, &mut SplitMix64::new(7));
    assert_eq!(x.shape(), &[batch_size, block]);
    assert_eq!(y.shape(), &[batch_size, block]);
    let (x, y) = (ids(&x), ids(&y));
    for row in 0..batch_size {
        let i = x[row * block];
        assert!(
            i + block < data.len(),
            "offset {i} leaves no room for the target"
        );
        for t in 0..block {
            assert_eq!(x[row * block + t], data[i + t], "row {row}, t {t}");
            assert_eq!(y[row * block + t], data[i + t + 1], "row {row}, t {t}");
        }
    }
}

#[test]
fn batches_of_the_book_are_windows_at_the_documented_offsets() {
    let corpus = Corpus::shipped();
    let (data, block, batch_size) = (&corpus.train, 64, 12);
    let mut rng = SplitMix64::new(2024);
    // The documented rule, replayed on a copy of the generator.
    let mut replay = rng.clone();
    for step in 0..3 {
        let (x, y) = batch(data, block, batch_size, &mut rng);
        let (x, y) = (ids(&x), ids(&y));
        for row in 0..batch_size {
            let i = (replay.next_u64() % (data.len() - block) as u64) as usize;
            let got_x = &x[row * block..(row + 1) * block];
            let got_y = &y[row * block..(row + 1) * block];
            assert_eq!(got_x, &data[i..i + block], "step {step}, row {row}");
            assert_eq!(got_y, &data[i + 1..i + block + 1], "step {step}, row {row}");
            // And as text: the targets read as the inputs one character later.
            let text = corpus.vocab.decode(got_x);
            let next = corpus.vocab.decode(got_y);
            assert_eq!(text[1..], next[..block - 1]);
            assert_eq!(&TEXT[i..i + block], text);
        }
    }
}

#[test]
fn every_window_that_fits_is_drawn() {
    // 6 ids and a block of 3: offsets 0, 1 and 2, the last reaching the final id.
    let data = [10, 11, 12, 13, 14, 15];
    let mut rng = SplitMix64::new(1);
    let (x, y) = batch(&data, 3, 200, &mut rng);
    let (x, y) = (ids(&x), ids(&y));
    let firsts: BTreeSet<usize> = x.iter().step_by(3).copied().collect();
    assert_eq!(firsts, BTreeSet::from([10, 11, 12]));
    assert!(y.contains(&15), "the last id is never a target");
    // The smallest data that work: block + 1 ids, one window.
    let (x, y) = batch(&[4, 5], 1, 3, &mut rng);
    assert_eq!((ids(&x), ids(&y)), (vec![4, 4, 4], vec![5, 5, 5]));
}

#[test]
fn a_seed_gives_the_same_batches_and_another_seed_others() {
    let corpus = Corpus::shipped();
    let draw = |seed| {
        let mut rng = SplitMix64::new(seed);
        let mut batches = Vec::new();
        for _ in 0..3 {
            let (x, y) = batch(&corpus.train, 32, 4, &mut rng);
            batches.push((x.to_vec(), y.to_vec()));
        }
        batches
    };
    let (a, b, c) = (draw(5), draw(5), draw(6));
    assert_eq!(a, b);
    assert_ne!(a, c);
    // The generator moves on: successive batches of one run differ.
    assert_ne!(a[0], a[1]);
    assert_ne!(a[1], a[2]);

    let eval = |seed| {
        eval_batches(&corpus.val, 32, 4, 3, seed)
            .iter()
            .map(|(x, y)| (x.to_vec(), y.to_vec()))
            .collect::<Vec<_>>()
    };
    assert_eq!(eval(9), eval(9));
    assert_ne!(eval(9), eval(10));
}

#[test]
fn eval_batches_are_successive_batches_of_one_seeded_generator() {
    let corpus = Corpus::shipped();
    let fixed = eval_batches(&corpus.val, 16, 5, 4, 77);
    assert_eq!(fixed.len(), 4);
    let mut rng = SplitMix64::new(77);
    for (k, (x, y)) in fixed.iter().enumerate() {
        let (want_x, want_y) = batch(&corpus.val, 16, 5, &mut rng);
        assert_eq!(x.shape(), &[5, 16]);
        assert_eq!(x.to_vec(), want_x.to_vec(), "batch {k}");
        assert_eq!(y.to_vec(), want_y.to_vec(), "batch {k}");
    }
}

#[test]
fn the_vocabulary_panics_name_the_character_and_the_id() {
    let vocab = CharVocab::from_text("abc");
    let message = panic_message(|| {
        vocab.encode("abXc");
    });
    assert_mentions(
        &message,
        &["CharVocab::encode", "'X'", "character 2", "3 characters"],
    );

    let message = panic_message(|| {
        vocab.decode(&[0, 1, 7]);
    });
    assert_mentions(
        &message,
        &[
            "CharVocab::decode",
            "id 7",
            "position 2",
            "3 characters",
            "0..3",
        ],
    );

    // The book's vocabulary has no digit 7 (its only digits are in "3.0").
    let book = CharVocab::from_text(TEXT);
    let message = panic_message(|| {
        book.encode("chapter 7");
    });
    assert_mentions(&message, &["'7'", "character 8", &book.len().to_string()]);
}

#[test]
fn the_batch_panics_give_the_sizes() {
    let data: Vec<usize> = (0..5).collect();
    let message = panic_message(|| {
        batch(&data, 5, 2, &mut SplitMix64::new(0));
    });
    assert_mentions(&message, &["batch", "5 ids", "block of 5", "6 ids"]);

    let message = panic_message(|| {
        batch(&data, 0, 2, &mut SplitMix64::new(0));
    });
    assert_mentions(&message, &["batch", "block is 0"]);

    let message = panic_message(|| {
        batch(&data, 2, 0, &mut SplitMix64::new(0));
    });
    assert_mentions(&message, &["batch", "batch_size is 0"]);

    let message = panic_message(|| {
        eval_batches(&data, 9, 2, 3, 0);
    });
    assert_mentions(&message, &["eval_batches", "5 ids", "block of 9", "10 ids"]);

    let message = panic_message(|| {
        eval_batches(&data, 2, 2, 0, 0);
    });
    assert_mentions(&message, &["eval_batches", "count is 0"]);
}

#[test]
fn the_corpus_panics_on_a_bad_fraction_or_an_empty_text() {
    for fraction in [1.0, 1.5, -0.1, f32::NAN] {
        let message = panic_message(move || {
            Corpus::new("abc", fraction);
        });
        assert_mentions(
            &message,
            &["Corpus::new", &format!("val_fraction {fraction}"), "[0, 1)"],
        );
    }
    let message = panic_message(|| {
        Corpus::new("", 0.1);
    });
    assert_mentions(&message, &["Corpus::new", "empty"]);
}

/// The number on the README's line `- {label}: {number}`.
fn readme_number(readme: &str, label: &str) -> usize {
    let prefix = format!("- {label}: ");
    let line = readme
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("data/README.md has no line {prefix:?}"));
    line[prefix.len()..]
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("data/README.md: {line:?}: {e}"))
}

#[test]
fn the_readme_states_the_size_of_the_shipped_text() {
    let readme = include_str!("../data/README.md");
    assert_eq!(readme_number(readme, "Bytes"), TEXT.len(), "bytes");
    assert_eq!(
        readme_number(readme, "Characters"),
        TEXT.chars().count(),
        "characters"
    );
    assert_eq!(
        readme_number(readme, "Lines"),
        TEXT.lines().count(),
        "lines"
    );
    let distinct = CharVocab::from_text(TEXT).len();
    assert_eq!(
        readme_number(readme, "Distinct characters"),
        distinct,
        "distinct characters"
    );
    assert!(
        readme.contains(&format!("The {distinct} distinct characters")),
        "the README's prose gives another count"
    );
}
