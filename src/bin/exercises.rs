//! A learner's progress over every chapter's exercises: `cargo run --bin exercises`.
//!
//! For each `chapters/chapterNN` it runs the exercise tests against the learner's own file
//! (`cargo test -p chapterNN --features exercises --test exercises`) and prints which pass.
//!
//! `cargo run --bin exercises -- --expect-stubs` is the check continuous integration runs on
//! the untouched stubs: it fails unless every exercise test of every chapter fails, so no
//! exercise test can pass without the learner's work.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The outcome of one exercise test.
#[derive(Debug, PartialEq)]
struct Outcome {
    name: String,
    passed: bool,
}

/// The chapter crates, in order.
fn chapters() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("chapters");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| {
                    n.starts_with("chapter") && dir.join(n).join("tests/exercises.rs").is_file()
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The `test NAME ... ok|FAILED` lines of libtest's output.
fn outcomes(output: &str) -> Vec<Outcome> {
    output
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("test ")?;
            let (name, result) = rest.rsplit_once(" ... ")?;
            let passed = match result.trim() {
                "ok" => true,
                "FAILED" => false,
                _ => return None,
            };
            Some(Outcome {
                name: name.trim().to_string(),
                passed,
            })
        })
        .collect()
}

fn run(chapter: &str) -> Result<Vec<Outcome>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "test",
            "-q",
            "-p",
            chapter,
            "--features",
            "exercises",
            "--test",
            "exercises",
        ])
        .args(["--", "--test-threads", "1", "--format", "pretty"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("{chapter}: cannot run cargo: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let found = outcomes(&stdout);
    if found.is_empty() {
        return Err(format!(
            "{chapter}: no exercise test ran (does the learner's file compile?)\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(found)
}

fn main() -> ExitCode {
    let expect_stubs = std::env::args().any(|a| a == "--expect-stubs");
    let mut problems = Vec::new();
    let (mut done, mut total) = (0, 0);
    for chapter in chapters() {
        match run(&chapter) {
            Err(e) => problems.push(e),
            Ok(results) => {
                let passed = results.iter().filter(|o| o.passed).count();
                done += passed;
                total += results.len();
                println!("{chapter}: {passed} of {} exercises pass", results.len());
                for o in &results {
                    println!("  [{}] {}", if o.passed { "x" } else { " " }, o.name);
                    if expect_stubs && o.passed {
                        problems.push(format!(
                            "{chapter}: exercise test {} passes on the untouched stub, so it checks nothing",
                            o.name
                        ));
                    }
                }
            }
        }
    }
    println!("total: {done} of {total} exercises pass");
    if total == 0 {
        problems.push("no chapter has exercises (chapters/chapterNN/tests/exercises.rs)".into());
    }
    if problems.is_empty() {
        if expect_stubs {
            println!("every exercise test fails on the stubs, as it must");
        }
        ExitCode::SUCCESS
    } else {
        for p in &problems {
            eprintln!("{p}");
        }
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libtest_lines() {
        let out = "running 2 tests\ntest a::one ... ok\ntest two ... FAILED\ntest result: FAILED";
        assert_eq!(
            outcomes(out),
            vec![
                Outcome {
                    name: "a::one".into(),
                    passed: true
                },
                Outcome {
                    name: "two".into(),
                    passed: false
                },
            ]
        );
    }
}
