//! The language model's data: a book read one character at a time.
//!
//! This is the Rust form of karpathy's nanoGPT `data/shakespeare_char/prepare.py` and
//! the `get_batch` of its `train.py`:
//!
//! 1. the vocabulary is the sorted list of the distinct characters of the text, and a
//!    character's id is its place in that list ([`CharVocab`]);
//! 2. the whole text is encoded once and cut by position: the first 90% for
//!    training, the last 10% for validation ([`Corpus`]);
//! 3. a batch is `batch_size` windows of `block + 1` consecutive ids at random
//!    offsets: the first `block` are the inputs, the last `block` (the same window
//!    shifted by one) the targets ([`batch`]). Every position of a window is a
//!    training example: after `inputs[..=t]` the model should predict `targets[t]`.
//!
//! The text is shipped with the crate ([`TEXT`], see `data/README.md`), so nothing
//! is downloaded. The random offsets come from chapter 9's [`SplitMix64`], drawn one
//! after another on the calling thread: a seed gives the same batches on every
//! machine, whatever the number of threads.

use chapter09::SplitMix64;
use engine::Tensor;

// ANCHOR: text
/// The whole text: Lewis Carroll's *Alice's Adventures in Wonderland* (1865), about
/// 145,000 characters of plain ASCII, from Project Gutenberg eBook #11 without its
/// boilerplate. `data/README.md` says where it came from and how it was cleaned.
pub const TEXT: &str = include_str!("../data/alice.txt");

/// One line naming [`TEXT`] and its origin, to print beside samples of the model.
pub const SOURCE: &str = "Lewis Carroll, Alice's Adventures in Wonderland (1865), \
                          Project Gutenberg eBook #11, cleaned to ASCII";
// ANCHOR_END: text

// ANCHOR: vocab
/// A character-level vocabulary: the distinct characters of a text, sorted, and each
/// character's id is its index in that list.
///
/// In Python: `chars = sorted(set(text))`, `stoi = {c: i for i, c in
/// enumerate(chars)}`, `encode = lambda s: [stoi[c] for c in s]`, `decode = lambda
/// ids: "".join(chars[i] for i in ids)`.
///
/// ```
/// use chapter16::corpus::CharVocab;
///
/// let vocab = CharVocab::from_text("hello");
/// assert_eq!(vocab.chars(), &['e', 'h', 'l', 'o']);
/// assert_eq!(vocab.encode("hole"), vec![1, 3, 2, 0]);
/// assert_eq!(vocab.decode(&[2, 0, 1]), "leh");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharVocab {
    /// The distinct characters, sorted: `chars[id]` is the character of `id`.
    chars: Vec<char>,
}

impl CharVocab {
    /// The vocabulary of `text`: its distinct characters, sorted (by Unicode code
    /// point, which for ASCII is the byte order: newline, space, punctuation,
    /// `A`–`Z`, `a`–`z`). An empty text gives an empty vocabulary.
    pub fn from_text(text: &str) -> CharVocab {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup(); // sorted, so equal characters are neighbours
        CharVocab { chars }
    }

    /// The number of distinct characters: the size of the model's embedding table and
    /// of its output layer.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether the vocabulary has no character (only when built from an empty text).
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The characters, in id order: `chars()[id]` is the character of `id`.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// The id of every character of `text`, in order.
    ///
    /// # Panics
    /// When a character of `text` is not in the vocabulary; the message names the
    /// character and its position.
    #[track_caller]
    pub fn encode(&self, text: &str) -> Vec<usize> {
        let mut ids = Vec::with_capacity(text.len());
        for (position, c) in text.chars().enumerate() {
            // The list is sorted, so a binary search finds a character's index (its
            // id) in a few steps; `Err` means it is not there.
            match self.chars.binary_search(&c) {
                Ok(id) => ids.push(id),
                Err(_) => panic!(
                    "CharVocab::encode: the character {c:?} (at character {position} \
                     of the text) is not in the vocabulary of {} characters",
                    self.len()
                ),
            }
        }
        ids
    }

    /// The text of `ids`: the character of each id, in order.
    ///
    /// # Panics
    /// When an id is not below [`len`](CharVocab::len).
    #[track_caller]
    pub fn decode(&self, ids: &[usize]) -> String {
        let mut text = String::with_capacity(ids.len());
        for (position, &id) in ids.iter().enumerate() {
            match self.chars.get(id) {
                Some(&c) => text.push(c),
                None => panic!(
                    "CharVocab::decode: id {id} (at position {position}) is out of \
                     range for a vocabulary of {len} characters (ids 0..{len})",
                    len = self.len()
                ),
            }
        }
        text
    }
}
// ANCHOR_END: vocab

// ANCHOR: corpus
/// A text encoded once and split by position into training and validation ids.
///
/// The split is not shuffled: the validation ids are the end of the book, text the
/// model never trains on, as in nanoGPT (`train_data = data[:int(n * 0.9)]`,
/// `val_data = data[int(n * 0.9):]`). Windows never cross the cut, because
/// [`batch`] is given one part or the other.
#[derive(Clone, Debug, PartialEq)]
pub struct Corpus {
    /// The vocabulary of the whole text, so that the validation part has no unknown
    /// character.
    pub vocab: CharVocab,
    /// The ids of the first part of the text, for training.
    pub train: Vec<usize>,
    /// The ids of the rest, for the validation loss.
    pub val: Vec<usize>,
}

impl Corpus {
    /// Encodes `text` and cuts it: with `n` characters, the last
    /// `round(val_fraction · n)` ids are for validation and the first ones, about
    /// `(1 - val_fraction) · n`, for training.
    ///
    /// # Panics
    /// When `text` is empty, or `val_fraction` is not in `[0, 1)`.
    #[track_caller]
    pub fn new(text: &str, val_fraction: f32) -> Corpus {
        assert!(!text.is_empty(), "Corpus::new: the text is empty");
        assert!(
            (0.0..1.0).contains(&val_fraction),
            "Corpus::new: val_fraction {val_fraction} is not in [0, 1)"
        );
        let vocab = CharVocab::from_text(text);
        let mut train = vocab.encode(text);
        // Rounded, not truncated: an f32 is a hair off most decimals (`0.7` is
        // 0.69999999…), so 10 · 0.7 would truncate to 6 where 7 is meant.
        let n_val = (train.len() as f64 * f64::from(val_fraction)).round() as usize;
        // `split_off(at)` keeps the ids before `at` in `train` and returns the rest.
        let val = train.split_off(train.len() - n_val);
        Corpus { vocab, train, val }
    }

    /// The shipped book, [`TEXT`], with the last 10% held out for validation.
    pub fn shipped() -> Corpus {
        Corpus::new(TEXT, 0.1)
    }
}
// ANCHOR_END: corpus

/// Checks that `data` holds at least one window of `block + 1` ids and that the
/// sizes are positive, or panics in the name of `op`.
#[track_caller]
fn check_window(op: &str, data: &[usize], block: usize, batch_size: usize) {
    assert!(
        block > 0,
        "{op}: block is 0; a window needs at least one input id"
    );
    assert!(
        batch_size > 0,
        "{op}: batch_size is 0; a batch needs a window"
    );
    assert!(
        data.len() > block,
        "{op}: the data hold {} ids, too few for a block of {block}: a window \
         needs block + 1 = {} ids (the inputs and, one further, the last target)",
        data.len(),
        block + 1
    );
}

// ANCHOR: batch
/// A batch of `batch_size` random windows of `data`, as `(inputs, targets)`, both
/// `[batch_size, block]`, holding ids as `f32` (the engine's one element type, which
/// is what [`engine::nn::Embedding`] and [`Tensor::cross_entropy`] take).
///
/// Row `b` comes from the offset `i = rng.next_u64() % (data.len() - block)`, drawn
/// in row order: its inputs are `data[i..i + block]` and its targets
/// `data[i + 1..i + block + 1]`, the same characters shifted by one. So
/// `targets[b][t]` is the character that follows `inputs[b][..=t]`. Every window
/// that fits can be drawn, as with nanoGPT's
/// `torch.randint(len(data) - block_size, (batch_size,))`.
///
/// `rng` moves on by `batch_size` draws: pass the same generator at every step of a
/// training loop and each step gets new windows, the same ones on every run with the
/// same seed.
///
/// ```
/// use chapter09::SplitMix64;
/// use chapter16::corpus::batch;
///
/// let data: Vec<usize> = (0..10).collect();
/// let (x, y) = batch(&data, 3, 2, &mut SplitMix64::new(0));
/// assert_eq!(x.shape(), &[2, 3]);
/// let (x, y) = (x.to_vec(), y.to_vec());
/// assert_eq!(&y[..2], &x[1..3]); // each target is the next input
/// ```
///
/// # Panics
/// When `block` or `batch_size` is 0, or `data` has fewer than `block + 1` ids.
#[track_caller]
pub fn batch(
    data: &[usize],
    block: usize,
    batch_size: usize,
    rng: &mut SplitMix64,
) -> (Tensor, Tensor) {
    check_window("batch", data, block, batch_size);
    // The number of offsets whose window fits: 0, 1, …, len − block − 1.
    let offsets = (data.len() - block) as u64;
    let mut inputs = Vec::with_capacity(batch_size * block);
    let mut targets = Vec::with_capacity(batch_size * block);
    for _ in 0..batch_size {
        // The remainder is very slightly uneven (2⁶⁴ is not a multiple of the count),
        // far too little to matter for windows of a book.
        let i = (rng.next_u64() % offsets) as usize;
        inputs.extend(data[i..i + block].iter().map(|&id| id as f32));
        targets.extend(data[i + 1..i + block + 1].iter().map(|&id| id as f32));
    }
    (
        Tensor::from_vec(inputs, [batch_size, block]),
        Tensor::from_vec(targets, [batch_size, block]),
    )
}

/// A fixed set of `count` batches of `data`, from a generator seeded with `seed`:
/// the same windows at every call, so that two validation losses measured with them
/// (at two training steps, or of two models) compare like with like.
///
/// They are the batches that `count` calls of [`batch`] make with one
/// `SplitMix64::new(seed)`.
///
/// # Panics
/// When `count`, `block` or `batch_size` is 0, or `data` has fewer than `block + 1`
/// ids.
#[track_caller]
pub fn eval_batches(
    data: &[usize],
    block: usize,
    batch_size: usize,
    count: usize,
    seed: u64,
) -> Vec<(Tensor, Tensor)> {
    assert!(
        count > 0,
        "eval_batches: count is 0; ask for at least one batch"
    );
    check_window("eval_batches", data, block, batch_size);
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| batch(data, block, batch_size, &mut rng))
        .collect()
}
// ANCHOR_END: batch
