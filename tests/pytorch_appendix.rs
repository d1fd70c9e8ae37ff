//! The "From PyTorch" appendix (`book/src/appendix-pytorch.md`) cannot drift from the code:
//! every name its engine column writes must be a public function, method or type of the
//! engine or the attention library, and every public method of `Tensor` must have a row.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in
            fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The identifiers after `pub fn`, `pub struct`, `pub enum`, `pub trait`, `pub const` and
/// `fn` in `text` (a trait's methods, such as `Module::parameters`, carry no `pub`), and
/// the variants of enums, which the page also names (`Fill::D2l`).
fn public_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        for keyword in [
            "pub fn ",
            "pub struct ",
            "pub enum ",
            "pub trait ",
            "pub const ",
            "fn ",
        ] {
            if let Some(rest) = line.strip_prefix(keyword) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
        // Enum variants: `Name,` or `Name(…),` or `Name {` at the start of a line.
        let variant: String =
            line.chars().take_while(|c| c.is_alphanumeric()).collect();
        if variant.chars().next().is_some_and(char::is_uppercase)
            && line[variant.len()..].starts_with([',', '(', ' '])
        {
            names.insert(variant);
        }
    }
    names
}

/// The public names of the engine and the attention library.
fn library_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for dir in ["engine/src", "attention/src"] {
        for file in sources(&root().join(dir)) {
            names.extend(public_names(&fs::read_to_string(&file).expect("readable")));
        }
    }
    names
}

/// The public methods of `Tensor`: `pub fn` inside `impl Tensor` blocks.
fn tensor_methods() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in sources(&root().join("engine/src")) {
        let text = fs::read_to_string(&file).expect("readable");
        let mut inside = false;
        for line in text.lines() {
            if line.starts_with("impl Tensor {") {
                inside = true;
            } else if line.starts_with('}') {
                inside = false;
            } else if inside && let Some(rest) = line.strip_prefix("    pub fn ") {
                names.insert(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
    }
    names
}

/// The code spans of the first column of every table row of the page.
fn engine_column(page: &str) -> Vec<String> {
    page.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split(" | ").next())
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The identifiers a code span calls or names: `x.sum_dim(d)` → `sum_dim`,
/// `Tensor::from_vec(…)` → `Tensor`, `from_vec`, `Mask::key_padding(&m)` → `Mask`,
/// `key_padding`; `&a + &b` names none.
fn called(span: &str) -> Vec<String> {
    let mut names = Vec::new();
    let chars: Vec<char> = span.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let after_dot = i > 0
            && (chars[i - 1] == '.'
                || (i > 1 && chars[i - 1] == ':' && chars[i - 2] == ':'));
        let starts_type =
            chars[i].is_uppercase() && (i == 0 || !chars[i - 1].is_alphanumeric());
        if (after_dot || starts_type) && (chars[i].is_alphabetic() || chars[i] == '_')
        {
            let name: String = chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect();
            i += name.len();
            names.push(name);
        } else {
            i += 1;
        }
    }
    names
}

const PAGE: &str = include_str!("../book/src/appendix-pytorch.md");

/// Names the page writes that are not items of the two crates: the macro and the enum
/// variants written through a path the scan does not see as a variant line.
const NOT_ITEMS: [&str; 1] = ["println"];

#[test]
fn every_name_the_appendix_writes_exists_in_the_code() {
    let known = library_names();
    let mut missing = Vec::new();
    for span in engine_column(PAGE) {
        for name in called(&span) {
            if !known.contains(&name) && !NOT_ITEMS.contains(&name.as_str()) {
                missing.push(format!("{name} (in `{span}`)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the appendix names what the code does not have:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_public_tensor_method_has_a_row() {
    let written: BTreeSet<String> =
        engine_column(PAGE).iter().flat_map(|s| called(s)).collect();
    let absent: Vec<String> = tensor_methods()
        .into_iter()
        .filter(|m| !written.contains(m))
        .collect();
    assert!(
        absent.is_empty(),
        "Tensor methods missing from book/src/appendix-pytorch.md: {absent:?}"
    );
}

#[test]
fn the_scan_reads_calls_and_paths() {
    assert_eq!(called("x.sum_dim_keepdim(d)"), ["sum_dim_keepdim"]);
    assert_eq!(
        called("Tensor::from_vec(values, [2, 3])"),
        ["Tensor", "from_vec"]
    );
    assert_eq!(called("&a + &b"), Vec::<String>::new());
    assert_eq!(called("cond.where_cond(&a, &b)"), ["where_cond"]);
    assert_eq!(
        engine_column("| `a.matmul(&b)`, `a.bmm(&b)` | `a @ b` | x |"),
        ["a.matmul(&b)", "a.bmm(&b)"]
    );
    assert!(public_names("    pub fn relu(&self) -> Tensor {").contains("relu"));
}
