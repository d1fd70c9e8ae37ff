//! The book's sources agree with the code: every `{{#include}}` names a file and an anchor
//! that exist and hold code, no included listing is handed to rustdoc, every chapter page
//! is compiled as doctests by its crate, every page is in the table of contents, and
//! every figure a page shows is committed; and every line of a listing or a printed output
//! fits the page's column.
//!
//! mdBook itself stays silent on a missing anchor (it renders an empty block and exits 0),
//! so these checks are what makes a stale listing fail.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_src() -> PathBuf {
    root().join("book/src")
}

/// Every markdown page under `book/src`, as (path relative to `book/src`, text).
fn pages() -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![book_src()];
    while let Some(dir) = dirs.pop() {
        for entry in
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path
                    .strip_prefix(book_src())
                    .expect("under book/src")
                    .to_string_lossy()
                    .replace('\\', "/");
                found.push((rel, fs::read_to_string(&path).expect("readable page")));
            }
        }
    }
    found.sort();
    assert!(
        !found.is_empty(),
        "no page found under {}",
        book_src().display()
    );
    found
}

/// The `{{#include …}}` (and `{{#rustdoc_include …}}`) directives of a page:
/// `(line number, path, anchor)`.
fn includes(text: &str) -> Vec<(usize, String, Option<String>)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("{{#") {
            let after = &rest[start + 3..];
            let end = after.find("}}").unwrap_or_else(|| {
                panic!("line {}: unclosed {{{{# directive", n + 1)
            });
            let directive = after[..end].trim();
            if let Some(arg) = directive
                .strip_prefix("include ")
                .or_else(|| directive.strip_prefix("rustdoc_include "))
            {
                let arg = arg.trim();
                // `path:anchor`, `path:10:20` (line ranges) or a whole `path`.
                let (path, anchor) = match arg.split_once(':') {
                    Some((p, a))
                        if !a.chars().next().is_some_and(|c| c.is_ascii_digit()) =>
                    {
                        (p.to_string(), Some(a.to_string()))
                    }
                    Some((p, _)) => (p.to_string(), None),
                    None => (arg.to_string(), None),
                };
                found.push((n + 1, path, anchor));
            }
            rest = &after[end + 2..];
        }
    }
    found
}

/// The lines between `ANCHOR: name` and `ANCHOR_END: name`, without other anchor lines,
/// or `None` when either marker is missing.
fn anchored(source: &str, name: &str) -> Option<String> {
    let is_marker = |line: &str, kind: &str| {
        line.trim_start()
            .strip_prefix("//")
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix(kind))
            .is_some_and(|l| l.trim() == name)
    };
    let lines: Vec<&str> = source.lines().collect();
    let start = lines.iter().position(|l| is_marker(l, "ANCHOR:"))?;
    let end = lines.iter().position(|l| is_marker(l, "ANCHOR_END:"))?;
    if end <= start {
        return None;
    }
    let body: Vec<&str> = lines[start + 1..end]
        .iter()
        .filter(|l| !l.contains("ANCHOR:") && !l.contains("ANCHOR_END:"))
        .copied()
        .collect();
    Some(body.join("\n"))
}

#[test]
fn every_include_names_an_existing_file_and_a_non_empty_anchor() {
    let mut problems = Vec::new();
    let mut count = 0;
    for (page, text) in pages() {
        let dir = book_src().join(&page);
        let dir = dir.parent().expect("a page has a directory");
        for (line, path, anchor) in includes(&text) {
            count += 1;
            let file = dir.join(&path);
            let Ok(source) = fs::read_to_string(&file) else {
                problems.push(format!("{page}:{line}: {path} does not exist"));
                continue;
            };
            if let Some(anchor) = anchor {
                match anchored(&source, &anchor) {
                    None => problems.push(format!(
                        "{page}:{line}: {path} has no `// ANCHOR: {anchor}` … `// ANCHOR_END: {anchor}` pair"
                    )),
                    Some(body) if body.trim().is_empty() => {
                        problems.push(format!("{page}:{line}: anchor {anchor} in {path} is empty"))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(count > 0, "the book includes no code at all");
}

/// `(line, info string, body)` of every fenced code block of a page.
fn fences(text: &str) -> Vec<(usize, String, String)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String, usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match &mut open {
            None if ticks >= 3 => {
                open = Some((
                    n + 1,
                    trimmed[ticks..].trim().to_string(),
                    ticks,
                    String::new(),
                ));
            }
            Some((start, info, width, body)) => {
                if ticks >= *width && trimmed[ticks..].trim().is_empty() {
                    found.push((*start, info.clone(), body.clone()));
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            None => {}
        }
    }
    assert!(open.is_none(), "a code fence is never closed");
    found
}

/// Whether rustdoc takes a fence with this info string for a Rust doctest: an empty info
/// string, or one whose words are `rust` or rustdoc's attributes. Any other word (`rs`,
/// `text`, `wgsl`) makes it another language, which rustdoc neither compiles nor counts.
fn is_doctest(info: &str) -> bool {
    const ATTRIBUTES: [&str; 6] = [
        "ignore",
        "should_panic",
        "no_run",
        "compile_fail",
        "edition2021",
        "edition2024",
    ];
    info.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .all(|w| w == "rust" || ATTRIBUTES.contains(&w))
}

#[test]
fn every_fence_that_includes_code_is_rs_so_rustdoc_neither_compiles_nor_counts_it() {
    let mut problems = Vec::new();
    for (page, text) in pages() {
        for (line, info, body) in fences(&text) {
            if body.contains("{{#") && is_doctest(&info) {
                problems.push(format!(
                    "{page}:{line}: a `{info}` fence holds an include; write ```rs (cargo compiles the included code in its crate; rustdoc would compile the raw directive, or with `ignore` list it as an ignored test, and `rs` is still highlighted as Rust)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_doctest_rule_is_rustdoc_s() {
    assert!(is_doctest("") && is_doctest("rust") && is_doctest("rust,ignore"));
    assert!(is_doctest("should_panic") && is_doctest("rust,no_run"));
    assert!(!is_doctest("rs") && !is_doctest("text") && !is_doctest("wgsl"));
    assert!(!is_doctest("console"));
}

/// The chapter pages, `chNN-….md`, with their number.
fn chapter_pages() -> Vec<(u32, String)> {
    pages()
        .into_iter()
        .filter_map(|(page, _)| {
            let number = page.strip_prefix("ch")?.get(..2)?.parse().ok()?;
            Some((number, page))
        })
        .collect()
}

#[test]
fn every_chapter_page_is_compiled_as_doctests_by_its_crate() {
    let pages = chapter_pages();
    assert!(!pages.is_empty(), "no chapter page (chNN-….md) in book/src");
    let mut problems = Vec::new();
    for (number, page) in pages {
        let lib = root().join(format!("chapters/chapter{number:02}/src/lib.rs"));
        let Ok(source) = fs::read_to_string(&lib) else {
            problems.push(format!(
                "{page}: its crate's {} does not exist",
                lib.display()
            ));
            continue;
        };
        let include = format!("include_str!(\"../../../book/src/{page}\")");
        let compiled =
            source.contains("#[cfg(doctest)]") && source.contains(&include);
        if !compiled {
            problems.push(format!(
                "{page}: chapters/chapter{number:02}/src/lib.rs must hold `#[cfg(doctest)] #[doc = {include}] struct Book;`"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The pages the table of contents links to.
fn summary_links() -> BTreeSet<String> {
    let summary = fs::read_to_string(book_src().join("SUMMARY.md"))
        .expect("book/src/SUMMARY.md");
    let mut links = BTreeSet::new();
    for line in summary.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').expect("a closed link");
            let target = after[..end].split('#').next().unwrap_or_default();
            if !target.is_empty() {
                links.insert(target.to_string());
            }
            rest = &after[end..];
        }
    }
    links
}

#[test]
fn the_table_of_contents_and_the_pages_agree() {
    let linked = summary_links();
    let existing: BTreeSet<String> = pages()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p != "SUMMARY.md")
        .collect();
    let missing: Vec<_> = linked.difference(&existing).collect();
    let orphans: Vec<_> = existing.difference(&linked).collect();
    assert!(
        missing.is_empty() && orphans.is_empty(),
        "SUMMARY.md links to missing pages {missing:?}; pages not in SUMMARY.md {orphans:?}"
    );
}

#[test]
fn every_figure_a_page_shows_is_committed_and_every_committed_figure_is_shown() {
    let mut shown = BTreeSet::new();
    let mut problems = Vec::new();
    for (page, text) in pages() {
        for (i, _) in text.match_indices("figures/") {
            let name: String = text[i + "figures/".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                .collect();
            let name = name.trim_end_matches('.').to_string();
            if name.is_empty() {
                continue;
            }
            if !book_src().join("figures").join(&name).is_file() {
                problems.push(format!("{page}: figures/{name} is not committed"));
            }
            shown.insert(name);
        }
    }
    let dir = book_src().join("figures");
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries {
            let name = entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .to_string();
            if !shown.contains(&name) {
                problems.push(format!(
                    "figures/{name} is committed but no page shows it"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_include_checker_finds_a_missing_anchor_and_an_empty_one() {
    // The checks above must be able to fail: exercise their parts on known-bad input.
    let source = "// ANCHOR: full\nlet x = 1;\n// ANCHOR_END: full\n// ANCHOR: empty\n// ANCHOR_END: empty\n";
    assert_eq!(anchored(source, "full").as_deref(), Some("let x = 1;"));
    assert_eq!(anchored(source, "empty").as_deref(), Some(""));
    assert_eq!(anchored(source, "missing"), None);
    let page =
        "text\n```rust,ignore\n{{#include ../../chapters/x/src/lib.rs:full}}\n```\n";
    assert_eq!(
        includes(page),
        vec![(
            3,
            "../../chapters/x/src/lib.rs".to_string(),
            Some("full".to_string())
        )]
    );
    let fence = fences(page);
    assert_eq!(fence[0].1, "rust,ignore");
    assert!(Path::new(&root()).join("Cargo.toml").is_file());
}

/// The widest line, in characters, that a page's code block shows whole. mdBook's column
/// is 750 px wide (`--content-max-width`); a code block pads its text by 1rem (10 px) on
/// each side and sets it in Source Code Pro at 14 px (0.875 of the 16 px body text),
/// whose characters are 0.6 em, 8.4 px, wide: 730 px ÷ 8.4 px = 86.9. A longer line is cut
/// off at the column's edge and needs horizontal scrolling, whatever the window's width.
const MAX_COLUMNS: usize = 86;

/// The lines a fence shows once mdBook has expanded its includes: the included anchor
/// or whole file in place of each directive.
fn shown_lines(page_dir: &Path, body: &str) -> Vec<String> {
    let mut shown = Vec::new();
    for line in body.lines() {
        let found = includes(line);
        let Some((_, path, anchor)) = found.first() else {
            shown.push(line.to_string());
            continue;
        };
        let source = fs::read_to_string(page_dir.join(path)).unwrap_or_default();
        let included = match anchor {
            Some(anchor) => anchored(&source, anchor).unwrap_or_default(),
            // A whole file (the book uses no line ranges; one would be checked whole).
            None => source,
        };
        shown.extend(included.lines().map(str::to_string));
    }
    shown
}

/// `page:line: width: text` for every line a fence of `text` shows that is wider than
/// [`MAX_COLUMNS`] characters.
fn too_wide(page: &str, page_dir: &Path, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (line, _, body) in fences(text) {
        for shown in shown_lines(page_dir, &body) {
            let width = shown.chars().count();
            if width > MAX_COLUMNS {
                problems.push(format!("{page}:{line}: {width} characters: {shown}"));
            }
        }
    }
    problems
}

#[test]
fn every_listing_and_printed_output_fits_the_column() {
    let mut problems = Vec::new();
    for (page, text) in pages() {
        let dir = book_src().join(&page);
        let dir = dir.parent().expect("a page has a directory");
        problems.extend(too_wide(&page, dir, &text));
    }
    assert!(
        problems.is_empty(),
        "{} lines in the book's code blocks are wider than {MAX_COLUMNS} characters, the \
         widest the page's column shows without scrolling (the number is explained at \
         MAX_COLUMNS in tests/book.rs). Wrap them: `cargo fmt` wraps code (rustfmt.toml \
         sets the width); comments, messages and printed lines are wrapped by hand.\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_width_check_finds_a_wide_printed_line_and_a_wide_included_one() {
    let dir =
        std::env::temp_dir().join(format!("width-check-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("a temporary directory");
    let wide = "x".repeat(MAX_COLUMNS + 1);
    let fits = "y".repeat(MAX_COLUMNS);
    let source =
        format!("// ANCHOR: wide\nlet s = \"{wide}\";\n// ANCHOR_END: wide\n");
    fs::write(dir.join("lib.rs"), source).expect("writable");
    let page = format!(
        "A paragraph may be as wide as it likes: {wide}\n\n```text\n{fits}\n{wide}\n```\n\n\
         ```rs\n{{{{#include lib.rs:wide}}}}\n```\n"
    );
    let problems = too_wide("planted.md", &dir, &page);
    fs::remove_dir_all(&dir).ok();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0]
            .starts_with(&format!("planted.md:3: {} characters", MAX_COLUMNS + 1))
    );
    assert!(
        problems[1]
            .starts_with(&format!("planted.md:8: {} characters", MAX_COLUMNS + 12))
    );
}
