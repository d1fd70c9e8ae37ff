//! The language model's checkpoints from anywhere: chapter 9's broken files (its
//! `tests/checkpoint_fuzz/`), made from a checkpoint of this chapter's character
//! model, fed to `store::read`, to `load_state_dict` and to `resume_lm`. Each gives an
//! error naming the file, never a panic, never an allocation the file's size does not
//! justify, and never a half-loaded model; a file that stays valid loads exactly.
//!
//! Seeded, nothing written next to the sources:
//! `cargo test -p chapter16 --test checkpoint_fuzz`.

#[path = "../../chapter09/tests/checkpoint_fuzz/largest_allocation.rs"]
mod largest_allocation;
#[path = "../../chapter09/tests/checkpoint_fuzz/mutate.rs"]
mod mutate;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use attention::prelude::*;
use chapter09::CheckpointError;
use chapter16::corpus::Corpus;
use chapter16::lm::{CharLm, LmConfig};
use chapter16::lm_train::{
    LmCheckpointInfo, LmTrainConfig, LmTrainer, resume_lm, save_lm_checkpoint,
};
use chapter16::store;
use largest_allocation::{Counting, largest_allocation};
use mutate::{Mutation, apply, mutation};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The metadata entry of a language-model checkpoint.
const KEY: &str = "chapter16";

/// The largest single allocation reading a file of `n` bytes may request: chapter 9's
/// bound (the file, its f32 values, and at worst 8 bytes of parsed header per byte of
/// it), with the same 64 KiB of slack.
fn read_bound(n: usize) -> usize {
    8 * n + (64 << 10)
}

const TEXT: &str = "to be or not to be, that is the question";

fn corpus() -> Corpus {
    Corpus::new(TEXT, 0.25)
}

/// A model and a run small enough that the checkpoint is a few kilobytes.
fn tiny() -> LmTrainConfig {
    let vocab = corpus().vocab.len();
    LmTrainConfig {
        model: LmConfig {
            vocab,
            num_hiddens: 4,
            num_heads: 2,
            ffn_num_hiddens: 8,
            num_layers: 1,
            block_size: 4,
            dropout: 0.0,
            norm_first: true,
        },
        batch_size: 2,
        steps: 4,
        warmup: 1,
        eval_every: 2,
        eval_batches: 1,
        ..LmTrainConfig::chapter(vocab)
    }
}

/// A directory of the test's own, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let thread = format!("{:?}", std::thread::current().id());
        let dir = std::env::temp_dir().join(format!(
            "chapter16-fuzz-{}-{name}-{}",
            std::process::id(),
            thread.replace(['(', ')'], "")
        ));
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

/// The bytes of a checkpoint of two steps of the tiny run, written by
/// `save_lm_checkpoint`.
fn original(dir: &Dir) -> Vec<u8> {
    let mut t = LmTrainer::new(tiny(), corpus());
    t.train_until(2, |_, _| {});
    let path = dir.path("lm.safetensors");
    save_lm_checkpoint(&t, &path).unwrap();
    std::fs::read(path).unwrap()
}

type Values = BTreeMap<String, (Vec<usize>, Vec<u32>)>;

/// A state's values bit for bit, by name.
fn bits<'a>(state: impl IntoIterator<Item = (&'a str, &'a Tensor)>) -> Values {
    state
        .into_iter()
        .map(|(n, t)| {
            let values = t.to_vec().iter().map(|x| x.to_bits()).collect();
            (n.to_string(), (t.shape().to_vec(), values))
        })
        .collect()
}

/// The entries of `values` under `prefix`, with the prefix cut off.
fn part(values: &Values, prefix: &str) -> Values {
    values
        .iter()
        .filter_map(|(n, v)| Some((n.strip_prefix(prefix)?.to_string(), v.clone())))
        .filter(|(n, _)| !n.is_empty())
        .collect()
}

/// `found` holds the same names, shapes and bits as `expected`, or the case fails
/// naming the first difference.
fn same(what: &str, found: &Values, expected: &Values) -> Result<(), TestCaseError> {
    for (name, value) in expected {
        let v = found.get(name);
        prop_assert!(v.is_some(), "{what}: {name} is missing");
        prop_assert!(v == Some(value), "{what}: {name} differs");
    }
    for name in found.keys() {
        prop_assert!(
            expected.contains_key(name),
            "{what}: {name} is not expected"
        );
    }
    Ok(())
}

fn check_message(e: &CheckpointError, path: &Path) -> Result<(), TestCaseError> {
    let message = e.to_string();
    let file = path.display().to_string();
    prop_assert!(
        message.starts_with(&file) && message.len() > file.len() + 2,
        "the message does not name the file and the problem: {message:?}"
    );
    Ok(())
}

fn no_panic<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| TestCaseError::fail(format!("{what} panicked")))
}

/// Writes `bytes` to `path` and checks `store::read`, then (when the file reads)
/// `load_state_dict` into `target` and `resume_lm`.
fn check_file(
    path: &Path,
    bytes: &[u8],
    target: &CharLm,
) -> Result<(), TestCaseError> {
    std::fs::write(path, bytes).unwrap();
    let n = bytes.len();
    let (read, largest) =
        largest_allocation(|| no_panic("store::read", || store::read(path, KEY)));
    prop_assert!(
        largest <= read_bound(n),
        "reading {n} bytes requested {largest} at once"
    );
    let (tensors, json) = match read? {
        Err(e) => return check_message(&e, path),
        Ok(read) => read,
    };
    let stored = bits(tensors.iter());

    let before = bits(target.state_dict().iter());
    match no_panic("load_state_dict", || {
        target.load_state_dict(&tensors.with_prefix("model."))
    })? {
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            same(
                &format!("after `{e}`"),
                &bits(target.state_dict().iter()),
                &before,
            )?;
        }
        Ok(()) => same(
            "load_state_dict",
            &bits(target.state_dict().iter()),
            &part(&stored, "model."),
        )?,
    }

    let (resumed, largest) =
        largest_allocation(|| no_panic("resume_lm", || resume_lm(path, corpus())));
    prop_assert!(
        largest <= read_bound(n),
        "resuming from {n} bytes requested {largest} at once"
    );
    match resumed? {
        Err(e) => check_message(&e, path)?,
        Ok(t) => {
            same(
                "resume_lm",
                &bits(t.model.state_dict().iter()),
                &part(&stored, "model."),
            )?;
            let names = t.model.named_parameters().into_iter().map(|(n, _)| n);
            let mut moments = BTreeMap::new();
            for (name, (_, m, v)) in names.zip(t.optimizer.state()) {
                moments.insert(format!("m.{name}"), m.clone());
                moments.insert(format!("v.{name}"), v.clone());
            }
            let moments = bits(moments.iter().map(|(n, t)| (n.as_str(), t)));
            same("resume_lm's moments", &moments, &part(&stored, "adam."))?;
            let info: LmCheckpointInfo = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(t.step, info.step);
            prop_assert_eq!(&t.history, &info.history);
            prop_assert_eq!(t.config, info.config);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(16),
        ..ProptestConfig::default()
    })]

    /// Any one mutation of a language-model checkpoint: an error naming the file and
    /// nothing loaded, or a file that loads exactly.
    #[test]
    fn a_broken_lm_checkpoint_is_an_error_or_resumes_exactly(m in mutation()) {
        thread_local! {
            static FIXTURE: (Dir, Vec<u8>, CharLm) = {
                let dir = Dir::new("lm");
                let bytes = original(&dir);
                (dir, bytes, CharLm::new(tiny().model))
            };
        }
        FIXTURE.with(|(dir, bytes, target)| {
            check_file(&dir.path("case.safetensors"), &apply(&m, bytes, KEY), target)
        })?;
    }
}

/// `resume_lm` on `base` with the model field `field` of its metadata set to `value`.
fn resume_with(field: &str, value: &str) -> (PathBuf, String, usize) {
    let dir = Dir::new(field);
    let base = original(&dir);
    let pointer = format!("/config/model/{field}");
    let m = Mutation::Meta(mutate::MetaLie::SetPointer(pointer, value.into()));
    let path = dir.path("case.safetensors");
    let bytes = apply(&m, &base, KEY);
    std::fs::write(&path, &bytes).unwrap();
    let (resumed, largest) = largest_allocation(|| {
        catch_unwind(AssertUnwindSafe(|| resume_lm(&path, corpus())))
            .unwrap_or_else(|_| panic!("resume_lm panicked with {field} = {value}"))
    });
    assert!(
        largest <= read_bound(bytes.len()),
        "{largest} bytes at once"
    );
    let message = resumed.unwrap_err().to_string();
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
    (path, message, largest)
}

#[test]
fn a_stored_model_config_no_model_can_be_built_from_is_refused() {
    // Before: each of these panicked inside CharLm::new, while resuming.
    for (field, value, reason) in [
        (
            "num_heads",
            "0",
            "num_heads is 0, the model needs at least 1",
        ),
        (
            "num_heads",
            "3",
            "num_hiddens 4 is not divisible by num_heads 3",
        ),
        (
            "block_size",
            "0",
            "block_size is 0, the model needs at least 1",
        ),
        (
            "dropout",
            "1.5",
            "dropout is 1.5, it must be a probability in [0, 1]",
        ),
    ] {
        let (_, message, _) = resume_with(field, value);
        assert!(
            message.contains(&format!(
                "the `chapter16` metadata entry's model: {reason}"
            )),
            "{message}"
        );
    }
}

#[test]
fn a_stored_model_larger_than_its_weights_is_refused_before_it_is_built() {
    // Before: these built a model of the stored sizes (gigabytes, or a capacity
    // overflow) before checking a single tensor.
    for (field, value) in [
        ("num_hiddens", "1048576"),
        ("block_size", "1099511627776"),
        ("num_layers", "100000000"),
        ("ffn_num_hiddens", "18446744073709551615"),
    ] {
        let (_, message, _) = resume_with(field, value);
        assert!(message.contains("and the file holds"), "{message}");
    }
}

#[test]
fn a_stored_vocabulary_other_than_the_corpus_is_refused() {
    // Before: the run resumed, with a model whose output layer does not match the
    // corpus's characters.
    let vocab = corpus().vocab.len();
    let (_, message, _) = resume_with("vocab", &(vocab + 1).to_string());
    assert!(
        message.contains(&format!(
            "reads {} characters, the corpus has {vocab}",
            vocab + 1
        )),
        "{message}"
    );
}

#[test]
fn resuming_refuses_moments_the_model_has_no_parameter_for() {
    let dir = Dir::new("moments");
    let base = original(&dir);
    let m = Mutation::Extra("adam.v.extra".into(), vec![1]);
    let path = dir.path("case.safetensors");
    std::fs::write(&path, apply(&m, &base, KEY)).unwrap();
    let message = resume_lm(&path, corpus()).unwrap_err().to_string();
    assert!(
        message.contains("tensor adam.v.extra: the model has no such parameter"),
        "{message}"
    );
}
