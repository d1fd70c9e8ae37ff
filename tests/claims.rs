//! The book's sentences about PyTorch agree with what PyTorch did when it was asked.
//!
//! Every claim a page makes about PyTorch's behaviour (a dtype autocast picks, an error it
//! raises, where a layer puts a norm, what a function divides by) is backed by a recording:
//! a script under `tests/golden/claims/` runs the exact call and writes what happened to
//! JSON beside itself. The page marks the sentence with an HTML comment, invisible in the
//! book, that names the recording and the words that must hold its value:
//!
//! ```text
//! Under autocast the scores of `bmm` come out `float16`.
//! <!-- pytorch ch15.bmm_dtype: come out `{}` -->
//! ```
//!
//! This test fills `{}` with the recorded value and fails unless the marked paragraph says
//! exactly that, so a sentence that drifts from the recording (or a recording that changes
//! with a new PyTorch) stops the build. Two other markers account for the rest:
//! `<!-- pytorch parity PATH -->`, a claim that the engine matches PyTorch number for
//! number, backed by the golden-data test at `PATH` (a file with a `#[test]` that names a
//! file of `tests/golden/*.json` or the script that writes it); `<!-- pytorch measured PATH -->`, a
//! time or a peak of memory of PyTorch's, committed at `PATH` by the script that measured
//! it (every decimal the paragraph quotes must stand in `PATH`, or in the output printed
//! just above the paragraph, which a tour computes from it); and `<!-- pytorch name -->`, a paragraph that only names PyTorch's spelling of a
//! call and claims nothing about what it does (refused on a paragraph that states a value,
//! a dtype or an error). Every paragraph of prose that mentions PyTorch carries at least one marker.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One recording: the call PyTorch ran and the value it gave, as the page writes it.
#[derive(Debug, Clone)]
struct Recording {
    value: String,
}

/// Every recording under `tests/golden/claims/`, by `file.key` (`ch15.bmm_dtype`).
fn recordings(dir: &Path) -> BTreeMap<String, Recording> {
    let mut all = BTreeMap::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "no recording under {}", dir.display());
    for path in entries {
        let stem = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .to_string();
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
        let map = json["recordings"].as_object().unwrap_or_else(|| {
            panic!("{}: no \"recordings\" object", path.display())
        });
        for (key, recording) in map {
            let value = recording["value"]
                .as_str()
                .unwrap_or_else(|| {
                    panic!("{}: {key}: no string \"value\"", path.display())
                })
                .to_string();
            assert!(
                recording["call"].as_str().is_some_and(|c| !c.is_empty()),
                "{}: {key}: no \"call\": a recording keeps the call that made it",
                path.display()
            );
            all.insert(format!("{stem}.{key}"), Recording { value });
        }
    }
    all
}

/// A marker in a page's prose.
#[derive(Debug, Clone, PartialEq)]
enum Marker {
    /// `<!-- pytorch KEY: TEMPLATE -->`: the paragraph says TEMPLATE with `{}` replaced by
    /// the recording KEY's value.
    Recorded { key: String, template: String },
    /// `<!-- pytorch parity PATH -->`: backed by the golden-data test at PATH.
    Parity { path: String },
    /// `<!-- pytorch measured PATH -->`: a measurement of PyTorch (a time, a peak of
    /// memory) committed at PATH, which names the script that took it.
    Measured { path: String },
    /// `<!-- pytorch name -->`: names a PyTorch call, claims nothing about it.
    Name,
}

/// A unit of prose that a marker belongs to: a paragraph (consecutive non-blank lines
/// outside code fences) or one row of a table.
#[derive(Debug)]
struct Unit {
    /// 1-based line of the unit's first line.
    line: usize,
    /// The unit's text, HTML comments included.
    text: String,
    /// Whether the unit is a table row.
    table_row: bool,
    /// The code block or printed output that stands last before the unit ("" if none):
    /// a paragraph may quote the numbers printed there.
    block_before: String,
}

/// The units of prose of a page: paragraphs, list blocks and table rows, outside code
/// fences; headings are left out.
fn units(page: &str) -> Vec<Unit> {
    let mut found = Vec::new();
    let mut in_fence = false;
    let mut current: Option<Unit> = None;
    let mut block = String::new();
    for (n, line) in page.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_fence = !in_fence;
            if in_fence {
                block.clear();
            }
            found.extend(current.take());
            continue;
        }
        if in_fence {
            block.push_str(line);
            block.push('\n');
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            found.extend(current.take());
            continue;
        }
        if trimmed.starts_with('|') {
            found.extend(current.take());
            found.push(Unit {
                line: n + 1,
                text: line.to_string(),
                table_row: true,
                block_before: block.clone(),
            });
            continue;
        }
        match current.as_mut() {
            Some(unit) => {
                unit.text.push('\n');
                unit.text.push_str(line);
            }
            None => {
                current = Some(Unit {
                    line: n + 1,
                    text: line.to_string(),
                    table_row: false,
                    block_before: block.clone(),
                })
            }
        }
    }
    found.extend(current);
    found
}

/// The markers in `text`, and the problems of those that do not parse.
fn markers(text: &str) -> (Vec<Marker>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        let after = &rest[start + 4..];
        let Some(end) = after.find("-->") else {
            problems.push("an HTML comment without its closing -->".to_string());
            break;
        };
        let comment = after[..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        rest = &after[end + 3..];
        let Some(body) = comment.strip_prefix("pytorch ") else {
            continue;
        };
        if body == "name" {
            found.push(Marker::Name);
        } else if let Some(path) = body.strip_prefix("measured ") {
            found.push(Marker::Measured {
                path: path.trim().to_string(),
            });
        } else if let Some(path) = body.strip_prefix("parity ") {
            found.push(Marker::Parity {
                path: path.trim().to_string(),
            });
        } else if let Some((key, template)) = body.split_once(": ") {
            found.push(Marker::Recorded {
                key: key.trim().to_string(),
                template: template.trim().to_string(),
            });
        } else {
            problems.push(format!(
                "`<!-- pytorch {body} -->` is not a marker: write `pytorch KEY: TEMPLATE`, \
                 `pytorch parity PATH`, `pytorch measured PATH` or `pytorch name`"
            ));
        }
    }
    (found, problems)
}

/// `text` without its HTML comments, its whitespace runs made single spaces.
fn visible(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    normalise(&out)
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a unit speaks of PyTorch: it names PyTorch, a `torch.` call, or one of
/// `nn.`, `F.` written as PyTorch writes them. In the appendix's tables only the
/// "difference" column (the last) counts: the other two only name calls.
fn mentions_pytorch(unit: &Unit, page: &str) -> bool {
    let text = visible(&unit.text);
    let text = if unit.table_row && page == "appendix-pytorch.md" {
        let cells: Vec<&str> = text.trim().trim_matches('|').split('|').collect();
        cells.last().copied().unwrap_or("").to_string()
    } else {
        text
    };
    text.contains("PyTorch")
        || text.contains("torch.")
        || text.contains("`nn.")
        || text.contains(" nn.")
        || text.contains("`F.")
}

/// Everything wrong with the claims of `pages` (name, text) against `recorded`; also
/// returns the recordings the pages used.
fn check(
    pages: &[(String, String)],
    recorded: &BTreeMap<String, Recording>,
    root: &Path,
) -> (Vec<String>, BTreeSet<String>) {
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for (name, page) in pages {
        for unit in units(page) {
            let at = format!("{name}:{}", unit.line);
            let (found, bad) = markers(&unit.text);
            problems.extend(bad.into_iter().map(|p| format!("{at}: {p}")));
            if found.is_empty() && mentions_pytorch(&unit, name) {
                problems.push(format!(
                    "{at}: this paragraph speaks of PyTorch without a marker: back its claim \
                     with a recording (`<!-- pytorch FILE.KEY: … {{}} … -->`, see \
                     tests/golden/claims/README.md), a parity test \
                     (`<!-- pytorch parity PATH -->`), or mark it `<!-- pytorch name -->` if \
                     it only names a call:\n    {}",
                    visible(&unit.text)
                ));
            }
            let said = visible(&unit.text);
            let backed = found.iter().any(|m| *m != Marker::Name);
            for marker in found {
                match marker {
                    // A paragraph backed by another marker too is checked by that one.
                    Marker::Name if backed => {}
                    Marker::Name => {
                        if let Some(what) = states_something(&said) {
                            problems.push(format!(
                                "{at}: `pytorch name` marks a paragraph that only names a \
                                 call, but this one states {what}: back it with a recording, \
                                 a measurement or a parity test\n    {said}"
                            ));
                        }
                    }
                    Marker::Measured { path } => match fs::read_to_string(root.join(&path)) {
                        Ok(text) if text.contains("torch") || text.contains("PyTorch") => {
                            // The file's numbers, and those printed just above the
                            // paragraph (a tour's output computed from the file, which
                            // the chapter's page test holds to the tour).
                            let file_numbers: BTreeSet<String> = numbers(&text)
                                .into_iter()
                                .chain(numbers(&unit.block_before))
                                .collect();
                            let missing: Vec<String> = numbers(&said)
                                .into_iter()
                                .filter(|n| !file_numbers.contains(n))
                                .collect();
                            if !missing.is_empty() {
                                problems.push(format!(
                                    "{at}: the paragraph quotes {} that {path} does not \
                                     hold, nor the output printed just above it: a measured \
                                     number is quoted as its file (or the tour reading it) \
                                     writes it\n    {said}",
                                    missing.join(", ")
                                ));
                            }
                        }
                        Ok(_) => problems.push(format!(
                            "{at}: {path} holds no measurement of PyTorch (it never names it)"
                        )),
                        Err(e) => problems.push(format!("{at}: measurement {path}: {e}")),
                    },
                    Marker::Parity { path } => {
                        let file = root.join(&path);
                        match fs::read_to_string(&file) {
                            Ok(text) if text.contains("#[test]") && names_golden_data(&text, root) => {}
                            Ok(_) => problems.push(format!(
                                "{at}: {path} is no test of golden data (no #[test] that names \
                                 a file of tests/golden/*.json or the script that writes it), \
                                 so it backs no parity claim"
                            )),
                            Err(e) => problems.push(format!("{at}: parity test {path}: {e}")),
                        }
                    }
                    Marker::Recorded { key, template } => {
                        if !template.contains("{}") {
                            problems.push(format!(
                                "{at}: the template of {key} has no {{}} for the recorded \
                                 value: `{template}`"
                            ));
                            continue;
                        }
                        let Some(recording) = recorded.get(&key) else {
                            problems.push(format!(
                                "{at}: no recording {key} under tests/golden/claims/ \
                                 (recorded: {})",
                                recorded
                                    .keys()
                                    .cloned()
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                            continue;
                        };
                        used.insert(key.clone());
                        let expected =
                            normalise(&template.replace("{}", &recording.value));
                        if !said.contains(&expected) {
                            problems.push(format!(
                                "{at}: the page and the recording {key} disagree: PyTorch \
                                 gave `{}`, so the paragraph must say\n    {expected}\nbut it \
                                 says\n    {said}",
                                recording.value
                            ));
                        }
                    }
                }
            }
        }
    }
    (problems, used)
}

/// Whether `text` names one of the golden data files `tests/golden/NAME.json` (PyTorch's
/// outputs and gradients, which parity tests compare with), or the script
/// `tests/golden/NAME.py` that writes it. The claims' own recordings
/// (`tests/golden/claims/`) are not golden data of the engine's numbers.
fn names_golden_data(text: &str, root: &Path) -> bool {
    let dir = root.join("tests/golden");
    let Ok(entries) = fs::read_dir(&dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        let (Some(stem), Some("json")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|e| e.to_str()),
        ) else {
            return false;
        };
        text.contains(&format!("golden/{stem}.json"))
            || text.contains(&format!("golden/{stem}.py"))
    })
}

/// What the sentences of a paragraph that speak of PyTorch state beyond naming calls, if
/// anything: a number with a decimal point (a value), a dtype, or an error (`raises`, an
/// exception's name); `None` when they only name. (Numbers in the paragraph's other
/// sentences are the engine's, which the chapter's tests hold to its tour.)
fn states_something(said: &str) -> Option<String> {
    const DTYPES: [&str; 8] = [
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "int64",
        "int32",
        "bool",
        "complex64",
    ];
    for sentence in said.split(". ") {
        let speaks_of_pytorch = sentence.contains("PyTorch")
            || sentence.contains("torch.")
            || sentence.contains("`F.")
            || sentence.contains("`nn.");
        if !speaks_of_pytorch {
            continue;
        }
        if let Some(n) = numbers(sentence).first() {
            return Some(format!("a value ({n})"));
        }
        if let Some(dtype) =
            DTYPES.iter().find(|d| sentence.contains(&format!("`{d}`")))
        {
            return Some(format!("a dtype ({dtype})"));
        }
        let names_an_error =
            sentence.split(|c: char| !c.is_alphanumeric()).any(|word| {
                word == "raises" || (word.len() > 5 && word.ends_with("Error"))
            });
        if names_an_error {
            return Some("an error".to_string());
        }
    }
    None
}

/// The numbers with a decimal point that `text` writes (`0.79`, `107.25`), as written:
/// the measured values a paragraph quotes. Whole numbers are left out, since they are
/// mostly sizes and counts of the setup (`n = 256`, `10 rounds`), not measurements.
fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_ascii_digit() || chars[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && (chars[end].is_ascii_digit() || chars[end] == '.')
        {
            end += 1;
        }
        // A full stop after a number ends its sentence; it is not part of it.
        let token: String = chars[i..end].iter().collect();
        let token = token.trim_end_matches('.').to_string();
        // One point: a decimal; two or more: a version (`0.5.4`), not a measurement.
        if token.matches('.').count() == 1 {
            found.push(token);
        }
        i = end;
    }
    found
}

/// Every markdown page under `book/src`, as (path relative to it, text), but the table
/// of contents (`SUMMARY.md`), whose lines are page titles.
fn book_pages() -> Vec<(String, String)> {
    let dir = root().join("book/src");
    let mut pages: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .filter(|path| !path.ends_with("SUMMARY.md"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .to_string();
            let text = fs::read_to_string(&path).expect("a readable page");
            (name, text)
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_sentence_about_pytorch_agrees_with_a_recording() {
    let recorded = recordings(&root().join("tests/golden/claims"));
    let (problems, used) = check(&book_pages(), &recorded, &root());
    assert!(
        problems.is_empty(),
        "{} problem(s) with the book's claims about PyTorch:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    let unused: Vec<&String> =
        recorded.keys().filter(|k| !used.contains(*k)).collect();
    assert!(
        unused.is_empty(),
        "recordings that no page quotes (remove them from their script, or quote them): {unused:?}"
    );
}

fn one_recording(value: &str) -> BTreeMap<String, Recording> {
    BTreeMap::from([(
        "ch15.bmm_dtype".to_string(),
        Recording {
            value: value.to_string(),
        },
    )])
}

fn page(text: &str) -> Vec<(String, String)> {
    vec![("ch15-mixed-precision.md".to_string(), text.to_string())]
}

/// The problems `check` finds in a page of `text`, against a recording no marker names.
fn problems_in(text: &str) -> Vec<String> {
    check(&page(text), &one_recording("x"), &root()).0
}

/// Asserts that a page of `text` has exactly one problem, and that it says `part`.
#[track_caller]
fn assert_one_problem(text: &str, part: &str) {
    let problems = problems_in(text);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains(part), "{}", problems[0]);
}

#[test]
fn a_sentence_that_matches_its_recording_passes() {
    let text = "Under autocast the scores of `bmm` come out\n`float16`.\n\
                <!-- pytorch ch15.bmm_dtype: come out `{}` -->\n";
    let (problems, used) = check(&page(text), &one_recording("float16"), &root());
    assert_eq!(problems, Vec::<String>::new());
    assert!(used.contains("ch15.bmm_dtype"));
}

#[test]
fn a_sentence_that_contradicts_its_recording_fails() {
    let text = "Under autocast the scores of `bmm` come out `float32`.\n\
                <!-- pytorch ch15.bmm_dtype: come out `{}` -->\n";
    let (problems, _) = check(&page(text), &one_recording("float16"), &root());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("disagree: PyTorch gave `float16`"),
        "{}",
        problems[0]
    );
    assert!(
        problems[0].starts_with("ch15-mixed-precision.md:1:"),
        "{}",
        problems[0]
    );
}

#[test]
fn a_paragraph_about_pytorch_without_a_marker_fails() {
    let text = "Intro.\n\nPyTorch's `masked_fill` stores `-inf` silently.\n";
    let (problems, _) = check(&page(text), &one_recording("float16"), &root());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("ch15-mixed-precision.md:3:"),
        "{}",
        problems[0]
    );
    assert!(problems[0].contains("without a marker"), "{}", problems[0]);
}

#[test]
fn code_blocks_and_headings_are_not_prose() {
    let text = "## From PyTorch\n\n```python\ntorch.ones(2)\n```\n";
    let (problems, _) = check(&page(text), &one_recording("x"), &root());
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn unknown_keys_templates_without_a_slot_and_bad_parity_paths_fail() {
    let text = "PyTorch a. <!-- pytorch ch15.nope: says `{}` -->\n\n\
                PyTorch b. <!-- pytorch ch15.bmm_dtype: says float16 -->\n\n\
                PyTorch c. <!-- pytorch parity tests/no_such_test.rs -->\n\n\
                PyTorch d. <!-- pytorch nmae -->\n";
    let (problems, _) = check(&page(text), &one_recording("float16"), &root());
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert!(
        problems[0].contains("no recording ch15.nope"),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].contains("has no {} for the recorded value"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].contains("parity test tests/no_such_test.rs"),
        "{}",
        problems[2]
    );
    assert!(problems[3].contains("is not a marker"), "{}", problems[3]);
    assert!(problems[4].contains("without a marker"), "{}", problems[4]);
}

#[test]
fn a_measurement_must_be_a_file_that_names_pytorch() {
    let measured = "PyTorch took 2 ms. <!-- pytorch measured tests/claims.rs -->\n\n\
                    PyTorch took 3 ms. <!-- pytorch measured Cargo.lock -->\n";
    let (problems, _) = check(&page(measured), &one_recording("x"), &root());
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].contains("Cargo.lock holds no measurement"),
        "{}",
        problems[0]
    );
}

#[test]
fn a_measured_number_its_file_does_not_hold_fails() {
    // benchmarks/README.md's side-by-side rows hold the ratios 0.60 and 0.99, not 0.55.
    let said = "The layers take 0.60 to 0.99 of PyTorch's time.\n\
                <!-- pytorch measured benchmarks/README.md -->\n";
    assert_eq!(problems_in(said), Vec::<String>::new());
    let planted = "The layers take 0.55 to 0.99 of PyTorch's time.\n\
                   <!-- pytorch measured benchmarks/README.md -->\n";
    assert_one_problem(
        planted,
        "quotes 0.55 that benchmarks/README.md does not hold",
    );
    // A number printed just above the paragraph (a tour computing it from the file).
    let printed = "```text\nratio 0.42\n```\n\nThe engine takes 0.42 of PyTorch's time.\n\
                   <!-- pytorch measured benchmarks/README.md -->\n";
    assert_eq!(problems_in(printed), Vec::<String>::new());
}

#[test]
fn a_parity_marker_must_name_a_test_of_golden_data() {
    let good = "The layer matches PyTorch's number for number.\n\
                <!-- pytorch parity tests/attention/transformer_parity.rs -->\n";
    assert_eq!(problems_in(good), Vec::<String>::new());
    // tests/claims.rs is a test and says "golden", but compares no golden data.
    let planted = "The layer matches PyTorch's number for number.\n\
                   <!-- pytorch parity tests/claims.rs -->\n";
    assert_one_problem(planted, "tests/claims.rs is no test of golden data");
}

#[test]
fn a_name_marker_on_a_paragraph_that_states_a_value_fails() {
    // The number of the second sentence is the engine's, not PyTorch's.
    let good = "PyTorch spells it `F.scaled_dot_product_attention`. Ours gives 0.25.\n\
                <!-- pytorch name -->\n";
    assert_eq!(problems_in(good), Vec::<String>::new());
    for (planted, what) in [
        ("PyTorch's `F.gelu` is 0.8413 at 1.", "a value (0.8413)"),
        (
            "PyTorch's `F.softmax` of `float16` gives `float16`.",
            "a dtype (float16)",
        ),
        ("PyTorch's `torch.load` raises on it.", "an error"),
        ("In PyTorch it is a `RuntimeError`.", "an error"),
    ] {
        let text = format!("{planted}\n<!-- pytorch name -->\n");
        assert_one_problem(&text, &format!("states {what}"));
    }
}

#[test]
fn numbers_are_read_as_written() {
    assert_eq!(
        numbers("0.79 of it, 107.25 MiB, 1360 MiB, ends at 2.5. Then 3 and v0.5.4"),
        ["0.79", "107.25", "2.5"]
    );
}

#[test]
fn table_rows_are_units_and_the_appendix_checks_only_its_difference_column() {
    let table = "| engine | PyTorch | difference |\n|---|---|---|\n\
                 | `x.exp()` | `torch.exp` | |\n\
                 | `clip(…)` | `nn.utils.clip_grad_norm_` | PyTorch divides by more |\n";
    let appendix = vec![("appendix-pytorch.md".to_string(), table.to_string())];
    let (problems, _) = check(&appendix, &one_recording("x"), &root());
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].starts_with("appendix-pytorch.md:4:"),
        "{}",
        problems[0]
    );
    let (problems, _) = check(&page(table), &one_recording("x"), &root());
    let lines: Vec<&str> = problems
        .iter()
        .map(|p| &p[..p.find(": ").unwrap()])
        .collect();
    assert_eq!(
        lines,
        [
            "ch15-mixed-precision.md:1",
            "ch15-mixed-precision.md:3",
            "ch15-mixed-precision.md:4"
        ],
        "elsewhere every row counts"
    );
}

/// Whether a unit cites a paper: an author's "et al.", or a year of publication in
/// parentheses, `(2015)` or `(…, 2015)`.
fn cites_a_paper(text: &str) -> bool {
    if text.contains(" et al.") || text.contains(" et al.'s") {
        return true;
    }
    let chars: Vec<char> = text.chars().collect();
    (2..chars.len().saturating_sub(4)).any(|i| {
        let year = &chars[i..i + 4];
        let is_year = year.iter().all(char::is_ascii_digit)
            && (year[..2] == ['1', '9'] || year[..2] == ['2', '0']);
        let after_ok = chars.get(i + 4).is_some_and(|c| *c == ')' || *c == ';');
        if !is_year || !after_ok {
            return false;
        }
        // `Manning (2015)`: a name just before the parenthesis.
        let before: String = chars[..i].iter().collect();
        if let Some(head) = before.strip_suffix('(') {
            return last_word_is_a_name(head);
        }
        // `(Salimans and Kingma, 2016)`: a name inside the parenthesis, before the comma.
        before.strip_suffix(", ").is_some_and(|head| {
            head.rsplit_once('(')
                .is_some_and(|(_, inside)| inside.split(' ').any(is_a_name))
        })
    })
}

fn is_a_name(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
        && word
            .chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
}

fn last_word_is_a_name(text: &str) -> bool {
    text.trim_end().rsplit(' ').next().is_some_and(is_a_name)
}

/// How many sections (`§`), appendices, theorems or figures a sentence names: a sentence
/// needs one for each paper it cites.
fn locators(sentence: &str) -> usize {
    sentence.matches('§').count()
        + sentence.matches("Appendix").count()
        + sentence.matches("Theorem ").count()
        + sentence.matches("Figure ").count()
}

/// The sentences of a paragraph: split after a full stop, question or exclamation mark
/// followed by a space and a capital, a backtick or a parenthesis (not after `et al.` or
/// `e.g.`).
fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut start = 0;
    for i in 0..chars.len() {
        let ends = matches!(chars[i], '.' | '?' | '!')
            && chars.get(i + 1) == Some(&' ')
            && chars
                .get(i + 2)
                .is_some_and(|c| c.is_uppercase() || *c == '`' || *c == '(');
        let before: String = chars[start..=i].iter().collect();
        if ends
            && !before.ends_with("et al.")
            && !before.ends_with("e.g.")
            && !before.ends_with("i.e.")
        {
            found.push(before.trim().to_string());
            start = i + 1;
        }
    }
    let rest: String = chars[start..].iter().collect();
    if !rest.trim().is_empty() {
        found.push(rest.trim().to_string());
    }
    found
}

/// Every paragraph of `pages` with a sentence that cites a paper without naming, for each
/// paper it cites, the section (`§`), appendix, theorem or figure its claim comes from; `<!-- paper: whole -->` marks a paragraph whose claim
/// is about the paper as a whole (its title, its subject).
fn uncited_sections(pages: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, page) in pages {
        for unit in units(page) {
            let said = visible(&unit.text);
            let whole = unit.text.contains("<!-- paper: whole -->");
            // Each sentence that cites a paper names its own section: one located
            // citation does not clear another in the same paragraph.
            let unlocated = sentences(&said).into_iter().find(|sentence| {
                cites_a_paper(sentence)
                    && locators(sentence) < sentence.matches(" et al").count().max(1)
            });
            if let Some(sentence) = unlocated.filter(|_| !whole) {
                let said = sentence;
                problems.push(format!(
                    "{name}:{}: a sentence of this paragraph cites a paper without a \
                     section of its own for its claim: add it (\"Luong et al., 2015, §3.1\"), or mark a claim about \
                     the paper as a whole `<!-- paper: whole -->`:\n    {said}",
                    unit.line
                ));
            }
        }
    }
    problems
}

#[test]
fn every_paper_a_page_cites_is_cited_by_section() {
    let problems = uncited_sections(&book_pages());
    assert!(
        problems.is_empty(),
        "{} paragraph(s) cite a paper without its section:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// Where each problem is: the `page:line` that starts its message.
fn places(problems: &[String]) -> Vec<&str> {
    problems
        .iter()
        .map(|p| &p[..p.find(": ").unwrap()])
        .collect()
}

#[test]
fn each_citation_needs_its_own_section_in_its_own_sentence() {
    let text = "Bahdanau et al. (2015, §3.1) score it. Luong et al. (2015) call it concat.\n\n\
                Bahdanau et al. (2015, §3.1) and Luong et al. (2015) both score it.\n\n\
                Bahdanau et al. (2015, §3.1) and Luong et al. (2015, §3.1) both score it.\n";
    let problems = uncited_sections(&page(text));
    assert_eq!(
        places(&problems),
        ["ch15-mixed-precision.md:1", "ch15-mixed-precision.md:3"],
        "{problems:#?}"
    );
    assert!(
        problems[0].contains("\n    Luong et al. (2015) call it concat."),
        "{}",
        problems[0]
    );
}

#[test]
fn a_citation_without_its_section_fails() {
    let text = "Luong et al. later called it concat.\n\n\
                Longformer (Beltagy et al., 2020, §3.1) calls this the sliding window.\n\n\
                Weight normalisation (Salimans and Kingma, 2016) rescales rows.\n\n\
                The paper (Vaswani et al., 2017) <!-- paper: whole -->\n\n\
                PyTorch 2.15 ran on 1024 keys (2 cores).\n\n\
                After `growth_interval` (2000) steps, or (`x`, 2000) steps.\n";
    let problems = uncited_sections(&page(text));
    assert_eq!(
        places(&problems),
        ["ch15-mixed-precision.md:1", "ch15-mixed-precision.md:5"],
        "{problems:#?}"
    );
}
