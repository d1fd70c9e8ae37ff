//! Checkpoints from anywhere: valid checkpoints broken in thousands of ways (cut short,
//! bits flipped, random bytes, headers whose lengths, offsets, shapes, dtypes, names or
//! metadata lie) are refused with an error naming the file, never a panic, never an
//! allocation the file's size does not justify, and never a half-loaded model. A change
//! that leaves the file valid (a flipped bit in the data, say) loads the file's values
//! exactly.
//!
//! The cases are drawn from a fixed seed and no failure is written to disk, so a run in
//! CI is the same every time: `cargo test -p chapter09 --test checkpoint_fuzz`.

#[path = "checkpoint_fuzz/largest_allocation.rs"]
mod largest_allocation;
#[path = "checkpoint_fuzz/mutate.rs"]
mod mutate;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use attention::prelude::*;
use chapter09::*;
use largest_allocation::{Counting, largest_allocation};
use mutate::{Mutation, apply, mutation};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The largest single allocation reading a file of `n` bytes may request. The reader
/// holds the whole file (`n`), then each tensor as f32 (at most the data's size), then
/// what the JSON header parses into. The densest of that is a shape written as `1,`:
/// 2 bytes of the file for each 8-byte `usize`, in a `Vec` that grows by doubling, so
/// 8 bytes per byte of the file at worst. The slack covers the small fixed costs (names,
/// error messages, the JSON of a tiny file).
fn read_bound(n: usize) -> usize {
    8 * n + SLACK
}

/// Fixed costs below any file's size: names, messages, small vectors.
const SLACK: usize = 64 << 10;

/// What resuming may request besides the file's own: the run's split of the numbers
/// below `max_number`, at most one million (as [`TrainConfig::validate`] checks), as
/// `u32`s. The model itself is no larger than the weights the file holds.
const SPLIT: usize = 4 * 1_000_000;

/// A run small enough that its checkpoint is a few kilobytes, so that thousands of
/// broken copies are read in seconds.
fn tiny() -> TrainConfig {
    TrainConfig {
        seed: 3,
        max_number: 40,
        train_size: 24,
        held_out: 8,
        batch_size: 4,
        steps: 4,
        lr: 1e-2,
        warmup: 1,
        final_lr: 1e-3,
        clip: 1.0,
        embed_size: 3,
        num_hiddens: 4,
    }
}

/// A directory of the test's own, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir()
            .join(format!("chapter09-fuzz-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The bytes of a full checkpoint and of a weights-only file of two steps of the tiny
/// run, written by the crate's own save functions.
fn originals(dir: &Dir) -> (Vec<u8>, Vec<u8>) {
    let mut t = Trainer::additive(tiny());
    t.train_until(2, |_| {});
    let (full, weights) = (
        dir.path("full.safetensors"),
        dir.path("weights.safetensors"),
    );
    save_checkpoint(&t, &full).unwrap();
    save_weights(&t, &weights).unwrap();
    (
        std::fs::read(full).unwrap(),
        std::fs::read(weights).unwrap(),
    )
}

/// A state's values bit for bit, by name: NaN equals NaN, 0.0 differs from -0.0.
fn bits<'a>(state: impl IntoIterator<Item = (&'a str, &'a Tensor)>) -> Values {
    state
        .into_iter()
        .map(|(n, t)| {
            let values = t.to_vec().iter().map(|x| x.to_bits()).collect();
            (n.to_string(), (t.shape().to_vec(), values))
        })
        .collect()
}

/// The f32 tensors of a valid safetensors file, decoded here independently of the
/// crate's reader.
fn file_tensors(bytes: &[u8]) -> Values {
    let file = safetensors::SafeTensors::deserialize(bytes).unwrap();
    file.iter()
        .map(|(n, view)| {
            let values = view
                .data()
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            (n.to_string(), (view.shape().to_vec(), values))
        })
        .collect()
}

type Values = BTreeMap<String, (Vec<usize>, Vec<u32>)>;

/// `found` holds the same names, shapes and bits as `expected`; otherwise the case
/// fails naming the first difference (not printing every value).
fn same(what: &str, found: &Values, expected: &Values) -> Result<(), TestCaseError> {
    for (name, value) in expected {
        match found.get(name) {
            None => prop_assert!(false, "{what}: {name} is missing"),
            Some(v) => prop_assert!(
                v == value,
                "{what}: {name} holds {:?} of shape {:?}, expected {:?} of shape {:?}",
                &v.1[..v.1.len().min(4)],
                v.0,
                &value.1[..value.1.len().min(4)],
                value.0
            ),
        }
    }
    for name in found.keys() {
        prop_assert!(
            expected.contains_key(name),
            "{what}: {name} is not expected"
        );
    }
    Ok(())
}

/// The error names the file first and says something after it.
fn check_message(e: &CheckpointError, path: &Path) -> Result<(), TestCaseError> {
    let message = e.to_string();
    let file = path.display().to_string();
    prop_assert!(
        message.starts_with(&file) && message.len() > file.len() + 2,
        "the message does not name the file and the problem: {message:?}"
    );
    Ok(())
}

/// Runs `f`, turning a panic into a failed case that says which function panicked.
fn no_panic<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| TestCaseError::fail(format!("{what} panicked")))
}

/// Writes `bytes` to `path` and checks every reader on it: `Checkpoint::read`, then
/// (when the file reads) `load_weights` into `target` and `resume`.
fn check_file(
    path: &Path,
    bytes: &[u8],
    target: &Seq2Seq<AdditiveAttention>,
) -> Result<(), TestCaseError> {
    std::fs::write(path, bytes).unwrap();
    let n = bytes.len();
    let (read, largest) = largest_allocation(|| {
        no_panic("Checkpoint::read", || Checkpoint::read(path))
    });
    prop_assert!(
        largest <= read_bound(n),
        "reading a file of {n} bytes requested {largest} bytes at once"
    );
    let c = match read? {
        Err(e) => return check_message(&e, path),
        Ok(c) => c,
    };
    // What was read is the file's, value for value.
    let file = file_tensors(bytes);
    same("Checkpoint::read", &bits(c.tensors.iter()), &file)?;
    let model_part = |prefix: &str| -> Values {
        file.iter()
            .filter_map(|(n, v)| {
                Some((n.strip_prefix(prefix)?.to_string(), v.clone()))
            })
            .filter(|(n, _)| !n.is_empty())
            .collect()
    };

    let before = bits(target.state_dict().iter());
    match no_panic("load_weights", || c.load_weights(target))? {
        Err(e) => {
            check_message(&e, path)?;
            same(
                &format!("after `{e}`"),
                &bits(target.state_dict().iter()),
                &before,
            )?;
        }
        Ok(()) => same(
            "load_weights",
            &bits(target.state_dict().iter()),
            &model_part("model."),
        )?,
    }

    let (resumed, largest) =
        largest_allocation(|| no_panic("resume", || c.resume(Seq2Seq::additive)));
    prop_assert!(
        largest <= read_bound(n) + SPLIT,
        "resuming from a file of {n} bytes requested {largest} bytes at once"
    );
    match resumed? {
        Err(e) => check_message(&e, path)?,
        Ok(t) => {
            same(
                "resume",
                &bits(t.model.state_dict().iter()),
                &model_part("model."),
            )?;
            let names = t.model.named_parameters().into_iter().map(|(n, _)| n);
            let mut moments = BTreeMap::new();
            for (name, (count, m, v)) in names.zip(t.optimizer.state()) {
                moments.insert(format!("m.{name}"), m.clone());
                moments.insert(format!("v.{name}"), v.clone());
                prop_assert!(*count >= 0);
            }
            let moments = bits(moments.iter().map(|(n, t)| (n.as_str(), t)));
            same("resume's moments", &moments, &model_part("adam."))?;
            prop_assert_eq!(t.step, c.info.step);
            prop_assert_eq!(&t.history, &c.info.history);
        }
    }
    Ok(())
}

/// The config of the properties: thousands of cases from a fixed seed, nothing written
/// next to the sources when one fails (the failing input is printed instead).
fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

fn dir_of_this_thread(name: &str) -> Dir {
    let thread = format!("{:?}", std::thread::current().id());
    Dir::new(&format!("{name}-{}", thread.replace(['(', ')'], "")))
}

proptest! {
    #![proptest_config(config(3000, 9))]

    /// Any one mutation of a full checkpoint: an error naming the file and nothing
    /// loaded, or a file that loads (into a model and into a resumed run) exactly.
    #[test]
    fn a_broken_full_checkpoint_is_an_error_or_loads_exactly(m in mutation()) {
        thread_local! {
            static FIXTURE: (Dir, Vec<u8>, Seq2Seq<AdditiveAttention>) = {
                let dir = dir_of_this_thread("full");
                let (full, _) = originals(&dir);
                (dir, full, Seq2Seq::additive(tiny().model()))
            };
        }
        FIXTURE.with(|(dir, full, target)| {
            check_file(&dir.path("case.safetensors"), &apply(&m, full, "chapter09"), target)
        })?;
    }
}

proptest! {
    #![proptest_config(config(1000, 10))]

    /// The same for a weights-only file, which no run resumes from.
    #[test]
    fn a_broken_weights_file_is_an_error_or_loads_exactly(m in mutation()) {
        thread_local! {
            static FIXTURE: (Dir, Vec<u8>, Seq2Seq<AdditiveAttention>) = {
                let dir = dir_of_this_thread("weights");
                let (_, weights) = originals(&dir);
                (dir, weights, Seq2Seq::additive(tiny().model()))
            };
        }
        FIXTURE.with(|(dir, weights, target)| {
            check_file(&dir.path("case.safetensors"), &apply(&m, weights, "chapter09"), target)
        })?;
    }

    /// Two mutations in a row, the second applied to the first's result when that is
    /// still a safetensors file.
    #[test]
    fn two_mutations_in_a_row_are_an_error_or_load_exactly(
        first in mutation(),
        second in mutation(),
    ) {
        thread_local! {
            static FIXTURE: (Dir, Vec<u8>, Seq2Seq<AdditiveAttention>) = {
                let dir = dir_of_this_thread("twice");
                let (full, _) = originals(&dir);
                (dir, full, Seq2Seq::additive(tiny().model()))
            };
        }
        FIXTURE.with(|(dir, full, target)| {
            let once = apply(&first, full, "chapter09");
            let twice = if still_mutable(&once) { apply(&second, &once, "chapter09") } else { once };
            check_file(&dir.path("case.safetensors"), &twice, target)
        })?;
    }
}

/// Whether `bytes` is a safetensors file with the run's metadata entry, as
/// [`apply`] needs.
fn still_mutable(bytes: &[u8]) -> bool {
    let Ok((_, header)) = safetensors::SafeTensors::read_metadata(bytes) else {
        return false;
    };
    let run = header.metadata().as_ref().and_then(|m| m.get("chapter09"));
    let fields = run.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok());
    !header.tensors().is_empty()
        && fields.is_some_and(|f| f.as_object().is_some_and(|o| !o.is_empty()))
}

#[test]
fn the_mutations_are_applied_as_described() {
    let dir = Dir::new("described");
    let (full, _) = originals(&dir);
    let parts = mutate::Parts::of(&full);
    // Split and joined, a file reads as before.
    let path = dir.path("joined.safetensors");
    std::fs::write(&path, parts.bytes()).unwrap();
    let joined = Checkpoint::read(&path).unwrap();
    assert_eq!(bits(joined.tensors.iter()), file_tensors(&full));
    // A lying length is where the length is.
    let m = Mutation::SetLength(u64::MAX);
    assert_eq!(apply(&m, &full, "chapter09")[..8], [0xff; 8]);
    assert_eq!(apply(&m, &full, "chapter09")[8..], full[8..]);
}

#[test]
fn a_valid_checkpoint_is_read_with_no_allocation_larger_than_the_file() {
    let dir = Dir::new("valid");
    let (full, _) = originals(&dir);
    let path = dir.path("c.safetensors");
    std::fs::write(&path, &full).unwrap();
    let (c, largest) = largest_allocation(|| Checkpoint::read(&path).unwrap());
    assert!(
        largest <= full.len(),
        "{largest} bytes for a file of {}",
        full.len()
    );
    let target = Seq2Seq::additive(tiny().model());
    c.load_weights(&target).unwrap();
    assert_eq!(
        bits(target.state_dict().iter()),
        bits(c.tensors.with_prefix("model.").iter())
    );
}

/// `Checkpoint::read` of `bytes` written to a file of `dir`, with the largest
/// allocation it requested.
fn read_bytes(
    dir: &Dir,
    bytes: &[u8],
) -> (PathBuf, Result<Checkpoint, CheckpointError>, usize) {
    let path = dir.path("case.safetensors");
    std::fs::write(&path, bytes).unwrap();
    let (read, largest) = largest_allocation(|| Checkpoint::read(&path));
    (path, read, largest)
}

#[test]
fn a_config_whose_model_the_file_cannot_hold_is_refused_before_it_is_built() {
    // Before: `num_hiddens` 2^20 read fine, and resuming built a model of that size
    // (terabytes); usize::MAX overflowed in the model's shapes.
    let dir = Dir::new("sizes");
    let (full, _) = originals(&dir);
    for (field, value, matrix) in [
        ("num_hiddens", "1048576", "3298544320512"),
        (
            "num_hiddens",
            "18446744073709551615",
            "more than usize::MAX",
        ),
        ("embed_size", "100000", "3400000"),
        ("num_hiddens", "1099511627776", "more than usize::MAX"),
    ] {
        let pointer = format!("/config/{field}");
        let m = Mutation::Meta(mutate::MetaLie::SetPointer(pointer, value.into()));
        let bytes = apply(&m, &full, "chapter09");
        let (path, read, largest) = read_bytes(&dir, &bytes);
        let message = read.unwrap_err().to_string();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
        assert!(
            message.contains(&format!("make a weight matrix of {matrix} numbers")),
            "{message}"
        );
        assert!(largest <= read_bound(bytes.len()), "{largest}");
    }
}

#[test]
fn resuming_refuses_moments_the_model_has_no_parameter_for() {
    // Before: an extra `adam.m.` tensor was ignored without a word, although an extra
    // `model.` tensor is refused.
    let dir = Dir::new("moments");
    let (full, _) = originals(&dir);
    let m = Mutation::Extra("adam.m.extra.weight".into(), vec![2]);
    let (path, read, _) = read_bytes(&dir, &apply(&m, &full, "chapter09"));
    let c = read.unwrap();
    let target = Seq2Seq::additive(tiny().model());
    c.load_weights(&target).unwrap();
    let message = c.resume(Seq2Seq::additive).unwrap_err().to_string();
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
    assert!(
        message
            .contains("tensor adam.m.extra.weight: the model has no such parameter"),
        "{message}"
    );
}
