//! The golden data stays wired up: every JSON file in `tests/golden/` has the script that
//! writes it, that script is run by `generate.py` and listed in the folder's README, and
//! some test reads the JSON. A data file nobody reads, or one nobody can regenerate, fails
//! here.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden_json_files() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root().join("tests/golden"))
        .expect("tests/golden exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// Every `.rs` file under the crates' `tests/` folders.
fn test_sources() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut pending: Vec<PathBuf> = ["tests/engine", "tests/attention"]
        .iter()
        .map(|d| root().join(d))
        .collect();
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = fs::read_to_string(&path).expect("readable source");
                out.push((path, text));
            }
        }
    }
    out
}

fn read(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn there_is_golden_data() {
    assert!(
        golden_json_files().len() >= 3,
        "found {:?}",
        golden_json_files()
    );
}

#[test]
fn every_golden_file_has_its_script_and_is_regenerated_by_generate_py() {
    let generate = read(&root().join("tests/golden/generate.py"));
    let readme = read(&root().join("tests/golden/README.md"));
    for json in golden_json_files() {
        let script = json.replace(".json", ".py");
        assert!(
            root().join("tests/golden").join(&script).exists(),
            "{json} has no script {script}"
        );
        assert!(
            generate.contains(&format!("\"{script}\"")),
            "generate.py does not run {script}"
        );
        assert!(
            readme.contains(&format!("`{json}`")),
            "tests/golden/README.md does not list {json}"
        );
    }
}

#[test]
fn every_golden_file_is_read_by_a_test() {
    let sources = test_sources();
    for json in golden_json_files() {
        let needle = format!("tests/golden/{json}");
        assert!(
            sources.iter().any(|(_, text)| text.contains(&needle)),
            "no test under tests/engine or tests/attention reads {needle}"
        );
    }
}
