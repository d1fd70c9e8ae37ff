//! Checkpoints in the safetensors format: the model's weights by name, optionally
//! Adam's moments, and what the run needs to continue (its config, step and history).
//!
//! A file holds:
//!
//! | tensor | what |
//! |---|---|
//! | `model.{name}` | each entry of the model's `state_dict()` |
//! | `adam.m.{name}`, `adam.v.{name}` | Adam's moments of each parameter (full checkpoints only) |
//!
//! and one metadata entry, `chapter09`, a JSON [`CheckpointInfo`]: the
//! [`TrainConfig`], the step, the [`History`] and Adam's per-parameter update counts.
//! One entry, not many: safetensors writes its metadata map in no fixed order, and a
//! single entry keeps the bytes of a file the same from one save to the next.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use attention::prelude::*;
use engine::nn::LoadError;
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::{Deserialize, Serialize};

use crate::model::{DecoderAttention, Seq2Seq, Seq2SeqConfig};
use crate::train::{History, TrainConfig, Trainer};

/// The name of the metadata entry that holds the [`CheckpointInfo`].
const INFO_KEY: &str = "chapter09";

// ANCHOR: info
/// What a checkpoint says about its run, besides the tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointInfo {
    /// The settings of the run (the model's sizes follow from them).
    pub config: TrainConfig,
    /// The number of steps taken when the checkpoint was saved.
    pub step: usize,
    /// The losses and evaluations so far.
    pub history: History,
    /// Adam's update count of each parameter, in the model's parameter order; `None`
    /// in a weights-only file.
    pub adam_steps: Option<Vec<i32>>,
}
// ANCHOR_END: info

// ANCHOR: error
/// Why a checkpoint could not be saved or loaded. Every variant names the file.
#[derive(Debug)]
pub enum CheckpointError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// `"read"` or `"write"`.
        action: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a checkpoint of this chapter: not safetensors, truncated,
    /// another element type, without the metadata entry, or with a config no run can
    /// be built from.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The tensors do not fit the model: missing tensors, tensors of the wrong shape,
    /// or tensors the model has no parameter for. Names are as stored in the file.
    DoesNotFit {
        /// The file.
        path: PathBuf,
        /// Every problem at once.
        problems: LoadError,
    },
    /// A run cannot resume from a weights-only file: it holds no optimizer state.
    NoOptimizerState {
        /// The file.
        path: PathBuf,
    },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io {
                path,
                action,
                source,
            } => write!(
                f,
                "{}: cannot {action} the checkpoint: {source}",
                path.display()
            ),
            CheckpointError::Corrupt { path, reason } => {
                write!(f, "{}: not a valid checkpoint: {reason}", path.display())
            }
            CheckpointError::DoesNotFit { path, problems } => {
                write!(
                    f,
                    "{}: the checkpoint does not fit the model",
                    path.display()
                )?;
                for (name, expected, found) in &problems.mismatched {
                    write!(
                        f,
                        "\n  tensor {name}: the model expects shape {expected:?}, \
                         the file has {found:?}"
                    )?;
                }
                for name in &problems.missing {
                    write!(f, "\n  tensor {name}: missing from the file")?;
                }
                for name in &problems.unexpected {
                    write!(f, "\n  tensor {name}: the model has no such parameter")?;
                }
                Ok(())
            }
            CheckpointError::NoOptimizerState { path } => write!(
                f,
                "{}: holds weights only, without Adam's moments; a run cannot resume \
                 from it (load the weights with load_weights instead)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
// ANCHOR_END: error

// ANCHOR: save
/// Writes `tensors` and `info` to `path` in the safetensors format. The bytes go to a
/// temporary file first, renamed over `path` once complete, so a crash while saving
/// never leaves a half-written checkpoint where the last good one was.
fn write_file(
    path: &Path,
    tensors: &[(String, Tensor)],
    info: &CheckpointInfo,
) -> Result<(), CheckpointError> {
    let io = |action, source| CheckpointError::Io {
        path: path.to_path_buf(),
        action,
        source,
    };
    // safetensors stores little-endian bytes; f32 → 4 bytes each.
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, t)| t.to_vec().iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views = tensors.iter().zip(&bytes).map(|((name, t), data)| {
        let view = TensorView::new(Dtype::F32, t.shape().to_vec(), data)
            .expect("4 bytes per element of the shape");
        (name.clone(), view)
    });
    let json = serde_json::to_string(info).expect("the info serialises");
    let metadata = HashMap::from([(INFO_KEY.to_string(), json)]);
    let file = safetensors::serialize(views, Some(metadata)).map_err(|e| {
        CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("cannot serialise: {e}"),
        }
    })?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| io("write", e))?;
    }
    let partial = path.with_extension("partial");
    fs::write(&partial, file).map_err(|e| io("write", e))?;
    fs::rename(&partial, path).map_err(|e| io("write", e))
}

/// The model's weights under `model.{name}`, in the order of its `state_dict()`.
fn model_tensors<A: DecoderAttention>(model: &Seq2Seq<A>) -> Vec<(String, Tensor)> {
    model
        .state_dict()
        .iter()
        .map(|(name, t)| (format!("model.{name}"), t.clone()))
        .collect()
}

/// Saves everything a run needs to continue exactly: the weights, Adam's moments and
/// update counts, the config, the step and the history.
pub fn save_checkpoint<A: DecoderAttention>(
    trainer: &Trainer<A>,
    path: impl AsRef<Path>,
) -> Result<(), CheckpointError> {
    let mut tensors = model_tensors(&trainer.model);
    let names = trainer.model.named_parameters().into_iter().map(|(n, _)| n);
    let mut adam_steps = Vec::new();
    for (name, (t, m, v)) in names.zip(trainer.optimizer.state()) {
        tensors.push((format!("adam.m.{name}"), m.clone()));
        tensors.push((format!("adam.v.{name}"), v.clone()));
        adam_steps.push(*t);
    }
    let info = CheckpointInfo {
        config: trainer.config,
        step: trainer.step,
        history: trainer.history.clone(),
        adam_steps: Some(adam_steps),
    };
    write_file(path.as_ref(), &tensors, &info)
}

/// Saves the weights, the config and the history, without the optimizer: a third of
/// the size of a full checkpoint, enough to use the model (and to plot its training),
/// not to continue training it exactly.
pub fn save_weights<A: DecoderAttention>(
    trainer: &Trainer<A>,
    path: impl AsRef<Path>,
) -> Result<(), CheckpointError> {
    let info = CheckpointInfo {
        config: trainer.config,
        step: trainer.step,
        history: trainer.history.clone(),
        adam_steps: None,
    };
    write_file(path.as_ref(), &model_tensors(&trainer.model), &info)
}
// ANCHOR_END: save

// ANCHOR: read
/// A checkpoint read from a file: its tensors by name and its [`CheckpointInfo`],
/// checked to be well-formed (not yet to fit a model).
#[derive(Debug)]
pub struct Checkpoint {
    /// The file it was read from.
    pub path: PathBuf,
    /// Every tensor, by the name stored in the file.
    pub tensors: StateDict,
    /// The run's config, step, history and Adam's counts.
    pub info: CheckpointInfo,
}

impl Checkpoint {
    /// Reads and checks `path`: a safetensors file of `f32` tensors with this
    /// chapter's metadata entry, whose config a run can be built from
    /// ([`TrainConfig::validate`]).
    pub fn read(path: impl AsRef<Path>) -> Result<Checkpoint, CheckpointError> {
        let path = path.as_ref().to_path_buf();
        let bytes = fs::read(&path).map_err(|source| CheckpointError::Io {
            path: path.clone(),
            action: "read",
            source,
        })?;
        let corrupt = |reason: String| CheckpointError::Corrupt {
            path: path.clone(),
            reason,
        };
        let file = SafeTensors::deserialize(&bytes)
            .map_err(|e| corrupt(format!("safetensors says: {e}")))?;
        let mut entries: Vec<(String, Tensor)> = Vec::new();
        for (name, view) in file.iter() {
            if view.dtype() != Dtype::F32 {
                return Err(corrupt(format!(
                    "tensor {name} holds {:?}, this chapter stores F32",
                    view.dtype()
                )));
            }
            let values = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            entries.push((name.to_string(), Tensor::from_vec(values, view.shape())));
        }
        // The file's order is by name; keep that, it is stable.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let (_, header) = SafeTensors::read_metadata(&bytes)
            .map_err(|e| corrupt(format!("safetensors says: {e}")))?;
        let json = header
            .metadata()
            .as_ref()
            .and_then(|m| m.get(INFO_KEY))
            .ok_or_else(|| corrupt(format!("no `{INFO_KEY}` metadata entry")))?;
        let info: CheckpointInfo = serde_json::from_str(json)
            .map_err(|e| corrupt(format!("the `{INFO_KEY}` metadata entry: {e}")))?;
        // A config no run can be built from (a size 0, say) is refused here, not left
        // to panic in the middle of resuming.
        info.config.validate().map_err(|e| {
            corrupt(format!("the `{INFO_KEY}` metadata entry's config: {e}"))
        })?;
        // Nor is a config whose model no file of this size could hold, before anyone
        // builds that model to load the weights into.
        let tensors: StateDict = entries.into_iter().collect();
        fits_the_weights(&info.config, &tensors).map_err(|e| {
            corrupt(format!("the `{INFO_KEY}` metadata entry's config: {e}"))
        })?;
        Ok(Checkpoint {
            path,
            tensors,
            info,
        })
    }

    // ANCHOR_END: read

    /// Writes this checkpoint to `path` (after editing it, say), and records the new
    /// path.
    pub fn write(&mut self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        let tensors: Vec<(String, Tensor)> = self
            .tensors
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect();
        write_file(path.as_ref(), &tensors, &self.info)?;
        self.path = path.as_ref().to_path_buf();
        Ok(())
    }

    /// The model's sizes, from the stored config.
    pub fn model_config(&self) -> Seq2SeqConfig {
        self.info.config.model()
    }

    // ANCHOR: load_weights
    /// Copies the weights into `model` through `load_state_dict`: every parameter
    /// must be in the file with its shape, and the file may hold no other `model.`
    /// tensor. On an error nothing is changed.
    pub fn load_weights<A: DecoderAttention>(
        &self,
        model: &Seq2Seq<A>,
    ) -> Result<(), CheckpointError> {
        model
            .load_state_dict(&self.tensors.with_prefix("model."))
            .map_err(|e| self.does_not_fit(e, "model."))
    }

    // ANCHOR_END: load_weights

    /// The problems of a `load_state_dict`, with the names as the file stores them.
    fn does_not_fit(&self, e: LoadError, prefix: &str) -> CheckpointError {
        let named = |n: &String| format!("{prefix}{n}");
        CheckpointError::DoesNotFit {
            path: self.path.clone(),
            problems: LoadError {
                missing: e.missing.iter().map(named).collect(),
                unexpected: e.unexpected.iter().map(named).collect(),
                mismatched: e
                    .mismatched
                    .into_iter()
                    .map(|(n, a, b)| (named(&n), a, b))
                    .collect(),
            },
        }
    }

    // ANCHOR: resume
    /// Continues the run: a [`Trainer`] rebuilt from the stored config (so the split
    /// and the batch order are the run's), with the stored weights, Adam's moments
    /// and counts, the step and the history. `build` makes the model, as for
    /// [`Trainer::new`].
    pub fn resume<A: DecoderAttention>(
        &self,
        build: impl FnOnce(Seq2SeqConfig) -> Seq2Seq<A>,
    ) -> Result<Trainer<A>, CheckpointError> {
        let Some(counts) = &self.info.adam_steps else {
            return Err(CheckpointError::NoOptimizerState {
                path: self.path.clone(),
            });
        };
        let mut trainer = Trainer::new(self.info.config, build);
        self.load_weights(&trainer.model)?;
        // The moments are checked the same way, against the parameters' shapes.
        let params = trainer.model.named_parameters();
        if counts.len() != params.len() {
            return Err(CheckpointError::Corrupt {
                path: self.path.clone(),
                reason: format!(
                    "Adam's counts are given for {} parameters, the model has {}",
                    counts.len(),
                    params.len()
                ),
            });
        }
        let mut problems = LoadError::default();
        let mut state = Vec::with_capacity(params.len());
        for (i, (name, p)) in params.iter().enumerate() {
            let mut moment = |kind: &str| {
                let key = format!("adam.{kind}.{name}");
                match self.tensors.get(&key) {
                    Some(t) if t.shape() == p.shape() => t.clone(),
                    Some(t) => {
                        problems.mismatched.push((
                            key,
                            p.shape().to_vec(),
                            t.shape().to_vec(),
                        ));
                        p.zeros_like()
                    }
                    None => {
                        problems.missing.push(key);
                        p.zeros_like()
                    }
                }
            };
            let (m, v) = (moment("m"), moment("v"));
            state.push((counts[i], m, v));
        }
        // As for the weights, a moment the model has no parameter for is refused.
        problems.unexpected = unexpected_moments(&self.tensors, &params);
        if !problems.missing.is_empty()
            || !problems.mismatched.is_empty()
            || !problems.unexpected.is_empty()
        {
            return Err(CheckpointError::DoesNotFit {
                path: self.path.clone(),
                problems,
            });
        }
        trainer.optimizer.set_state(state);
        trainer.step = self.info.step;
        trainer.history = self.info.history.clone();
        Ok(trainer)
    }
    // ANCHOR_END: resume
}

/// Checks that the model `config` describes is no larger than the weights stored
/// under `model.`: its largest weight matrix (whatever the attention) holds no more
/// numbers than all of them together. A config that lies about the sizes is refused
/// before a model of its sizes is allocated, while a file missing a tensor or two still
/// reaches `load_state_dict`, whose message names them.
fn fits_the_weights(config: &TrainConfig, tensors: &StateDict) -> Result<(), String> {
    let c = config.model();
    let (e, h) = (c.embed_size, c.num_hiddens);
    let three_h = h.checked_mul(3);
    let largest = [
        c.src_vocab.checked_mul(e),
        c.tgt_vocab.checked_mul(e),
        c.tgt_vocab.checked_mul(h),
        // The decoder's GRU reads the embedding and the context: [3H, E + H].
        e.checked_add(h)
            .zip(three_h)
            .and_then(|(a, b)| a.checked_mul(b)),
    ]
    .into_iter()
    .try_fold(0, |m, n| n.map(|n| n.max(m)));
    let stored: usize = tensors
        .iter()
        .filter(|(n, _)| n.starts_with("model."))
        .map(|(_, t)| t.numel())
        .sum();
    match largest {
        Some(n) if n <= stored => Ok(()),
        _ => Err(format!(
            "embed_size {e} and num_hiddens {h} make a weight matrix of {} numbers, \
             and the file holds {stored} weights in all",
            largest.map_or("more than usize::MAX".to_string(), |n| n.to_string())
        )),
    }
}

/// The names of the `adam.m.` and `adam.v.` tensors of `tensors` that are not the
/// moments of one of `params` (named as the model's `named_parameters()` names them):
/// what a resume refuses, as `load_state_dict` refuses a weight of no parameter.
pub fn unexpected_moments(
    tensors: &StateDict,
    params: &[(String, Tensor)],
) -> Vec<String> {
    tensors
        .names()
        .filter(|n| n.starts_with("adam."))
        .filter(|n| {
            !params.iter().any(|(p, _)| {
                [n.strip_prefix("adam.m."), n.strip_prefix("adam.v.")]
                    .contains(&Some(p))
            })
        })
        .map(str::to_string)
        .collect()
}
