//! The "From PyTorch" appendix (`book/src/appendix-pytorch.md`) cannot drift from the code
//! or from the chapters:
//!
//! - every name its engine column (the first) writes must be a public function, method,
//!   type, variant or module of the engine or the attention library;
//! - every public method of `Tensor` must have a row;
//! - every item of the two crates that a chapter's `src/`, `examples/` or `tests/` uses must have a
//!   row, and the failure names the chapter file and line that uses it.
//!
//! The last check reads Rust with a small lexer (comments and literals dropped) rather
//! than a compiler, so it works by these rules:
//!
//! - The crates' public items are read from their sources: `pub` structs, enums, traits,
//!   type aliases, functions and constants; the `pub fn`s of inherent `impl` blocks and
//!   every `fn` a public trait declares (methods, by name, with their owners); the
//!   variants of public enums. Private modules (`mod tests`) and bodies are not read.
//! - In a chapter file, an item is used when a path names it (`engine::optim::GradScaler`,
//!   `attention::Mask::causal`), when a `use engine::…`/`use attention::…` imports it, when
//!   a path starts with a name so imported (`Tensor::from_vec`, `init::uniform`), or when a
//!   name brought by `use attention::prelude::*` is written bare: a type anywhere, a
//!   function where it is called. A name the file defines itself, or imports from
//!   elsewhere, shadows the glob's, as in Rust. Any other glob import of the crates fails
//!   the scan, so nothing passes unread.
//! - A method call `.name(…)` counts when `name` is a public method of some type of the
//!   crates, whatever the receiver: the receiver's type is unknown without a compiler, so
//!   this errs towards reporting. Two kinds of names are ambiguous, and their calls count
//!   only in a file that also uses (as above) a type having the method: the standard
//!   library's everyday methods (`STD_METHODS`: `.len()`, `.get(…)`, …) and the methods the
//!   chapter defines itself (`fn forward` in its own layer). That is the scan's one blind
//!   spot: `model.state_dict().get(…)` in a file that never names `StateDict`.
//! - The appendix lists an item when its engine column writes the name: a type by its
//!   name, a constructor `Type::new` and an enum's variants by the type's name, anything
//!   else by its own name (`x.prefill(…)`, `Mask::causal()`, `autocast(…)`), whatever
//!   type the row gives it: `opt.step()` also lists `attn.step(…)`, so a row that names a
//!   method should say whose it is.
//!

use std::collections::{BTreeMap, BTreeSet};
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

// ---------------------------------------------------------------------------------------
// A small Rust lexer: enough to find items and paths, blind to comments and literals.
// ---------------------------------------------------------------------------------------

/// A token of Rust source: an identifier (keywords included), `::`, or one other
/// character. Comments are dropped; string, character and number literals become `"`.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    /// 1-based line.
    line: usize,
}

fn lex(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let push = |tokens: &mut Vec<Token>, text: String, line: usize| {
        tokens.push(Token { text, line })
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            let start_line = line;
            line += chars[i..end].iter().filter(|c| **c == '\n').count();
            push(&mut tokens, "\"".into(), start_line);
            i = end;
        } else if c == '"' || (c == 'b' && next == Some('"')) {
            let start_line = line;
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
            push(&mut tokens, "\"".into(), start_line);
        } else if c == '\'' || (c == 'b' && next == Some('\'')) {
            // A character literal ('x', '\n', b'x'), or a lifetime ('a), which is skipped.
            let j = if c == 'b' { i + 1 } else { i };
            if chars.get(j + 1) == Some(&'\\') {
                let mut k = j + 2;
                while k < chars.len() && chars[k] != '\'' {
                    k += 1;
                }
                push(&mut tokens, "\"".into(), line);
                i = k + 1;
            } else if chars.get(j + 2) == Some(&'\'') {
                push(&mut tokens, "\"".into(), line);
                i = j + 3;
            } else {
                i = j + 1;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || chars[i] == '_')
                {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (chars[i] == '.'
                        && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())))
            {
                i += 1;
            }
            push(&mut tokens, "\"".into(), line);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            push(&mut tokens, word.trim_start_matches("r#").to_string(), line);
        } else if c == ':' && next == Some(':') {
            push(&mut tokens, "::".into(), line);
            i += 2;
        } else {
            push(&mut tokens, c.to_string(), line);
            i += 1;
        }
    }
    tokens
}

/// Where a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) that starts at `i` ends.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#'))
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

fn is_ident(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

// ---------------------------------------------------------------------------------------
// The public items of the engine and the attention library.
// ---------------------------------------------------------------------------------------

/// What the two crates declare public, read from their sources.
#[derive(Debug, Default)]
struct Library {
    /// Structs, enums, traits and type aliases.
    types: BTreeSet<String>,
    /// Free functions, constants and statics.
    functions: BTreeSet<String>,
    /// Public methods and associated functions and constants (those of inherent `impl`
    /// blocks, and every `fn` a public trait declares), by name, with their owners.
    methods: BTreeMap<String, BTreeSet<String>>,
    /// Enum variants, as (enum, variant).
    variants: BTreeSet<(String, String)>,
    /// Modules, `pub mod` or not (a path may pass through a re-exporting one).
    modules: BTreeSet<String>,
}

/// What the next `{` opens, and so how the items inside it are read.
#[derive(Debug, Clone)]
enum Scope {
    /// A file or a `pub mod`: its `pub` items are the crate's.
    Module,
    /// An inherent `impl Owner` (Some) or a trait impl (None, whose methods the trait
    /// declares).
    Impl(Option<String>),
    /// A public trait: every `fn` is a method.
    Trait(String),
    /// A public enum: its variants.
    Enum(String),
    /// Anything else (bodies, fields, private modules such as `mod tests`): not read.
    Skip,
}

/// Whether the item keyword at `at` is declared `pub` (not `pub(crate)` or private),
/// looking back over `const`, `unsafe`, `async`, `extern "C"`.
fn declared_pub(tokens: &[Token], at: usize) -> bool {
    let mut k = at;
    while k > 0
        && ["const", "unsafe", "async", "extern", "\""]
            .contains(&tokens[k - 1].text.as_str())
    {
        k -= 1;
    }
    k > 0 && tokens[k - 1].text == "pub"
}

/// The index after an attribute (`#[…]`, `#![…]`) that starts at `i`.
fn skip_attribute(tokens: &[Token], mut i: usize) -> usize {
    i += 1;
    if tokens.get(i).is_some_and(|t| t.text == "!") {
        i += 1;
    }
    let mut depth = 0;
    while i < tokens.len() {
        match tokens[i].text.as_str() {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The owner of the `impl` whose keyword is at `at` (None for a trait impl), and the index
/// of its `{`.
fn impl_header(tokens: &[Token], at: usize) -> (Option<String>, usize) {
    let mut angle = 0i32;
    let mut owner = None;
    let mut trait_impl = false;
    let mut in_where = false;
    let mut i = at + 1;
    while i < tokens.len() {
        let text = tokens[i].text.as_str();
        match text {
            "{" if angle == 0 => {
                return ((!trait_impl).then_some(owner).flatten(), i);
            }
            "<" => angle += 1,
            ">" if i > 0 && tokens[i - 1].text != "-" => angle -= 1,
            "for" if angle == 0 => trait_impl = true,
            "where" if angle == 0 => in_where = true,
            _ if angle == 0 && !in_where && is_ident(text) => {
                owner = Some(text.to_string())
            }
            _ => {}
        }
        i += 1;
    }
    (None, i)
}

impl Library {
    /// Reads the public items of the `.rs` files under `dirs`.
    fn read(dirs: &[PathBuf]) -> Library {
        let mut library = Library::default();
        for dir in dirs {
            for file in sources(dir) {
                let text = fs::read_to_string(&file).expect("readable");
                library.add(&lex(&text));
            }
        }
        library
    }

    fn add(&mut self, tokens: &[Token]) {
        // Each open brace's scope, and the bracket depth it was opened at.
        let mut stack: Vec<(Scope, usize)> = vec![(Scope::Module, 0)];
        let mut brackets = 0;
        let mut pending: Option<Scope> = None;
        let mut variant_may_follow = false;
        let mut i = 0;
        while i < tokens.len() {
            let text = tokens[i].text.as_str();
            if text == "#" {
                i = skip_attribute(tokens, i);
                continue;
            }
            let (scope, at_brackets) = stack.last().cloned().expect("a scope");
            let item_level = brackets == at_brackets;
            let name = tokens
                .get(i + 1)
                .map(|t| t.text.clone())
                .unwrap_or_default();
            let public = declared_pub(tokens, i);
            match text {
                "(" | "[" => brackets += 1,
                ")" | "]" => brackets -= 1,
                "{" => {
                    let opened = pending.take().unwrap_or(Scope::Skip);
                    variant_may_follow = matches!(opened, Scope::Enum(_));
                    stack.push((opened, brackets));
                    i += 1;
                    continue;
                }
                "}" => {
                    stack.pop();
                    pending = None;
                    variant_may_follow = false;
                    i += 1;
                    continue;
                }
                ";" if item_level => pending = None,
                _ => {}
            }
            match (&scope, text) {
                (Scope::Skip, _) => {}
                (_, _) if !item_level => {}
                (Scope::Enum(owner), _) => {
                    if variant_may_follow && is_ident(text) {
                        self.variants.insert((owner.clone(), text.to_string()));
                    }
                    variant_may_follow = text == ",";
                }
                (Scope::Module, "impl")
                    if i == 0
                        || ["}", ";", "{", "]", "unsafe"]
                            .contains(&tokens[i - 1].text.as_str()) =>
                {
                    let (owner, brace) = impl_header(tokens, i);
                    pending = Some(Scope::Impl(owner));
                    i = brace;
                    continue;
                }
                (Scope::Module, "mod") => {
                    self.modules.insert(name.clone());
                    pending = Some(if public { Scope::Module } else { Scope::Skip });
                }
                (Scope::Module, "struct" | "union" | "type") => {
                    if public {
                        self.types.insert(name.clone());
                    }
                    pending = Some(Scope::Skip);
                }
                (Scope::Module, "enum") => {
                    if public {
                        self.types.insert(name.clone());
                    }
                    pending = Some(if public {
                        Scope::Enum(name.clone())
                    } else {
                        Scope::Skip
                    });
                }
                (Scope::Module, "trait") => {
                    if public {
                        self.types.insert(name.clone());
                    }
                    pending = Some(if public {
                        Scope::Trait(name.clone())
                    } else {
                        Scope::Skip
                    });
                }
                (Scope::Module, "fn" | "const" | "static")
                    if name != "fn" && name != "mut" =>
                {
                    if public && is_ident(&name) && name != "_" {
                        self.functions.insert(name.clone());
                    }
                    pending = Some(Scope::Skip);
                }
                (Scope::Impl(owner), "fn" | "const") if name != "fn" => {
                    if let Some(owner) = owner
                        && public
                    {
                        self.methods
                            .entry(name.clone())
                            .or_default()
                            .insert(owner.clone());
                    }
                    pending = Some(Scope::Skip);
                }
                (Scope::Trait(owner), "fn" | "const") if name != "fn" => {
                    self.methods
                        .entry(name.clone())
                        .or_default()
                        .insert(owner.clone());
                    pending = Some(Scope::Skip);
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Every name the crates declare public: types, functions, methods, variants, modules.
    fn names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> =
            self.types.union(&self.functions).cloned().collect();
        names.extend(self.methods.keys().cloned());
        names.extend(self.variants.iter().map(|(_, v)| v.clone()));
        names.extend(self.modules.iter().cloned());
        names
    }

    /// The public methods of `Tensor`.
    fn tensor_methods(&self) -> BTreeSet<String> {
        self.methods
            .iter()
            .filter(|(_, owners)| owners.contains("Tensor"))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// What the chapters use.
// ---------------------------------------------------------------------------------------

/// An item of the crates that a chapter uses, as the appendix must list it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    /// A struct, enum, trait or type alias: `GradScaler`.
    Type(String),
    /// An associated function, constant or variant written through its type:
    /// `Mask::causal`, `Precision::F16`.
    Assoc(String, String),
    /// A free function or constant: `autocast`, `DEFAULT_ATTENTION_BLOCK`.
    Function(String),
    /// A method call `.name(…)` whose name is a public method of a type of the crates.
    Method(String),
}

/// The leaves of the `use` tree whose first token is at `*i` (just after `use`): the
/// path of each, and the name it brings into scope (`*` for a glob). `*i` ends after it.
fn use_tree(
    tokens: &[Token],
    i: &mut usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    while let Some(token) = tokens.get(*i) {
        let text = token.text.as_str();
        if text == "::" {
            *i += 1;
        } else if text == "{" {
            *i += 1;
            while tokens.get(*i).is_some_and(|t| t.text != "}") {
                use_tree(tokens, i, path.clone(), out);
                if tokens.get(*i).is_some_and(|t| t.text == ",") {
                    *i += 1;
                }
            }
            *i += 1;
            return;
        } else if text == "*" {
            *i += 1;
            out.push((path, "*".to_string()));
            return;
        } else if is_ident(text) {
            *i += 1;
            if text == "self" {
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
                return;
            }
            path.push(text.to_string());
            if tokens.get(*i).is_some_and(|t| t.text == "::") {
                continue;
            }
            let mut name = text.to_string();
            if tokens.get(*i).is_some_and(|t| t.text == "as") {
                name = tokens
                    .get(*i + 1)
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                *i += 2;
            }
            out.push((path, name));
            return;
        } else {
            return;
        }
    }
}

/// The leaves of a `use` tree: each one's path and the name it brings (`*` for a glob).
type Leaves = Vec<(Vec<String>, String)>;

/// Every `use` statement of `tokens`: its leaves, and the token range it spans.
fn use_statements(tokens: &[Token]) -> Vec<(Leaves, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].text == "use" {
            let start = i;
            i += 1;
            let mut leaves = Vec::new();
            use_tree(tokens, &mut i, Vec::new(), &mut leaves);
            while i < tokens.len() && tokens[i].text != ";" {
                i += 1;
            }
            found.push((leaves, start..i + 1));
        }
        i += 1;
    }
    found
}

const CRATES: [&str; 2] = ["engine", "attention"];

/// The names `use CRATE::prelude::*` brings: the leaves of the prelude's `pub use`
/// statements, a glob of the engine's prelude (in the attention library's) expanded.
fn prelude_names() -> BTreeMap<String, BTreeSet<String>> {
    let mut preludes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for krate in CRATES {
        let path = root().join(krate).join("src/prelude.rs");
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut names = BTreeSet::new();
        for (leaves, _) in use_statements(&lex(&text)) {
            for (path, name) in leaves {
                if name == "*" {
                    let from = path.first().map(String::as_str);
                    assert_eq!(
                        (from, path.get(1).map(String::as_str)),
                        (Some("engine"), Some("prelude")),
                        "{krate}'s prelude: the scan expands only `engine::prelude::*`"
                    );
                    names.extend(preludes["engine"].iter().cloned());
                } else {
                    names.insert(name);
                }
            }
        }
        preludes.insert(krate.to_string(), names);
    }
    preludes
}

impl Library {
    /// The items a path names, given its segments after the crate (`["nn", "Linear",
    /// "new"]`): the first type on it and what follows the type, if that is one of the
    /// type's associated items; or else the function or constant it ends with. A path that
    /// ends in a module names nothing.
    fn resolve(&self, segments: &[String]) -> Vec<Item> {
        for (k, segment) in segments.iter().enumerate() {
            let next = segments.get(k + 1);
            if self.types.contains(segment) {
                let mut items = vec![Item::Type(segment.clone())];
                if let Some(next) = next {
                    let variant =
                        self.variants.contains(&(segment.clone(), next.clone()));
                    let method =
                        self.methods.get(next).is_some_and(|o| o.contains(segment));
                    if variant || method {
                        items.push(Item::Assoc(segment.clone(), next.clone()));
                    }
                }
                return items;
            }
            if next.is_none() && self.functions.contains(segment) {
                return vec![Item::Function(segment.clone())];
            }
        }
        Vec::new()
    }

    /// The items of the crates that the file `tokens` uses, each with the line of each use.
    /// `ambiguous` holds the method names whose calls count only where the file also uses a
    /// type that has the method (names of the standard library's methods, and of the
    /// chapter's own).
    fn uses(
        &self,
        tokens: &[Token],
        preludes: &BTreeMap<String, BTreeSet<String>>,
        ambiguous: &BTreeSet<String>,
    ) -> Vec<(Item, usize)> {
        let mut found = Vec::new();
        // Method calls `.name(`, with their lines.
        let mut calls: Vec<(String, usize)> = Vec::new();
        // Names brought by `use CRATE::…::name`, with their path after the crate.
        let mut imported: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // Names brought by `use CRATE::prelude::*`.
        let mut globbed: BTreeSet<String> = BTreeSet::new();
        // Names the file defines or imports from elsewhere: they shadow a glob's.
        let mut shadowed: BTreeSet<String> = BTreeSet::new();
        let statements = use_statements(tokens);
        for (leaves, range) in &statements {
            let line = tokens[range.start].line;
            for (path, name) in leaves {
                let from_crates =
                    path.first().is_some_and(|c| CRATES.contains(&c.as_str()));
                match (from_crates, name.as_str()) {
                    (true, "*") => {
                        assert_eq!(
                            path.get(1).map(String::as_str),
                            Some("prelude"),
                            "line {line}: the scan expands only the preludes' globs, not \
                             `use {}::*`: teach it this one",
                            path.join("::")
                        );
                        globbed.extend(preludes[&path[0]].iter().cloned());
                    }
                    (true, _) => {
                        found.extend(
                            self.resolve(&path[1..])
                                .into_iter()
                                .map(|item| (item, line)),
                        );
                        imported.insert(name.clone(), path[1..].to_vec());
                    }
                    (false, "*") => {}
                    (false, _) => {
                        shadowed.insert(name.clone());
                    }
                }
            }
        }
        for pair in tokens.windows(2) {
            if [
                "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
                "union",
            ]
            .contains(&pair[0].text.as_str())
            {
                shadowed.insert(pair[1].text.clone());
            }
        }
        let in_use =
            |i: usize| statements.iter().any(|(_, range)| range.contains(&i));
        let text = |i: usize| tokens.get(i).map(|t| t.text.as_str()).unwrap_or("");
        let mut i = 0;
        while i < tokens.len() {
            if in_use(i) || !is_ident(text(i)) {
                i += 1;
                continue;
            }
            let name = text(i);
            let line = tokens[i].line;
            let before = if i > 0 { text(i - 1) } else { "" };
            // The segments of the path that starts here.
            let mut path = vec![name.to_string()];
            let mut end = i + 1;
            while text(end) == "::" && is_ident(text(end + 1)) {
                path.push(text(end + 1).to_string());
                end += 2;
            }
            if before == "." {
                let call = text(i + 1) == "(" || text(i + 1) == "::";
                let not_range = i < 2 || text(i - 2) != ".";
                if call && not_range && self.methods.contains_key(name) {
                    calls.push((name.to_string(), line));
                }
            } else if before == "::" {
                // The middle of a path whose start was read.
            } else if CRATES.contains(&name) && path.len() > 1 {
                found.extend(
                    self.resolve(&path[1..])
                        .into_iter()
                        .map(|item| (item, line)),
                );
            } else if let Some(import) = imported.get(name) {
                let full: Vec<String> =
                    import.iter().chain(&path[1..]).cloned().collect();
                found
                    .extend(self.resolve(&full).into_iter().map(|item| (item, line)));
            } else if globbed.contains(name) && !shadowed.contains(name) {
                let lowercase = name.starts_with(|c: char| c.is_lowercase());
                if !lowercase || text(i + 1) == "(" {
                    found.extend(
                        self.resolve(&path).into_iter().map(|item| (item, line)),
                    );
                }
            }
            i = end;
        }
        let types: BTreeSet<String> = found
            .iter()
            .filter_map(|(item, _)| match item {
                Item::Type(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        for (name, line) in calls {
            if !ambiguous.contains(&name) || !self.methods[&name].is_disjoint(&types)
            {
                found.push((Item::Method(name), line));
            }
        }
        found
    }
}

/// Methods of the standard library's everyday types (`Vec`, slices, maps, `Option`,
/// `f32`, iterators) that types of the crates also have: `.len()` is far more often a
/// `Vec`'s than a `KvCache`'s, so such a call counts only in a file that uses a type
/// having the method.
const STD_METHODS: [&str; 14] = [
    "len", "is_empty", "iter", "get", "insert", "remove", "contains", "keys",
    "values", "append", "capacity", "is_none", "round", "name",
];

/// The chapters' source files: `src/`, `examples/` and `tests/` of each chapter (the
/// lesson tests are the reader's too: they run the exercises).
fn chapter_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let chapters = root().join("chapters");
    for entry in fs::read_dir(&chapters).expect("chapters/") {
        let chapter = entry.expect("an entry").path();
        for part in ["src", "examples", "tests"] {
            if chapter.join(part).is_dir() {
                files.extend(sources(&chapter.join(part)));
            }
        }
    }
    files.sort();
    files
}

impl Item {
    /// Whether the appendix, whose engine column names `written`, lists the item. A type
    /// is listed by its name; its constructor `new` and its variants by the type's; any
    /// other associated item, function or method by its own name.
    fn listed(&self, written: &BTreeSet<String>, library: &Library) -> bool {
        match self {
            Item::Type(name) | Item::Function(name) | Item::Method(name) => {
                written.contains(name)
            }
            Item::Assoc(owner, name) => {
                if name == "new"
                    || library.variants.contains(&(owner.clone(), name.clone()))
                {
                    written.contains(owner)
                } else {
                    written.contains(name)
                }
            }
        }
    }

    /// How the failure names the item and what to write.
    fn describe(&self, library: &Library) -> String {
        match self {
            Item::Type(name) => format!("`{name}` (a type): write `{name}` in a row"),
            Item::Assoc(owner, name) if name == "new" => {
                format!("`{owner}::new` (a constructor): write `{owner}` in a row")
            }
            Item::Assoc(owner, name)
                if library.variants.contains(&(owner.clone(), name.clone())) =>
            {
                format!("`{owner}::{name}` (a variant): write `{owner}` in a row")
            }
            Item::Assoc(owner, name) => {
                format!(
                    "`{owner}::{name}` (an associated item): write `{owner}::{name}(…)` in a row"
                )
            }
            Item::Function(name) => format!(
                "`{name}` (a function or constant): write `{name}(…)` in a row"
            ),
            Item::Method(name) => {
                let owners: Vec<String> =
                    library.methods[name].iter().cloned().collect();
                format!(
                    "`.{name}(…)` (a method of {}): write `x.{name}(…)` in a row",
                    owners.join(", ")
                )
            }
        }
    }
}

/// The items that `files` (path, text) use and the appendix, whose engine column names
/// `written`, does not list: one line each, naming the files and lines that use it.
fn unlisted(
    files: &[(String, String)],
    written: &BTreeSet<String>,
    library: &Library,
    preludes: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    // The methods each chapter defines itself (`fn name` in any of its files), by the
    // chapter's directory (`chapters/chapter08`).
    let chapter = |path: &str| path.split('/').take(2).collect::<Vec<_>>().join("/");
    let mut own: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in files {
        let tokens = lex(text);
        let names = own.entry(chapter(path)).or_default();
        for pair in tokens.windows(2) {
            if pair[0].text == "fn" {
                names.insert(pair[1].text.clone());
            }
        }
    }
    let mut missing: BTreeMap<Item, Vec<String>> = BTreeMap::new();
    for (path, text) in files {
        let mut ambiguous = own[&chapter(path)].clone();
        ambiguous.extend(STD_METHODS.iter().map(|m| m.to_string()));
        let mut seen = BTreeSet::new();
        for (item, line) in library.uses(&lex(text), preludes, &ambiguous) {
            if !item.listed(written, library) && seen.insert(item.clone()) {
                missing
                    .entry(item)
                    .or_default()
                    .push(format!("{path}:{line}"));
            }
        }
    }
    missing
        .into_iter()
        .map(|(item, places)| {
            let shown: Vec<&str> =
                places.iter().take(4).map(String::as_str).collect();
            let more = places.len().saturating_sub(4);
            let more = if more > 0 {
                format!(" and {more} more file(s)")
            } else {
                String::new()
            };
            format!(
                "- {}; used at {}{more}",
                item.describe(library),
                shown.join(", ")
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The page.
// ---------------------------------------------------------------------------------------

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
/// `key_padding`, `no_grad(|| …)` → `no_grad`; `&a + &b` names none, nor do the
/// arguments `lo`, `hi` of `x.clamp(lo, hi)`.
fn called(span: &str) -> Vec<String> {
    let mut names = Vec::new();
    let chars: Vec<char> = span.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let word_start =
            i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let after_dot = i > 0
            && (chars[i - 1] == '.'
                || (i > 1 && chars[i - 1] == ':' && chars[i - 2] == ':'));
        if word_start && (chars[i].is_alphabetic() || chars[i] == '_') {
            let name: String = chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect();
            let followed = chars.get(i + name.chars().count()).copied();
            let is_call =
                followed == Some('(') || (followed == Some(':') && after_dot);
            if after_dot || chars[i].is_uppercase() || is_call {
                names.push(name.clone());
            }
            i += name.chars().count();
        } else {
            i += 1;
        }
    }
    names
}

const PAGE: &str = include_str!("../book/src/appendix-pytorch.md");

/// Names the page writes that are not items of the two crates: Rust's own.
const NOT_ITEMS: [&str; 4] = ["println", "Some", "Default", "default"];

fn library() -> Library {
    Library::read(&[root().join("engine/src"), root().join("attention/src")])
}

/// Every name the engine column writes.
fn written(page: &str) -> BTreeSet<String> {
    engine_column(page).iter().flat_map(|s| called(s)).collect()
}

#[test]
fn every_name_the_appendix_writes_exists_in_the_code() {
    let known = library().names();
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
    let written = written(PAGE);
    let methods = library().tensor_methods();
    assert!(
        methods.len() > 100,
        "the scan found only {} Tensor methods",
        methods.len()
    );
    let absent: Vec<String> = methods
        .into_iter()
        .filter(|m| !written.contains(m))
        .collect();
    assert!(
        absent.is_empty(),
        "Tensor methods missing from book/src/appendix-pytorch.md: {absent:?}"
    );
}

#[test]
fn every_item_a_chapter_uses_has_a_row() {
    let library = library();
    let files: Vec<(String, String)> = chapter_files()
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("readable");
            let shown = path
                .strip_prefix(root())
                .unwrap_or(&path)
                .display()
                .to_string();
            (shown, text)
        })
        .collect();
    assert!(
        files.len() > 100,
        "only {} chapter files found",
        files.len()
    );
    let missing = unlisted(&files, &written(PAGE), &library, &prelude_names());
    assert!(
        missing.is_empty(),
        "book/src/appendix-pytorch.md says it lists every call of the engine and the \
         attention library that the chapters use, but not these {}. Add each to the engine \
         column (the first) of a table, with its PyTorch counterpart in the second (or \
         \"no PyTorch counterpart\" and the closest call) and the difference in the third:\n{}",
        missing.len(),
        missing.join("\n")
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
    assert_eq!(called("no_grad(|| …)"), ["no_grad"]);
    assert_eq!(
        called("engine::autocast(Precision::F16, f)"),
        ["autocast", "Precision", "F16"]
    );
    assert_eq!(called("x.clamp(lo, hi)"), ["clamp"]);
    assert_eq!(
        engine_column("| `a.matmul(&b)`, `a.bmm(&b)` | `a @ b` | x |"),
        ["a.matmul(&b)", "a.bmm(&b)"]
    );
}

/// A small library to scan against: a type with a constructor, a method and an
/// associated function, an enum, a trait, free functions, a private test module.
const SAMPLE_LIBRARY: &str = r#"
/// A doc comment naming `pub fn hidden` is not an item.
pub struct Cache { len: usize }
impl Cache {
    pub fn new() -> Cache { Cache { len: 0 } }
    pub fn prefill(&mut self, x: &str) -> usize { let s = "pub fn fake()"; x.len() }
    pub(crate) fn internal(&self) {}
    pub fn with_window(n: usize) -> Cache { Cache { len: n } }
    pub fn len(&self) -> usize { self.len }
}
impl std::fmt::Display for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
}
pub enum Fill { D2l, Safe(f32), Value { v: f32 } }
pub trait Layer { fn forward(&self); fn parameters(&self) -> usize { 0 } }
pub fn autocast<R>(f: impl FnOnce() -> R) -> R { f() }
pub const BLOCK: usize = 64;
fn private() {}
#[cfg(test)]
mod tests { pub fn helper() {} }
"#;

fn sample() -> Library {
    let mut library = Library::default();
    library.add(&lex(SAMPLE_LIBRARY));
    library
}

#[test]
fn the_library_scan_reads_public_items_only() {
    let library = sample();
    assert_eq!(
        library.types,
        BTreeSet::from(["Cache", "Fill", "Layer"].map(String::from))
    );
    assert_eq!(
        library.functions,
        BTreeSet::from(["autocast", "BLOCK"].map(String::from))
    );
    let methods: Vec<&String> = library.methods.keys().collect();
    assert_eq!(
        methods,
        [
            "forward",
            "len",
            "new",
            "parameters",
            "prefill",
            "with_window"
        ]
    );
    assert_eq!(
        library.methods["prefill"],
        BTreeSet::from(["Cache".to_string()])
    );
    assert_eq!(
        library.methods["forward"],
        BTreeSet::from(["Layer".to_string()])
    );
    let variants: Vec<&str> =
        library.variants.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(variants, ["D2l", "Safe", "Value"]);
}

/// Runs the chapter scan of `chapter` (as `chapters/chapter99/src/lib.rs`) against the
/// sample library, its prelude holding `Cache`, `Fill` and `autocast`, and an appendix
/// whose engine column writes `listed`.
fn scan(chapter: &str, listed: &[&str]) -> Vec<String> {
    let preludes = BTreeMap::from([
        ("engine".to_string(), BTreeSet::new()),
        (
            "attention".to_string(),
            BTreeSet::from(["Cache", "Fill", "autocast"].map(String::from)),
        ),
    ]);
    let written: BTreeSet<String> = listed.iter().map(|s| s.to_string()).collect();
    let files = [(
        "chapters/chapter99/src/lib.rs".to_string(),
        chapter.to_string(),
    )];
    unlisted(&files, &written, &sample(), &preludes)
}

#[test]
fn a_chapter_using_an_unlisted_item_is_reported_with_its_line() {
    let chapter = "use attention::prelude::*;
                   fn run() {
                       let mut cache = Cache::new();
                       let n = cache.prefill(\"x\");
                       let w = Cache::with_window(n);
                       let f = Fill::Safe(0.0);
                       autocast(|| engine::BLOCK);
                   }
";
    let everything = [
        "Cache",
        "prefill",
        "with_window",
        "Fill",
        "autocast",
        "BLOCK",
    ];
    assert_eq!(scan(chapter, &everything), Vec::<String>::new());
    let missing = scan(
        chapter,
        &["Cache", "Fill", "autocast", "BLOCK", "with_window"],
    );
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert!(
        missing[0].contains("`.prefill(…)` (a method of Cache)"),
        "{}",
        missing[0]
    );
    assert!(
        missing[0].contains("chapters/chapter99/src/lib.rs:4"),
        "{}",
        missing[0]
    );
    let missing = scan(chapter, &["prefill", "Fill", "autocast", "BLOCK"]);
    let named: Vec<&str> =
        missing.iter().map(|m| &m[..m.find(';').unwrap()]).collect();
    assert_eq!(
        named,
        [
            "- `Cache` (a type): write `Cache` in a row",
            "- `Cache::new` (a constructor): write `Cache` in a row",
            "- `Cache::with_window` (an associated item): write `Cache::with_window(…)` in a row",
        ]
    );
    assert!(missing[0].contains("lib.rs:3"), "{}", missing[0]);
    let missing = scan(
        chapter,
        &["Cache", "prefill", "with_window", "Fill", "autocast"],
    );
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert!(
        missing[0].starts_with("- `BLOCK` (a function or constant)"),
        "{}",
        missing[0]
    );
}

#[test]
fn explicit_imports_paths_and_shadowing_are_followed() {
    // An explicit import, renamed, and a path through it.
    let chapter = "use attention::{Cache as C, Fill};
fn f() { let c = C::new(); let x = Fill::D2l; }
";
    let missing = scan(chapter, &[]);
    let named: Vec<&str> =
        missing.iter().map(|m| &m[..m.find(';').unwrap()]).collect();
    assert_eq!(
        named,
        [
            "- `Cache` (a type): write `Cache` in a row",
            "- `Fill` (a type): write `Fill` in a row",
            "- `Cache::new` (a constructor): write `Cache` in a row",
            "- `Fill::D2l` (a variant): write `Fill` in a row",
        ]
    );
    // A chapter's own `autocast` and `Cache` shadow the prelude's; comments and strings
    // are not code.
    let chapter = "use attention::prelude::*;
                   fn autocast() {}
                   struct Cache;
                   // Cache::new(), engine::BLOCK
                   fn g() { autocast(); let s = \"engine::BLOCK\"; }
";
    assert_eq!(scan(chapter, &[]), Vec::<String>::new());
}

#[test]
fn another_glob_of_the_crates_fails_the_scan() {
    let result = std::panic::catch_unwind(|| {
        scan(
            "use attention::long_sequences::*;
",
            &[],
        )
    });
    assert!(result.is_err(), "an unexpanded glob must not pass unread");
}

/// The "Creating tensors" table says the engine's generator, seeded as PyTorch's, gives
/// other numbers: PyTorch's, recorded in `tests/golden/claims/appendix.json`, are not the
/// engine's.
#[test]
fn the_same_seed_gives_other_numbers_than_pytorch() {
    let path = root().join("tests/golden/claims/appendix.json");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).expect("the recordings"))
            .expect("JSON");
    let recorded = json["recordings"]["randn_seed_0"]["value"]
        .as_str()
        .expect("the recording randn_seed_0");
    let pytorch: Vec<f32> = recorded
        .split(", ")
        .map(|v| v.parse().expect("a number"))
        .collect();
    assert_eq!(pytorch.len(), 3, "{recorded}");
    engine::manual_seed(0);
    let ours = engine::Tensor::randn([3]).to_vec();
    let close = ours
        .iter()
        .zip(&pytorch)
        .filter(|(a, b)| (*a - *b).abs() < 1e-3)
        .count();
    assert_eq!(
        close, 0,
        "the engine's {ours:?} against PyTorch's {pytorch:?}"
    );
}

#[test]
fn a_standard_method_name_counts_only_beside_a_type_that_has_it() {
    // `.len()` of a `Vec` in a file that uses no `Cache`: not the library's.
    let chapter = "fn f(v: Vec<u8>) -> usize { v.len() }\n";
    assert_eq!(scan(chapter, &[]), Vec::<String>::new());
    // Beside a `Cache`, it may be the cache's: it needs a row.
    let chapter =
        "use attention::prelude::*;\nfn f(c: &Cache) -> usize { c.len() }\n";
    let missing = scan(chapter, &["Cache"]);
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert!(
        missing[0].starts_with("- `.len(…)` (a method of Cache)"),
        "{}",
        missing[0]
    );
    // A chapter's own method of a library method's name, likewise.
    let chapter = "struct Mine;\nimpl Mine { fn prefill(&self) {} }\nfn f(m: Mine) { m.prefill() }\n";
    assert_eq!(scan(chapter, &[]), Vec::<String>::new());
}
