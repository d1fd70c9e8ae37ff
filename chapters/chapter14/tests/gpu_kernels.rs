//! The page's list of the ops without a GPU kernel is the engine's op table's, and
//! the chapters it says use them are the ones whose code calls them.
//!
//! The op table is the documentation of `engine` (`engine/src/lib.rs`): one row per
//! group of ops, whose fourth column names the GPU kernel, or says `none`. Read here
//! as text, so that a kernel added (or an op added without one) fails this test until
//! the page says so.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const PAGE: &str = include_str!("../../../book/src/ch14-attention-on-the-gpu.md");
const ENGINE_LIB: &str = include_str!("../../../engine/src/lib.rs");

/// The backticked words of `text` that are outside parentheses, each cut at its first
/// `(`: the op names of a cell such as "`autocast(p, …)` (a scope: …)".
fn op_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '`' => {
                let word: String = chars.by_ref().take_while(|&c| c != '`').collect();
                if depth == 0 {
                    let name =
                        word.split('(').next().unwrap_or("").trim().to_string();
                    if !name.is_empty() {
                        names.push(name);
                    }
                }
            }
            _ => {}
        }
    }
    names
}

/// The op table's rows: (the names of the row's ops, whether it has a GPU kernel).
fn op_table() -> Vec<(Vec<String>, bool)> {
    let rows: Vec<(Vec<String>, bool)> = ENGINE_LIB
        .lines()
        .filter_map(|line| line.strip_prefix("//! |"))
        .map(|row| row.split('|').map(str::trim).collect::<Vec<_>>())
        .filter(|cells| {
            cells.len() >= 4 && cells[0] != "op" && !cells[0].starts_with("---")
        })
        .map(|cells| (op_names(cells[0]), !cells[3].starts_with("none")))
        .collect();
    assert!(
        rows.len() > 10,
        "the op table was not found in engine/src/lib.rs"
    );
    rows
}

/// The page's paragraph that lists the ops without a GPU kernel.
fn paragraph() -> &'static str {
    let start = PAGE
        .find("The engine's op table")
        .expect("the page lists the ops without a GPU kernel");
    let end = PAGE[start..].find("\n\n").map_or(PAGE.len(), |e| start + e);
    &PAGE[start..end]
}

#[test]
fn the_page_names_every_op_without_a_gpu_kernel_and_no_other() {
    let table = op_table();
    let without: Vec<&Vec<String>> = table
        .iter()
        .filter(|(_, kernel)| !kernel)
        .map(|(names, _)| names)
        .collect();
    let text = paragraph();
    let words = [
        "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight",
    ];
    let count = words[without.len() - 1];
    assert!(
        text.contains(&format!("{count} of its rows have none")),
        "the op table has {} rows without a GPU kernel, {without:?}; the page \
         says:\n{text}",
        without.len()
    );
    for names in &without {
        for name in *names {
            assert!(
                text.contains(&format!("`{name}`")),
                "`{name}` has no GPU kernel in the op table, and the page does not \
                 name it:\n{text}"
            );
        }
    }
    // An op the paragraph names that has a kernel is named as having one.
    let with: BTreeSet<&String> = table
        .iter()
        .filter(|(_, kernel)| *kernel)
        .flat_map(|(names, _)| names)
        .collect();
    let named_with: Vec<String> = op_names(&text.replace(['(', ')'], " "))
        .into_iter()
        .filter(|n| with.contains(n))
        .collect();
    for name in &named_with {
        let after = &text[text.find(&format!("`{name}`")).unwrap()..];
        let clause = &after[..after.find([';', ')']).unwrap_or(after.len())];
        assert!(
            clause.contains("have one") || clause.contains("has one"),
            "the page names `{name}`, which has a GPU kernel, among the ops \
             without one:\n{text}"
        );
    }
}

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lesson code of `chapter` (its `src/` and `examples/`, the exercises left out):
/// every file's text.
fn lesson_sources(chapter: &Path) -> String {
    let mut text = String::new();
    for dir in ["src", "examples"] {
        let Ok(entries) = fs::read_dir(chapter.join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> =
            entries.map(|e| e.expect("an entry").path()).collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let exercise = ["exercises.rs", "solutions.rs", "alternatives.rs"]
                .contains(&name.as_str());
            if name.ends_with(".rs") && !exercise {
                text.push_str(&fs::read_to_string(&file).expect("a readable source"));
            }
        }
    }
    text
}

#[test]
fn the_page_names_the_chapters_whose_code_calls_an_op_without_a_gpu_kernel() {
    let without: Vec<String> = op_table()
        .into_iter()
        .filter(|(_, kernel)| !kernel)
        .flat_map(|(names, _)| names)
        .collect();
    let section_start = PAGE
        .find("## Running the lessons on a GPU")
        .expect("the page has a section on running the lessons on a GPU");
    let section = &PAGE[section_start..];
    let mut chapters: Vec<PathBuf> = fs::read_dir(root().join("chapters"))
        .expect("the chapters")
        .map(|e| e.expect("an entry").path())
        .collect();
    chapters.sort();
    let mut found = Vec::new();
    for chapter in chapters {
        let name = chapter.file_name().unwrap().to_string_lossy().to_string();
        let Some(number) = name
            .strip_prefix("chapter")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let code = lesson_sources(&chapter);
        let calls: Vec<&String> = without
            .iter()
            .filter(|op| code.contains(&format!("{op}(")))
            .collect();
        if calls.is_empty() {
            continue;
        }
        found.push(number);
        assert!(
            section.contains(&format!("chapter {number}")),
            "chapter {number}'s code calls {calls:?}, which have no GPU kernel, and \
             the \
             section on running the lessons on a GPU does not name it"
        );
        for op in calls {
            assert!(
                section.contains(&format!("`{op}`")),
                "chapter {number}'s code calls `{op}`, and the section does not \
                 name it"
            );
        }
    }
    assert!(
        !found.is_empty(),
        "no chapter calls an op without a GPU kernel: the section says some do"
    );
}
