//! The chapter's recorded runs, in `trained/`: the encoder–decoder Transformer trained
//! on chapter 9's task, and the character model, each as its weights with what the
//! run recorded (config, history, timings); and the measurements of `data/`.

use std::path::{Path, PathBuf};

use attention::prelude::*;
use chapter09::{CheckpointError, History, TrainConfig};
use serde::{Deserialize, Serialize};

use crate::lm::CharLm;
use crate::lm_train::{LmHistory, LmTrainConfig};
use crate::seq2seq::{TransformerConfig, TransformerSeq2Seq};
use crate::store;

/// A file of the crate: `chapters/chapter16/{relative}`.
pub fn crate_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Where the translation run is recorded.
pub const TRANSLATION_FILE: &str = "trained/translation.safetensors";
/// Where the character model's run is recorded.
pub const LM_FILE: &str = "trained/lm.safetensors";

/// What the `translation` example records besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslationRecord {
    /// Chapter 9's data and optimisation settings.
    pub train: TrainConfig,
    /// The Transformer's sizes.
    pub model: TransformerConfig,
    /// Every step's loss and the held-out scores.
    pub history: History,
    /// Training steps per second of the Transformer, on the recording machine.
    pub steps_per_second: f32,
    /// Training steps per second of chapter 9's GRU with additive attention, timed by
    /// the same example on the same machine.
    pub gru_steps_per_second: f32,
    /// The machine the timings come from.
    pub machine: String,
}

/// What the `lm` example records besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LmRecord {
    /// The run's settings.
    pub config: LmTrainConfig,
    /// Every step's loss and the validation losses.
    pub history: LmHistory,
    /// The wall time of the whole run, in seconds, on the recording machine.
    pub seconds: f32,
    /// The machine the time comes from.
    pub machine: String,
}

/// Writes a trained model and its record.
pub fn save_record(
    path: &Path,
    model: &impl Module,
    record: &impl Serialize,
) -> Result<(), CheckpointError> {
    let json = serde_json::to_string(record).expect("the record serialises");
    store::write(path, &store::model_tensors(model), "chapter16", json)
}

/// Reads a record and loads its weights into the model `build` makes from it.
fn read_record<R: for<'de> Deserialize<'de>, M: Module>(
    path: &Path,
    build: impl FnOnce(&R) -> M,
) -> Result<(M, R), CheckpointError> {
    let (tensors, json) = store::read(path, "chapter16")?;
    let record: R =
        serde_json::from_str(&json).map_err(|e| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("the `chapter16` metadata entry: {e}"),
        })?;
    let mut model = build(&record);
    model
        .load_state_dict(&tensors.with_prefix("model."))
        .map_err(|problems| CheckpointError::DoesNotFit {
            path: path.to_path_buf(),
            problems,
        })?;
    model.eval();
    Ok((model, record))
}

/// The recorded translation model, in evaluation mode, with its record.
///
/// # Panics
/// When the file is missing or does not fit: the crate ships it.
pub fn recorded_translation() -> (TransformerSeq2Seq, TranslationRecord) {
    read_record(&crate_path(TRANSLATION_FILE), |r: &TranslationRecord| {
        TransformerSeq2Seq::new(r.model)
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The recorded character model, in evaluation mode, with its record.
///
/// # Panics
/// When the file is missing or does not fit: the crate ships it.
pub fn recorded_lm() -> (CharLm, LmRecord) {
    read_record(&crate_path(LM_FILE), |r: &LmRecord| {
        CharLm::new(r.config.model)
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Where the `generate` example records its times.
pub const GENERATION_FILE: &str = "data/generation.tsv";

/// The times of generation with and without the KV cache, from the `generate`
/// example.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerationTimes {
    /// Characters generated in each timed run.
    pub new_tokens: usize,
    /// Milliseconds per character with the cache (the fastest of three runs).
    pub cached_ms_per_token: f32,
    /// Milliseconds per character without it.
    pub uncached_ms_per_token: f32,
    /// The machine the times come from.
    pub machine: String,
}

impl GenerationTimes {
    /// The uncached time over the cached one.
    pub fn speedup(&self) -> f32 {
        self.uncached_ms_per_token / self.cached_ms_per_token
    }

    /// One header line and one line of values, tab-separated.
    pub fn to_tsv(&self) -> String {
        format!(
            "new_tokens\tcached_ms_per_token\tuncached_ms_per_token\tmachine\n\
             {}\t{:.3}\t{:.3}\t{}\n",
            self.new_tokens,
            self.cached_ms_per_token,
            self.uncached_ms_per_token,
            self.machine
        )
    }

    /// Parses what [`to_tsv`](Self::to_tsv) wrote.
    ///
    /// # Panics
    /// When the text is not two lines of four tab-separated fields.
    pub fn from_tsv(text: &str) -> GenerationTimes {
        let line = text.lines().nth(1).expect("a line of values");
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "four fields in {line:?}");
        let number = |s: &str| s.parse::<f32>().expect("a number");
        GenerationTimes {
            new_tokens: f[0].parse().expect("a count"),
            cached_ms_per_token: number(f[1]),
            uncached_ms_per_token: number(f[2]),
            machine: f[3].to_string(),
        }
    }

    /// The recorded times, `data/generation.tsv`.
    pub fn recorded() -> GenerationTimes {
        GenerationTimes::from_tsv(include_str!("../data/generation.tsv"))
    }

    /// The times as the page shows them.
    pub fn table(&self) -> String {
        format!(
            "{} new characters, fastest of three runs, on\n  {}:\n\
             \x20 with the KV cache     {:>7.2} ms per character\n\
             \x20 without (recompute)   {:>7.2} ms per character\n\
             \x20 speed-up              {:>7.1}x",
            self.new_tokens,
            self.machine,
            self.cached_ms_per_token,
            self.uncached_ms_per_token,
            self.speedup()
        )
    }
}
