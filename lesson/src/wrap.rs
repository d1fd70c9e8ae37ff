//! Long printed lines broken to the width of the book's code blocks, so that what a tour
//! prints is what its page shows, without horizontal scrolling.

/// The widest line a code block of the book shows whole: 86 characters (the arithmetic is
/// at `MAX_COLUMNS` in the workspace's `tests/book.rs`, which checks every page).
pub const COLUMNS: usize = 86;

/// `text` with every line wider than `width` characters broken at spaces. A continuation
/// line starts two spaces further in than the line it continues, so a wrapped message
/// still reads as one. A space inside brackets does not break, so a shape such as
/// `[2, 5]` stays on one line; a word (or bracket) wider than the line is left whole.
///
/// ```
/// let message = "add: cannot broadcast [2, 3] with [4]: dimension -1 has size 3 on the left";
/// assert_eq!(
///     lesson::wrap(message, 40),
///     "add: cannot broadcast [2, 3] with [4]:\n  dimension -1 has size 3 on the left"
/// );
/// ```
pub fn wrap(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    for line in text.split('\n') {
        if line.chars().count() <= width {
            lines.push(line.to_string());
            continue;
        }
        let indent: String = line.chars().take_while(|&c| c == ' ').collect();
        let continuation = format!("{indent}  ");
        let mut current = indent.clone();
        let mut has_word = false;
        for word in unbreakable_words(line.trim_start_matches(' ')) {
            let fits = current.chars().count() + 1 + word.chars().count() <= width;
            if has_word && !fits {
                lines.push(current);
                current = continuation.clone();
                has_word = false;
            }
            if has_word {
                current.push(' ');
            }
            current.push_str(&word);
            has_word = true;
        }
        lines.push(current);
    }
    lines.join("\n")
}

/// The words of `line` split at spaces, except spaces inside `[…]` or `(…)`.
fn unbreakable_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    for c in line.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ' ' if depth <= 0 => {
                words.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    words.push(current);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_kept_as_they_are() {
        assert_eq!(wrap("a b\n\n  c", 3), "a b\n\n  c");
    }

    #[test]
    fn a_long_line_breaks_at_spaces_with_continuations_two_spaces_in() {
        let wrapped = wrap("  one two three four five", 12);
        assert_eq!(wrapped, "  one two\n    three\n    four\n    five");
        assert!(wrapped.lines().all(|l| l.chars().count() <= 12));
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        assert_eq!(wrap("α β γ δ", 7), "α β γ δ");
        assert_eq!(wrap("α β γ δ ε", 7), "α β γ δ\n  ε");
    }

    #[test]
    fn a_shape_is_not_broken_inside_its_brackets() {
        assert_eq!(
            wrap("must have shape [2, 5] now", 18),
            "must have shape\n  [2, 5] now"
        );
        assert_eq!(wrap("(os error 2) end", 8), "(os error 2)\n  end");
    }

    #[test]
    fn a_word_wider_than_the_line_is_left_whole() {
        assert_eq!(wrap("a abcdefghij b", 5), "a\n  abcdefghij\n  b");
    }
}
