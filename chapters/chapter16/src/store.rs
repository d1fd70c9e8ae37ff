//! Files of named f32 tensors in the safetensors format with one JSON metadata entry,
//! the layout of chapter 9's checkpoints: what this chapter's checkpoints and
//! recorded runs are written in.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use attention::prelude::*;
use chapter09::CheckpointError;
use safetensors::{Dtype, SafeTensors, tensor::TensorView};

/// Writes `tensors` and the metadata entry `key` = `json` to `path`: first to a
/// temporary file, renamed over `path` once complete, so a crash while saving never
/// leaves half a file where the last good one was.
pub fn write(
    path: &Path,
    tensors: &[(String, Tensor)],
    key: &str,
    json: String,
) -> Result<(), CheckpointError> {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, t)| t.to_vec().iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views = tensors.iter().zip(&bytes).map(|((name, t), data)| {
        let view = TensorView::new(Dtype::F32, t.shape().to_vec(), data)
            .expect("4 bytes per element of the shape");
        (name.clone(), view)
    });
    let metadata = HashMap::from([(key.to_string(), json)]);
    let file = safetensors::serialize(views, Some(metadata)).map_err(|e| {
        CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("cannot serialise: {e}"),
        }
    })?;
    let io = |source| CheckpointError::Io {
        path: path.to_path_buf(),
        action: "write",
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let partial = path.with_extension("partial");
    fs::write(&partial, file).map_err(io)?;
    fs::rename(&partial, path).map_err(io)
}

/// Reads `path`: every tensor by name, and the metadata entry `key`.
pub fn read(path: &Path, key: &str) -> Result<(StateDict, String), CheckpointError> {
    let corrupt = |reason: String| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = fs::read(path).map_err(|source| CheckpointError::Io {
        path: path.to_path_buf(),
        action: "read",
        source,
    })?;
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
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let (_, header) = SafeTensors::read_metadata(&bytes)
        .map_err(|e| corrupt(format!("safetensors says: {e}")))?;
    let json = header
        .metadata()
        .as_ref()
        .and_then(|m| m.get(key))
        .ok_or_else(|| corrupt(format!("no `{key}` metadata entry")))?
        .clone();
    Ok((entries.into_iter().collect(), json))
}

/// The entries of a model's `state_dict()`, each named `model.{name}`.
pub fn model_tensors(model: &impl Module) -> Vec<(String, Tensor)> {
    model
        .state_dict()
        .iter()
        .map(|(name, t)| (format!("model.{name}"), t.clone()))
        .collect()
}
