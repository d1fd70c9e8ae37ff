//! Reading a chapter's page in its tests: the prose outside code blocks, and the numbers it
//! quotes, so that a test can check each against what the chapter's code prints.

/// Fails unless `page` holds `output` as a ```` ```text ```` block, verbatim: how a
/// chapter's tests check that its page quotes what its code prints. `what` names the
/// output in the message.
#[track_caller]
pub fn assert_quoted(page: &str, what: &str, output: &str) {
    let block = format!("```text\n{output}```");
    assert!(
        page.contains(&block),
        "the page must hold {what} as a ```text block; it prints:\n{output}"
    );
}

/// The prose of a markdown page: every line outside its code fences (```` ``` ````).
///
/// ```
/// let page = "Some 0.25.\n```text\nprinted 0.50\n```\nMore.\n";
/// assert_eq!(lesson::prose(page), "Some 0.25.\nMore.\n");
/// ```
pub fn prose(page: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The numbers with two or more decimals in `text` (`0.621`, `1.9882`), as written: the
/// numbers a page quotes from a printout, as opposed to counts and sizes.
///
/// ```
/// assert_eq!(
///     lesson::decimals("0.621 and 1.5, 3 and 12.034. Also 1e-6 and 0.02."),
///     ["0.621", "12.034", "0.02"]
/// );
/// ```
pub fn decimals(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_digit());
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
            j += 1;
        }
        let number: String = chars[i..j].iter().collect::<String>();
        let number = number.trim_end_matches('.').to_string();
        if number.split('.').nth(1).is_some_and(|d| d.len() >= 2) {
            found.push(number);
        }
        i = j;
    }
    found
}
