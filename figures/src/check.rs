//! Keeping committed figures equal to what the code draws.

use std::fs;
use std::path::PathBuf;

/// Set this environment variable to `1` to (re)write figures instead of comparing them.
pub const UPDATE_VARIABLE: &str = "UPDATE_FIGURES";

/// The path of the figure `name` (e.g. `"ch03-weights.svg"`) under `book/src/figures/`.
pub fn figure_path(name: &str) -> PathBuf {
    super::figures_dir().join(name)
}

/// Compares `svg` with the committed figure `name`, or writes it when `UPDATE_FIGURES=1`
/// is set (or when `write` asks to, as an example does).
///
/// # Errors
/// A message naming the figure and the command that regenerates it when the committed
/// file is missing or differs, or the I/O error when writing fails.
pub fn check_or_update(name: &str, svg: &str) -> Result<(), String> {
    let path = figure_path(name);
    if std::env::var(UPDATE_VARIABLE).is_ok_and(|v| v == "1") {
        return write(name, svg);
    }
    match fs::read_to_string(&path) {
        Ok(committed) if committed == svg => Ok(()),
        Ok(_) => Err(format!(
            "the committed figure {} differs from what the code draws now; if the change is intended, regenerate it with {UPDATE_VARIABLE}=1 and commit it",
            path.display()
        )),
        Err(e) => Err(format!(
            "cannot read the committed figure {}: {e}; generate it with {UPDATE_VARIABLE}=1",
            path.display()
        )),
    }
}

/// Writes the figure `name` under `book/src/figures/`.
///
/// # Errors
/// The I/O error, with the path.
pub fn write(name: &str, svg: &str) -> Result<(), String> {
    let path = figure_path(name);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
