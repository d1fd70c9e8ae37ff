//! Every committed figure can be read where the book shows it: no text smaller than
//! `figures::MIN_TEXT_PX` once the figure is scaled to the page's column
//! (`figures::DISPLAY_WIDTH`), and every number on an axis a round one (at most two
//! significant digits, or a power of two on a doubling axis).

use std::fs;
use std::path::PathBuf;

fn figures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("book/src/figures")
}

/// The value of the first `name="…"` attribute in `tag`.
fn attribute(tag: &str, name: &str) -> Option<f64> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    tag[start..].split('"').next()?.parse().ok()
}

/// `(font size, text)` of every `<text>` element of an SVG document.
fn texts(svg: &str) -> Vec<(f64, String)> {
    svg.split("<text")
        .skip(1)
        .filter_map(|rest| {
            let (tag, after) = rest.split_once('>')?;
            let text = after.split("</text>").next()?.trim().to_string();
            Some((attribute(tag, "font-size")?, text))
        })
        .collect()
}

/// Problems with one figure: text too small as displayed, or a number that is not round.
fn problems(name: &str, svg: &str) -> Vec<String> {
    let width = svg
        .split_once("<svg")
        .and_then(|(_, tag)| attribute(tag, "width"))
        .unwrap_or(0.0);
    let scale = (f64::from(figures::DISPLAY_WIDTH) / width).min(1.0);
    let mut found = Vec::new();
    for (size, text) in texts(svg) {
        let shown = size * scale;
        if shown < figures::MIN_TEXT_PX - 0.01 {
            found.push(format!(
                "{name}: \"{text}\" is {shown:.1} px as shown (figure {width} px wide)"
            ));
        }
        if !is_round(&text) {
            found.push(format!("{name}: the number \"{text}\" is not a round tick"));
        }
    }
    found
}

/// Words and other non-numbers pass; a number passes with at most two significant digits,
/// or as a whole power of two.
fn is_round(text: &str) -> bool {
    let Ok(value) = text.parse::<f64>() else {
        return true;
    };
    let digits: String = text
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_string();
    let power_of_two =
        value >= 1.0 && value.fract() == 0.0 && (value as u64).is_power_of_two();
    digits.len() <= 2 || power_of_two
}

#[test]
fn every_committed_figure_is_legible_where_the_page_shows_it() {
    let mut all = Vec::new();
    for entry in fs::read_dir(figures_dir()).expect("book/src/figures") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "svg") {
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            all.extend(problems(
                &name,
                &fs::read_to_string(&path).expect("readable"),
            ));
        }
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn the_check_finds_small_text_and_odd_ticks() {
    let small = r#"<svg width="1500" height="300"><text x="1" font-size="16">head 0</text></svg>"#;
    assert_eq!(problems("wide.svg", small).len(), 1); // 16 px shown at half size: 8 px
    let fine = r#"<svg width="500" height="300"><text font-size="12.1">0.25</text><text font-size="13">1024</text></svg>"#;
    assert!(problems("fine.svg", fine).is_empty());
    let odd = r#"<svg width="500"><text font-size="12.1">22.6</text></svg>"#;
    assert_eq!(
        problems("odd.svg", odd),
        ["odd.svg: the number \"22.6\" is not a round tick"]
    );
    assert!(
        is_round("0.001")
            && is_round("3.50")
            && is_round("100000")
            && is_round("mat")
    );
    assert!(!is_round("90.5") && !is_round("181"));
}
