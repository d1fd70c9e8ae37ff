//! The task: English number words to digits, generated from a seed (nothing to
//! download).
//!
//! `"three hundred and forty-two"` becomes the source tokens `three hundred and forty
//! two` and the target tokens `3 4 2`. Every number has exactly one spelling, so the
//! task is learnable to 100%, and the alignment is almost monotonic (`forty` → `4`,
//! `two` → `2`), with a few interesting exceptions (`twelve` → `1 2`, and the zeros
//! of `three hundred`).

use std::collections::HashMap;
use std::fmt;

use engine::Tensor;

// ANCHOR: words
pub(crate) const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
pub(crate) const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
    "ninety",
];

/// `n` (below 100) in words: `"seven"`, `"twelve"`, `"forty-two"`.
fn below_hundred(n: u32) -> String {
    match n {
        0..20 => ONES[n as usize].to_string(),
        _ if n.is_multiple_of(10) => TENS[(n / 10) as usize].to_string(),
        _ => format!("{}-{}", TENS[(n / 10) as usize], ONES[(n % 10) as usize]),
    }
}

/// `n` (below 1000) in words, British style: `"three hundred and forty-two"`.
fn below_thousand(n: u32) -> String {
    match (n / 100, n % 100) {
        (0, rest) => below_hundred(rest),
        (hundreds, 0) => format!("{} hundred", ONES[hundreds as usize]),
        (hundreds, rest) => format!(
            "{} hundred and {}",
            ONES[hundreds as usize],
            below_hundred(rest)
        ),
    }
}

/// `n` (below one million) in words, British style, as a cheque is written:
/// `number_to_words(40_005)` is `"forty thousand and five"`.
///
/// # Panics
/// When `n` is one million or more.
pub fn number_to_words(n: u32) -> String {
    assert!(
        n < 1_000_000,
        "number_to_words: {n} is not below one million"
    );
    match (n / 1000, n % 1000) {
        (0, rest) => below_thousand(rest),
        (thousands, 0) => format!("{} thousand", below_thousand(thousands)),
        // "two thousand and five": `and` before a last group below one hundred.
        (thousands, rest) if rest < 100 => {
            format!(
                "{} thousand and {}",
                below_thousand(thousands),
                below_hundred(rest)
            )
        }
        (thousands, rest) => format!(
            "{} thousand {}",
            below_thousand(thousands),
            below_thousand(rest)
        ),
    }
}
// ANCHOR_END: words

// ANCHOR: tokenize
/// The source tokens of a number: its words, hyphenated compounds split
/// (`"forty-two"` → `forty`, `two`).
pub fn source_tokens(n: u32) -> Vec<String> {
    number_to_words(n)
        .split([' ', '-'])
        .map(str::to_string)
        .collect()
}

/// The target tokens of a number: its decimal digits (`342` → `3`, `4`, `2`).
pub fn target_tokens(n: u32) -> Vec<String> {
    n.to_string().chars().map(String::from).collect()
}
// ANCHOR_END: tokenize

// ANCHOR: vocab
/// The padding token: fills a sequence up to the length of the longest in its batch.
pub const PAD: &str = "<pad>";
/// The beginning-of-sequence token: the decoder's first input.
pub const BOS: &str = "<bos>";
/// The end-of-sequence token: ends every source and every target.
pub const EOS: &str = "<eos>";

/// A vocabulary: token ↔ id. Ids 0, 1 and 2 are `<pad>`, `<bos>` and `<eos>`, in
/// every vocabulary, then the tokens in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Vocab {
    tokens: Vec<String>,
    ids: HashMap<String, usize>,
}

impl Vocab {
    /// The id of `<pad>`.
    pub const PAD_ID: usize = 0;
    /// The id of `<bos>`.
    pub const BOS_ID: usize = 1;
    /// The id of `<eos>`.
    pub const EOS_ID: usize = 2;

    /// The three special tokens, then `tokens` (each once, in order).
    ///
    /// # Panics
    /// When a token is given twice or is one of the special tokens.
    pub fn new<S: AsRef<str>>(tokens: &[S]) -> Vocab {
        let mut vocab = Vocab {
            tokens: Vec::new(),
            ids: HashMap::new(),
        };
        for t in [PAD, BOS, EOS]
            .into_iter()
            .chain(tokens.iter().map(AsRef::as_ref))
        {
            let previous = vocab.ids.insert(t.to_string(), vocab.tokens.len());
            assert!(
                previous.is_none(),
                "Vocab::new: the token {t:?} is given twice"
            );
            vocab.tokens.push(t.to_string());
        }
        vocab
    }

    /// The source vocabulary: every word of every number below one million.
    pub fn source() -> Vocab {
        let mut words: Vec<&str> = ONES.to_vec();
        words.extend(TENS.iter().filter(|t| !t.is_empty()));
        words.extend(["hundred", "thousand", "and"]);
        Vocab::new(&words)
    }

    /// The target vocabulary: the ten digits.
    pub fn target() -> Vocab {
        Vocab::new(&["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"])
    }

    /// The number of tokens, special ones included.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Never true: a vocabulary holds at least the three special tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The id of `token`.
    ///
    /// # Panics
    /// When the token is not in the vocabulary.
    #[track_caller]
    pub fn id(&self, token: &str) -> usize {
        match self.ids.get(token) {
            Some(&id) => id,
            None => panic!("Vocab::id: {token:?} is not in the vocabulary"),
        }
    }

    /// The token of `id`.
    ///
    /// # Panics
    /// When `id` is not below [`len`](Vocab::len).
    #[track_caller]
    pub fn token(&self, id: usize) -> &str {
        self.checked_token("Vocab::token", id)
    }

    /// The token of `id`, or a panic in the name of `op` that gives the id and the
    /// size.
    #[track_caller]
    fn checked_token(&self, op: &str, id: usize) -> &str {
        match self.tokens.get(id) {
            Some(token) => token,
            None => panic!(
                "{op}: id {id} is out of range for a vocabulary of {len} tokens \
                 (ids 0..{len})",
                len = self.len()
            ),
        }
    }

    /// The ids of `tokens`.
    ///
    /// # Panics
    /// When a token is not in the vocabulary.
    #[track_caller]
    pub fn encode<S: AsRef<str>>(&self, tokens: &[S]) -> Vec<usize> {
        let mut ids = Vec::with_capacity(tokens.len());
        for t in tokens {
            ids.push(self.id(t.as_ref()));
        }
        ids
    }

    /// The tokens of `ids`, joined by `sep`.
    ///
    /// # Panics
    /// When an id is not below [`len`](Vocab::len).
    #[track_caller]
    pub fn decode(&self, ids: &[usize], sep: &str) -> String {
        let mut tokens = Vec::with_capacity(ids.len());
        for &id in ids {
            tokens.push(self.checked_token("Vocab::decode", id));
        }
        tokens.join(sep)
    }
}
// ANCHOR_END: vocab

// ANCHOR: split
/// A small deterministic random number generator (SplitMix64): the data must come out
/// the same on every machine, and the order of the batches must be a function of the
/// seed and the epoch alone, so that a resumed run sees the batches the uninterrupted
/// one would.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// The numbers of a run: disjoint training and held-out sets drawn from
/// `0..max_number`.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The numbers the model is trained on.
    pub train: Vec<u32>,
    /// The numbers it is scored on, never seen in training.
    pub held_out: Vec<u32>,
}

/// Shuffles `0..max_number` with `seed` and cuts it: the first `held_out` numbers are
/// held out, the next `train` are the training set. The two never overlap, whatever
/// the sizes.
///
/// # Panics
/// When `train + held_out` exceeds `max_number`, or `max_number` exceeds one million.
pub fn split(max_number: u32, train: usize, held_out: usize, seed: u64) -> Split {
    assert!(
        max_number <= 1_000_000,
        "split: max_number {max_number} is above one million"
    );
    assert!(
        train + held_out <= max_number as usize,
        "split: {train} training and {held_out} held-out numbers do not fit in \
         0..{max_number}"
    );
    let mut numbers: Vec<u32> = (0..max_number).collect();
    SplitMix64::new(seed).shuffle(&mut numbers);
    Split {
        held_out: numbers[..held_out].to_vec(),
        train: numbers[held_out..held_out + train].to_vec(),
    }
}
// ANCHOR_END: split

// ANCHOR: batch
/// A batch of (source, target) pairs as padded id tensors with their valid lengths.
///
/// Sources end with `<eos>`; targets too. The decoder's input under teacher forcing
/// is the target shifted right: `<bos>` then every target token but the last.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The numbers the batch holds, in order.
    pub numbers: Vec<u32>,
    /// Source ids `[B, S]`, padded with `<pad>`.
    pub src: Tensor,
    /// The real length of each source (with its `<eos>`), `[B]`.
    pub src_lens: Tensor,
    /// The decoder's input `[B, T]`: `<bos>` and the target without its last token.
    pub dec_input: Tensor,
    /// The target ids `[B, T]`, ending with `<eos>`, padded with `<pad>`.
    pub tgt: Tensor,
    /// The real length of each target (with its `<eos>`), `[B]`.
    pub tgt_lens: Tensor,
}

/// Pads each sequence to the longest, returning the ids `[B, len]` and the lengths
/// `[B]`.
fn pad(seqs: &[Vec<usize>]) -> (Tensor, Tensor) {
    let len = seqs.iter().map(Vec::len).max().unwrap_or(0);
    let mut ids = Vec::with_capacity(seqs.len() * len);
    for s in seqs {
        ids.extend(s.iter().map(|&i| i as f32));
        ids.extend(std::iter::repeat_n(Vocab::PAD_ID as f32, len - s.len()));
    }
    let lens = seqs.iter().map(|s| s.len() as f32).collect();
    (
        Tensor::from_vec(ids, [seqs.len(), len]),
        Tensor::from_vec(lens, [seqs.len()]),
    )
}

impl Batch {
    /// The batch of `numbers`, encoded with the two vocabularies.
    ///
    /// # Panics
    /// When `numbers` is empty.
    pub fn new(numbers: &[u32], src_vocab: &Vocab, tgt_vocab: &Vocab) -> Batch {
        assert!(!numbers.is_empty(), "Batch::new: no number to encode");
        let with_eos = |mut ids: Vec<usize>| {
            ids.push(Vocab::EOS_ID);
            ids
        };
        let sources: Vec<Vec<usize>> = numbers
            .iter()
            .map(|&n| with_eos(src_vocab.encode(&source_tokens(n))))
            .collect();
        let targets: Vec<Vec<usize>> = numbers
            .iter()
            .map(|&n| with_eos(tgt_vocab.encode(&target_tokens(n))))
            .collect();
        // Teacher forcing: the decoder reads <bos> y₁ … y_{T−1} and must predict y₁ …
        // y_T.
        let inputs: Vec<Vec<usize>> = targets
            .iter()
            .map(|t| {
                let mut input = vec![Vocab::BOS_ID];
                input.extend(&t[..t.len() - 1]);
                input
            })
            .collect();
        let (src, src_lens) = pad(&sources);
        let (tgt, tgt_lens) = pad(&targets);
        let (dec_input, _) = pad(&inputs);
        Batch {
            numbers: numbers.to_vec(),
            src,
            src_lens,
            dec_input,
            tgt,
            tgt_lens,
        }
    }

    /// The number of examples.
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    /// Never true: a batch holds at least one example.
    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }
}
// ANCHOR_END: batch

impl fmt::Display for Batch {
    /// Each example's padded source and target ids, one per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, s, t) = (self.len(), self.src.size(1), self.tgt.size(1));
        let (src, tgt) = (self.src.to_vec(), self.tgt.to_vec());
        for i in 0..b {
            let ids = |v: &[f32]| {
                v.iter()
                    .map(|x| format!("{x:>2}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            writeln!(
                f,
                "{:>6}  src [{}]  tgt [{}]",
                self.numbers[i],
                ids(&src[i * s..(i + 1) * s]),
                ids(&tgt[i * t..(i + 1) * t])
            )?;
        }
        Ok(())
    }
}
