//! Checks the rendered book as a reader meets it: `cargo run --bin check_built_book -- book/book`
//! after `mdbook build book`.
//!
//! - every internal link and `#anchor` resolves to a page and an element `id` that exist;
//! - every image, script, style sheet and font is a file inside the book (nothing is
//!   loaded from another site, so the book reads fully offline);
//! - no code block is empty and no raw `{{#` directive is left (mdBook renders a missing
//!   anchor as an empty block and says nothing).
//!
//! Exits with status 1 and one line per problem when anything fails.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!(
            "usage: check_built_book <rendered book directory, e.g. book/book>"
        );
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(dir);
    match check(&dir) {
        Ok(pages) => {
            println!("check_built_book: {pages} pages checked, no problem found");
            ExitCode::SUCCESS
        }
        Err(problems) => {
            for p in &problems {
                eprintln!("{p}");
            }
            eprintln!("check_built_book: {} problem(s)", problems.len());
            ExitCode::FAILURE
        }
    }
}

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The values of `attr="…"` in `html`.
fn attribute_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!("{attr}=\"");
    html.match_indices(&needle)
        .filter(|(i, _)| {
            // A whole attribute name: preceded by whitespace.
            html[..*i].ends_with(|c: char| c.is_whitespace())
        })
        .filter_map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

/// The tag name of the element whose attribute starts at byte `at`.
fn tag_at(html: &str, at: usize) -> String {
    let open = html[..at].rfind('<').unwrap_or(0);
    html[open + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Resolves `link` (relative to the page `page`) to a path inside the book, dropping
/// `.`/`..`; `None` when it climbs out of the book.
fn resolve(page: &Path, link: &str) -> Option<PathBuf> {
    let base = page.parent().unwrap_or(Path::new(""));
    let mut out = PathBuf::new();
    for c in base.join(link).components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

fn is_external(link: &str) -> bool {
    link.starts_with("http://")
        || link.starts_with("https://")
        || link.starts_with("//")
}

fn check(dir: &Path) -> Result<usize, Vec<String>> {
    let all = files(dir);
    if all.is_empty() {
        return Err(vec![format!(
            "{} holds no file; run `mdbook build book` first",
            dir.display()
        )]);
    }
    let existing: BTreeSet<&PathBuf> = all.iter().collect();
    let html: BTreeMap<&PathBuf, String> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| (p, fs::read_to_string(dir.join(p)).unwrap_or_default()))
        .collect();
    let ids: BTreeMap<&PathBuf, BTreeSet<&str>> = html
        .iter()
        .map(|(p, text)| (*p, attribute_values(text, "id").into_iter().collect()))
        .collect();
    let mut problems = Vec::new();
    for (page, text) in &html {
        let name = page.display();
        // The print page repeats every other page; its links are checked there.
        let is_print = page.as_os_str() == "print.html";
        if text.contains("{{#") {
            problems.push(format!(
                "{name}: a raw `{{{{#` directive is left in the page"
            ));
        }
        if text.contains("<code></code>")
            || text.contains("\"></code>")
            || text.contains("<pre><code class=\"language-rust\">\n</code></pre>")
        {
            problems.push(format!("{name}: an empty code block"));
        }
        for attr in ["href", "src"] {
            let needle = format!("{attr}=\"");
            for (at, _) in text.match_indices(&needle) {
                if !text[..at].ends_with(|c: char| c.is_whitespace()) {
                    continue;
                }
                let rest = &text[at + needle.len()..];
                let Some(end) = rest.find('"') else { continue };
                let link = &rest[..end];
                let tag = tag_at(text, at);
                if is_external(link) {
                    // A hyperlink to another site is a reference; anything the page loads
                    // (a script, a style sheet, a font, an image) must be in the book.
                    if tag != "a" {
                        problems.push(format!(
                            "{name}: <{tag}> loads {link} from outside the book"
                        ));
                    }
                    continue;
                }
                if link.starts_with("mailto:")
                    || link.starts_with("data:")
                    || link.is_empty()
                {
                    continue;
                }
                let (path, anchor) = match link.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (link, None),
                };
                let path = path.split('?').next().unwrap_or_default();
                // A page with `<base href="/">` (mdBook's 404 page) and a link starting with
                // `/` both resolve from the book's root (mdBook's `site-url`, "/" here).
                let from_root =
                    path.starts_with('/') || text.contains("<base href=\"/\">");
                let target = if path.is_empty() {
                    Some((*page).clone())
                } else if from_root {
                    resolve(Path::new("index.html"), path.trim_start_matches('/'))
                } else {
                    resolve(page, path)
                };
                let Some(target) = target else {
                    problems.push(format!("{name}: {link} points outside the book"));
                    continue;
                };
                let target = if target.as_os_str().is_empty() || link.ends_with('/') {
                    target.join("index.html")
                } else {
                    target
                };
                if !existing.contains(&target) {
                    problems.push(format!(
                        "{name}: {link} names a missing file {}",
                        target.display()
                    ));
                    continue;
                }
                if let (Some(anchor), false) = (anchor, is_print) {
                    let known =
                        ids.get(&target).is_some_and(|set| set.contains(anchor));
                    if !anchor.is_empty() && !known {
                        problems.push(format!(
                            "{name}: {link}: {} has no element with id \"{anchor}\"",
                            target.display()
                        ));
                    }
                }
            }
        }
    }
    // Style sheets load fonts and images with url(…): those must be in the book too.
    for css in all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "css"))
    {
        let text = fs::read_to_string(dir.join(css)).unwrap_or_default();
        for (at, _) in text.match_indices("url(") {
            let rest = &text[at + 4..];
            let Some(end) = rest.find(')') else { continue };
            let link = rest[..end].trim().trim_matches(|c| c == '"' || c == '\'');
            if is_external(link) {
                problems.push(format!(
                    "{}: url({link}) loads from outside the book",
                    css.display()
                ));
            } else if !link.starts_with("data:") && !link.starts_with('#') {
                let path = link.split(['?', '#']).next().unwrap_or_default();
                match resolve(css, path) {
                    Some(t) if existing.contains(&t) => {}
                    _ => problems.push(format!(
                        "{}: url({link}) names a missing file",
                        css.display()
                    )),
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(html.len())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(tag: &str, pages: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("check_built_book_{}_{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for (name, text) in pages {
            let path = dir.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_good_book_passes() {
        let dir = book(
            "good",
            &[
                (
                    "index.html",
                    "<a href=\"ch1.html#intro\">x</a> <img src=\"figures/a.svg\">",
                ),
                (
                    "ch1.html",
                    "<h1 id=\"intro\">Intro</h1><a href=\"https://example.org\">ref</a>",
                ),
                ("figures/a.svg", "<svg/>"),
            ],
        );
        assert_eq!(check(&dir), Ok(2));
    }

    #[test]
    fn every_kind_of_problem_is_reported() {
        let dir = book(
            "bad",
            &[
                (
                    "index.html",
                    "<a href=\"ch1.html#nowhere\">x</a> <a href=\"gone.html\">y</a>",
                ),
                (
                    "ch1.html",
                    "<script src=\"https://cdn.example/mathjax.js\"></script><pre><code class=\"language-rust\"></code></pre>{{#include x}}",
                ),
                (
                    "theme.css",
                    "@font-face { src: url(\"https://fonts.example/f.woff\") }",
                ),
            ],
        );
        let problems = check(&dir).unwrap_err().join("\n");
        assert!(
            problems.contains("has no element with id \"nowhere\""),
            "{problems}"
        );
        assert!(
            problems.contains("gone.html names a missing file"),
            "{problems}"
        );
        assert!(
            problems.contains("<script> loads https://cdn.example/mathjax.js"),
            "{problems}"
        );
        assert!(problems.contains("an empty code block"), "{problems}");
        assert!(problems.contains("raw `{{#` directive"), "{problems}");
        assert!(
            problems.contains("url(https://fonts.example/f.woff)"),
            "{problems}"
        );
    }
}
