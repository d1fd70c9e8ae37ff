//! A learner's progress over every chapter's exercises: `cargo run --bin exercises`.
//!
//! It builds every chapter's exercise tests against the learner's own files in one cargo
//! call (`cargo test --no-run --features exercises --test exercises -p chapter01 …`), runs
//! each test binary, and prints the exercises in book order: chapter by chapter, numbered
//! as the pages number them. An exercise is done when all of its tests pass; a test's
//! exercise is the number in its name, `exercise_N_…`. After the first build only what
//! changed is rebuilt, so a check takes seconds.
//!
//! When the one build fails (a learner's file that does not compile), each chapter is
//! built on its own, so the others still report, and the failing one shows the compiler's
//! message.
//!
//! `cargo run --bin exercises -- --expect-stubs` is the check continuous integration runs on
//! the untouched stubs: it fails unless every exercise test of every chapter fails, so no
//! exercise test can pass without the learner's work.
//!
//! `cargo run --bin exercises -- --expect-alternatives` is its counterpart: it runs the same
//! tests on each chapter's `src/alternatives.rs` (`--features alternatives`), a second
//! solution to every exercise written apart from the reference, and fails naming every test
//! that does not pass there, so no exercise test accepts only the reference's answer.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The outcome of one exercise test.
#[derive(Debug, PartialEq)]
struct Outcome {
    name: String,
    passed: bool,
}

/// The chapter crates that have exercises, in order.
fn chapters() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("chapters");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| {
                    n.starts_with("chapter")
                        && dir.join(n).join("tests/exercises.rs").is_file()
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Which exercise files the tests run against, and what is expected of them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// The learner's `src/exercises.rs`: report progress.
    Learner,
    /// The untouched stubs: every test must fail.
    ExpectStubs,
    /// The second solutions, `src/alternatives.rs`: every test must pass.
    ExpectAlternatives,
}

impl Mode {
    /// The mode the command-line arguments ask for.
    fn from_args(args: &[String]) -> Result<Mode, String> {
        let stubs = args.iter().any(|a| a == "--expect-stubs");
        let alternatives = args.iter().any(|a| a == "--expect-alternatives");
        match (stubs, alternatives) {
            (true, true) => Err(
                "--expect-stubs and --expect-alternatives check different files; give one"
                    .into(),
            ),
            (true, false) => Ok(Mode::ExpectStubs),
            (false, true) => Ok(Mode::ExpectAlternatives),
            (false, false) => Ok(Mode::Learner),
        }
    }

    /// The chapter feature that selects the files.
    fn feature(self) -> &'static str {
        match self {
            Mode::Learner | Mode::ExpectStubs => "exercises",
            Mode::ExpectAlternatives => "alternatives",
        }
    }

    /// The file the feature compiles, for messages.
    fn file(self) -> &'static str {
        match self {
            Mode::Learner | Mode::ExpectStubs => "src/exercises.rs",
            Mode::ExpectAlternatives => "src/alternatives.rs",
        }
    }

    /// What is wrong with one test's outcome in this mode, if anything.
    fn problem(self, chapter: &str, outcome: &Outcome) -> Option<String> {
        match (self, outcome.passed) {
            (Mode::ExpectStubs, true) => Some(format!(
                "{chapter}: exercise test {} passes on the untouched stub, so it checks nothing",
                outcome.name
            )),
            (Mode::ExpectAlternatives, false) => Some(format!(
                "{chapter}: exercise test {} fails on the second solution (src/alternatives.rs): \
                 it rejects a correct answer, or that solution is wrong",
                outcome.name
            )),
            _ => None,
        }
    }
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

/// The exercise number of a test named `exercise_N_…`.
fn exercise_number(test: &str) -> Option<u32> {
    test.strip_prefix("exercise_")?
        .split('_')
        .next()?
        .parse()
        .ok()
}

/// Builds the exercise tests of `chapters` with `feature` in one cargo call and returns the
/// test binary of each chapter, or the compiler's output when the build fails.
fn build(
    chapters: &[String],
    feature: &str,
) -> Result<BTreeMap<String, PathBuf>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["test", "--no-run", "--quiet", "--message-format=json"]);
    command.args(["--features", feature, "--test", "exercises"]);
    for chapter in chapters {
        command.args(["-p", chapter]);
    }
    let output = command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let mut binaries = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_exercises = message["reason"] == "compiler-artifact"
            && message["target"]["name"] == "exercises"
            && message["profile"]["test"] == true;
        let (Some(manifest), Some(executable)) = (
            message["manifest_path"].as_str(),
            message["executable"].as_str(),
        ) else {
            continue;
        };
        if is_exercises {
            let chapter = PathBuf::from(manifest)
                .parent()
                .and_then(|dir| dir.file_name())
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            binaries.insert(chapter, PathBuf::from(executable));
        }
    }
    Ok(binaries)
}

/// Runs one chapter's test binary, one test at a time.
fn run(chapter: &str, binary: &PathBuf) -> Result<Vec<Outcome>, String> {
    let output = Command::new(binary)
        .args(["--test-threads", "1", "--format", "pretty"])
        .current_dir(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("chapters")
                .join(chapter),
        )
        .output()
        .map_err(|e| format!("{chapter}: cannot run {}: {e}", binary.display()))?;
    let found = outcomes(&String::from_utf8_lossy(&output.stdout));
    if found.is_empty() {
        return Err(format!("{chapter}: no exercise test ran"));
    }
    Ok(found)
}

/// The test binaries of every chapter: one build for all, or, when that fails, one build
/// per chapter, with the compiler's message for each chapter that does not build.
fn binaries(
    chapters: &[String],
    mode: Mode,
) -> (BTreeMap<String, PathBuf>, Vec<String>) {
    match build(chapters, mode.feature()) {
        Ok(found) => (found, Vec::new()),
        Err(_) => {
            let (mut found, mut problems) = (BTreeMap::new(), Vec::new());
            for chapter in chapters {
                match build(std::slice::from_ref(chapter), mode.feature()) {
                    Ok(one) => found.extend(one),
                    Err(message) => problems.push(format!(
                        "{chapter}: the exercise tests do not compile (is {} valid Rust?)\n{message}",
                        mode.file()
                    )),
                }
            }
            (found, problems)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match Mode::from_args(&args) {
        Ok(mode) => mode,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let chapters = chapters();
    let (found, mut problems) = binaries(&chapters, mode);
    let (mut done, mut total) = (0, 0);
    for chapter in &chapters {
        let Some(binary) = found.get(chapter) else {
            continue;
        };
        let results = match run(chapter, binary) {
            Ok(results) => results,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        // Exercise number → its tests, in the page's order.
        let mut exercises: BTreeMap<u32, Vec<&Outcome>> = BTreeMap::new();
        for o in &results {
            match exercise_number(&o.name) {
                Some(n) => exercises.entry(n).or_default().push(o),
                None => problems.push(format!(
                    "{chapter}: test {} is not named exercise_N_…, so it belongs to no exercise",
                    o.name
                )),
            }
            problems.extend(mode.problem(chapter, o));
        }
        let passed = exercises
            .values()
            .filter(|tests| tests.iter().all(|o| o.passed))
            .count();
        done += passed;
        total += exercises.len();
        println!("{chapter}: {passed} of {} exercises done", exercises.len());
        for (n, tests) in &exercises {
            let ok = tests.iter().filter(|o| o.passed).count();
            let mark = if ok == tests.len() { "x" } else { " " };
            let tests_word = if tests.len() == 1 { "test" } else { "tests" };
            println!(
                "  [{mark}] exercise {n}: {ok} of {} {tests_word} pass",
                tests.len()
            );
        }
    }
    println!("total: {done} of {total} exercises done");
    if total == 0 {
        problems.push(
            "no chapter has exercises (chapters/chapterNN/tests/exercises.rs)".into(),
        );
    }
    if problems.is_empty() {
        match mode {
            Mode::ExpectStubs => {
                println!("every exercise test fails on the stubs, as it must");
            }
            Mode::ExpectAlternatives => println!(
                "every exercise test passes on the second solutions, as it must"
            ),
            Mode::Learner => {}
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

    #[test]
    fn each_mode_finds_fault_with_the_outcome_it_rules_out() {
        let (passed, failed) = (
            Outcome {
                name: "exercise_1_x".into(),
                passed: true,
            },
            Outcome {
                name: "exercise_1_x".into(),
                passed: false,
            },
        );
        assert!(Mode::ExpectStubs.problem("c", &passed).is_some());
        assert!(Mode::ExpectStubs.problem("c", &failed).is_none());
        assert!(Mode::ExpectAlternatives.problem("c", &failed).is_some());
        assert!(Mode::ExpectAlternatives.problem("c", &passed).is_none());
        assert!(Mode::Learner.problem("c", &failed).is_none());
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Mode::from_args(&args(&["--expect-alternatives"])),
            Ok(Mode::ExpectAlternatives)
        );
        assert_eq!(Mode::from_args(&args(&[])), Ok(Mode::Learner));
        assert!(
            Mode::from_args(&args(&["--expect-stubs", "--expect-alternatives"]))
                .is_err()
        );
    }

    #[test]
    fn every_stub_function_has_a_second_solution() {
        // Each `pub fn` and `pub struct` of a chapter's stubs has its namesake in
        // src/alternatives.rs, which --expect-alternatives runs the tests on.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("chapters");
        let names = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|line| {
                    let rest = line
                        .strip_prefix("pub fn ")
                        .or_else(|| line.strip_prefix("pub struct "))?;
                    let end =
                        rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
                    Some(rest[..end].to_string())
                })
                .collect()
        };
        for chapter in chapters() {
            let read = |file: &str| {
                std::fs::read_to_string(root.join(&chapter).join(file))
                    .unwrap_or_else(|e| panic!("{chapter}/{file}: {e}"))
            };
            let stubs = names(&read("src/exercises.rs"));
            assert!(!stubs.is_empty(), "{chapter}: no exercise in the stubs");
            assert_eq!(
                names(&read("src/alternatives.rs")),
                stubs,
                "{chapter}: src/alternatives.rs and the stubs name the same items"
            );
        }
    }

    #[test]
    fn a_test_belongs_to_the_exercise_its_name_numbers() {
        assert_eq!(
            exercise_number("exercise_2_numeric_gradient_is_zero"),
            Some(2)
        );
        assert_eq!(exercise_number("exercise_12_x"), Some(12));
        assert_eq!(exercise_number("numeric_gradient"), None);
        assert_eq!(exercise_number("exercise_x"), None);
    }

    #[test]
    fn every_exercise_test_is_numbered_and_every_page_exercise_has_a_test() {
        // Each chapter's page numbers its exercises 1., 2., …; each number has a test.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        for chapter in chapters() {
            let tests = std::fs::read_to_string(
                root.join("chapters")
                    .join(&chapter)
                    .join("tests/exercises.rs"),
            )
            .expect("the exercise tests");
            let mut numbers: Vec<u32> = tests
                .split("#[test]")
                .skip(1)
                .map(|after| {
                    let name = after
                        .trim_start()
                        .strip_prefix("fn ")
                        .expect("a test function");
                    exercise_number(name).unwrap_or_else(|| {
                        panic!("{chapter}: {name} is not exercise_N_…")
                    })
                })
                .collect();
            numbers.dedup();
            let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
            assert_eq!(
                numbers, expected,
                "{chapter}: exercises in order, none skipped"
            );
            // The page's "Exercises" section lists as many, numbered the same way.
            let number = &chapter["chapter".len()..];
            let page = std::fs::read_dir(root.join("book/src"))
                .expect("book/src")
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.file_name().is_some_and(|n| {
                        n.to_string_lossy().starts_with(&format!("ch{number}-"))
                    })
                })
                .unwrap_or_else(|| panic!("{chapter}: no page ch{number}-….md"));
            let text = std::fs::read_to_string(&page).expect("the page");
            let section = text.split("\n## Exercises").nth(1).unwrap_or_else(|| {
                panic!("{}: no Exercises section", page.display())
            });
            let listed = (1..)
                .take_while(|n| section.contains(&format!("\n{n}. **")))
                .count();
            assert_eq!(
                listed,
                numbers.len(),
                "{}: the page lists {listed} exercises, the tests {}",
                page.display(),
                numbers.len()
            );
        }
    }
}
