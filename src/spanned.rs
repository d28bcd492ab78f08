//! Reading a TOML or YAML document with every problem located by `file:line:column`.
//!
//! A format built on TOML (the suites, the calibration sets) walks toml's spanned document tree, not
//! serde, so that a problem can point at the exact key or value, name the key path, and say how to fix
//! it; every problem of a file is collected, not only the first. A YAML suite is read into the same tree
//! (`yaml.rs`), so one reader serves both, and its problems are shown in YAML's words (`wording.rs`).
//! This module knows values, spans, problems and "did you mean", and the two kinds of file read this
//! way (a suite, a calibration set, a labels file), which word a `FileError`: the format's keys, defaults and the
//! wording of its problems stay with the format.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod report;
mod wording;
#[cfg(feature = "yaml")]
mod yaml;

pub use report::{FileError, FileKind};

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

/// A spanned value of the document tree.
pub(crate) type Node<'i> = Spanned<DeValue<'i>>;

/// One problem in a file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    /// Byte range in the file that the problem points at.
    pub span: Range<usize>,
    /// The key path (`cases[0].assert[1]`), or `""` for a syntax error.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl Problem {
    /// A problem at `span` for `key`.
    pub fn new(
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            span,
            key: key.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// The table of a TOML text; `Err` is its syntax error, located, with `syntax_fix`.
pub(crate) fn toml_root<'i>(
    text: &'i str,
    syntax_fix: &str,
) -> Result<Spanned<DeTable<'i>>, Problem> {
    DeTable::parse(text).map_err(|e| {
        let message = e.message().trim().replace('\n', "; ");
        Problem::new(
            e.span().unwrap_or(0..0),
            "",
            format!("TOML syntax error: {message}"),
            syntax_fix,
        )
    })
}

/// The language a file is written in, told by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Toml,
    Yaml,
}

impl Syntax {
    /// `.yaml` and `.yml` files are YAML, every other one TOML.
    pub fn of(file: &str) -> Self {
        if file.ends_with(".yaml") || file.ends_with(".yml") {
            Self::Yaml
        } else {
            Self::Toml
        }
    }

    /// A message or fix worded for TOML, as a file in this syntax says it.
    pub fn words(self, text: &str) -> Cow<'_, str> {
        match self {
            Self::Toml => Cow::Borrowed(text),
            Self::Yaml => wording::yaml(text),
        }
    }
}

/// A document read whole, before its tree is walked: TOML's tree borrows the text, YAML's this value.
pub(crate) enum Document<'i> {
    Toml(Spanned<DeTable<'i>>),
    #[cfg(feature = "yaml")]
    Yaml(yaml::YamlDocument),
}

impl<'i> Document<'i> {
    /// Reads `text` written in `syntax`. `Err` is the problem that stops the reading (a syntax error);
    /// the problems that come with a document are the file's too (YAML's duplicate keys, nulls, ...).
    /// `syntax_fix` says how to correct a TOML syntax error.
    pub fn read(
        text: &'i str,
        syntax: Syntax,
        syntax_fix: &str,
    ) -> Result<(Self, Vec<Problem>), Problem> {
        match syntax {
            Syntax::Toml => toml_root(text, syntax_fix).map(|root| (Self::Toml(root), Vec::new())),
            #[cfg(feature = "yaml")]
            Syntax::Yaml => {
                let (document, problems) = yaml::YamlDocument::read(text)?;
                Ok((Self::Yaml(document), problems))
            }
            #[cfg(not(feature = "yaml"))]
            Syntax::Yaml => Err(Problem::new(
                0..0,
                "",
                "a YAML suite needs the `yaml` feature of prompt-tester",
                "turn the feature on (it is a default one): `prompt-tester = { version = \"0.1\", features = \
                 [\"yaml\"] }` in Cargo.toml, or write the suite in TOML (`.evals.toml`)",
            )),
        }
    }

    /// Whether a problem at `key` only follows from a value the document left out (a YAML null, alias
    /// or tagged value, whose own problem is noted): one at that key or at the mapping or list holding it.
    #[cfg_attr(not(feature = "yaml"), allow(unused_variables))]
    pub fn explains(&self, key: &str) -> bool {
        match self {
            Self::Toml(_) => false,
            #[cfg(feature = "yaml")]
            Self::Yaml(document) => document.left_out.iter().any(|out| {
                let parent = out.rfind(['.', '[']).map_or("", |i| &out[..i]);
                out == key || parent == key
            }),
        }
    }

    /// The top-level table.
    pub fn table<'a>(&'a self) -> Result<Cow<'a, Spanned<DeTable<'a>>>, Problem> {
        match self {
            Self::Toml(root) => Ok(Cow::Borrowed(root)),
            #[cfg(feature = "yaml")]
            Self::Yaml(document) => document.table().map(Cow::Owned),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// How a file's problems name an array of tables whose names must differ.
pub(crate) struct NamedTables {
    /// The key of the array (`cases`).
    pub key: &'static str,
    /// One table (`case`).
    pub each: &'static str,
    /// Its article (`a`).
    pub article: &'static str,
    /// What holds them (`suite`).
    pub owner: &'static str,
}

/// Reads one file: its name, where relative paths start, and the problems found so far.
pub(crate) struct Reader<'a> {
    /// The file as shown.
    file: &'a str,
    /// The file's directory: files it names are relative to it.
    dir: &'a Path,
    /// Problems found.
    pub problems: Vec<Problem>,
    /// What the file says that still works but should change (an old or the other front end's name
    /// for a key), each `file:line: message`.
    pub warnings: Vec<String>,
    /// Byte offset where each line starts: `at` may run once per value, so it must not rescan the
    /// file (that made large files quadratic).
    line_starts: Vec<usize>,
}

impl<'a> Reader<'a> {
    /// A reader of `text`, the content of `file` in `dir`.
    pub fn new(file: &'a str, dir: &'a Path, text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            file,
            dir,
            problems: Vec::new(),
            warnings: Vec::new(),
            line_starts,
        }
    }

    /// Reads `node` as a `T` (a JSON or TOML value); on failure notes a problem `cannot read the
    /// {what}` with `fix` and returns `None`.
    pub fn value<T: serde::de::DeserializeOwned>(
        &mut self,
        node: &Node<'_>,
        key: &str,
        what: &str,
        fix: &str,
    ) -> Option<T> {
        match T::deserialize(toml::de::ValueDeserializer::from(node.clone())) {
            Ok(value) => Some(value),
            Err(e) => {
                self.problem(
                    node.span(),
                    key,
                    format!("cannot read the {what}: {}", e.message()),
                    fix,
                );
                None
            }
        }
    }

    /// Notes a problem.
    pub fn problem(
        &mut self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problems.push(Problem::new(span, key, message, fix));
    }

    /// Notes that `key` holds the wrong type: `expected {expected}, found a string` (or whatever
    /// `node` is).
    pub fn mismatch(&mut self, node: &Node<'_>, key: &str, expected: &str, fix: impl Into<String>) {
        let found = a_type(node.get_ref());
        self.problem(
            node.span(),
            key,
            format!("expected {expected}, found {found}"),
            fix,
        );
    }

    /// `node` as an array, or `None` with the problem `expected {expected}, found …` and `fix`.
    pub fn array<'n, 'i>(
        &mut self,
        node: &'n Node<'i>,
        key: &str,
        expected: &str,
        fix: impl Into<String>,
    ) -> Option<&'n DeArray<'i>> {
        let items = node.get_ref().as_array();
        if items.is_none() {
            self.mismatch(node, key, expected, fix);
        }
        items
    }

    /// [`Reader::array`] for a table.
    pub fn table<'n, 'i>(
        &mut self,
        node: &'n Node<'i>,
        key: &str,
        expected: &str,
        fix: impl Into<String>,
    ) -> Option<&'n DeTable<'i>> {
        let table = node.get_ref().as_table();
        if table.is_none() {
            self.mismatch(node, key, expected, fix);
        }
        table
    }

    /// Notes each key of `table` (at `path`) that is not one of `valid` ([`unknown_key`]).
    pub fn unknown_keys(&mut self, table: &DeTable<'_>, path: &str, valid: &[&str], place: &str) {
        for (k, _) in table.iter() {
            let name = k.get_ref().as_ref();
            if !valid.contains(&name) {
                unknown_key(self, k, &format!("{path}.{name}"), valid, place);
            }
        }
    }

    /// Reads `node`, an array of `[[key]]` tables named as `tables` says, each table with `read` (the
    /// reader, the table, its span and its path `key[i]`). Notes a value that is not such an array, an
    /// element that is not a table, and a table whose `name_of` an earlier one has (it is kept: the
    /// problem fails the file).
    pub fn named_tables<T>(
        &mut self,
        node: &Node<'_>,
        tables: &NamedTables,
        name_of: fn(&T) -> &str,
        mut read: impl FnMut(&mut Self, &DeTable<'_>, Range<usize>, &str) -> Option<T>,
    ) -> Vec<T> {
        let NamedTables {
            key,
            each,
            article,
            owner,
        } = tables;
        let write_each = format!("write each {each} as a `[[{key}]]` table");
        let DeValue::Array(list) = node.get_ref() else {
            self.mismatch(node, key, "an array of tables", write_each);
            return Vec::new();
        };
        let mut read_so_far = Vec::new();
        let mut names = BTreeSet::new();
        for (i, element) in list.iter().enumerate() {
            let path = format!("{key}[{i}]");
            let DeValue::Table(table) = element.get_ref() else {
                self.mismatch(element, &path, "a table", write_each.as_str());
                continue;
            };
            let Some(one) = read(self, table, element.span(), &path) else {
                continue;
            };
            let name = name_of(&one);
            if !names.insert(name.to_string()) {
                let span = table.get("name").map_or(element.span(), |n| n.span());
                self.problem(
                    span,
                    &format!("{path}.name"),
                    format!("{article} {each} named `{name}` already exists in this {owner}"),
                    format!("give every {each} a distinct name"),
                );
            }
            read_so_far.push(one);
        }
        read_so_far
    }

    /// Notes a warning at `span`: `file:line: message`.
    pub fn warn(&mut self, span: &Range<usize>, message: impl fmt::Display) {
        let at = self.at(span);
        self.warnings.push(format!("{at}: {message}"));
    }

    /// `file:line` of a span, for messages about a value that was read well.
    pub fn at(&self, span: &Range<usize>) -> String {
        let line = self
            .line_starts
            .partition_point(|&start| start <= span.start);
        format!("{}:{}", self.file, line.max(1))
    }

    /// A file path relative to the file's directory.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// Whether the file `relative` names is there.
    pub fn is_beside(&self, relative: &str) -> bool {
        self.resolve(relative).is_file()
    }

    /// The text of the file `relative` names (written at `node`) and where it was found; when it
    /// cannot be read, notes `{what} file `{relative}` not found (looked for …)` with `fix`.
    pub fn read_beside(
        &mut self,
        node: &Node<'_>,
        key: &str,
        relative: &str,
        what: &str,
        fix: &str,
    ) -> Option<(String, PathBuf)> {
        self.read_file_beside(node.span(), key, relative, what, fix, crate::text::read)
            .map(|text| (text, self.resolve(relative)))
    }

    /// [`Reader::read_beside`] for a file the document does not name, its problem noted at `span`, and
    /// read by `read` (its text, or its bytes).
    pub fn read_file_beside<T>(
        &mut self,
        span: Range<usize>,
        key: &str,
        relative: &str,
        what: &str,
        fix: &str,
        read: fn(&Path) -> std::io::Result<T>,
    ) -> Option<T> {
        let path = self.resolve(relative);
        match read(&path) {
            Ok(read) => Some(read),
            Err(e) => {
                let why = if e.kind() == std::io::ErrorKind::NotFound {
                    "not found".to_string()
                } else {
                    e.to_string()
                };
                let message = format!(
                    "{what} file `{relative}` {why} (looked for {})",
                    path.display()
                );
                self.problem(span, key, message, fix);
                None
            }
        }
    }
}

/// "a string", "an integer", ... for messages.
pub(crate) fn a_type(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Like [`a_type`], for a value rejected where a non-empty string was allowed: a string there is empty.
pub(crate) fn found(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "an empty string",
        other => a_type(other),
    }
}

/// Reads a string, or notes that `key` needs one (`example` shows a valid value).
pub(crate) fn string(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    example: &str,
) -> Option<String> {
    match node.get_ref() {
        DeValue::String(s) => Some(s.to_string()),
        _ => {
            r.mismatch(node, key, "a string", format!("write `{key} = {example}`"));
            None
        }
    }
}

/// Reads a string that is not blank, or notes that `key` needs one (`example` shows a valid value);
/// a blank one is the problem `empty`, with `fix`.
pub(crate) fn nonblank(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    example: &str,
    empty: &str,
    fix: impl Into<String>,
) -> Option<String> {
    let text = string(r, node, key, example)?;
    if text.trim().is_empty() {
        r.problem(node.span(), key, empty, fix);
        return None;
    }
    Some(text)
}

/// The last key of a key path (`max` of `assert[0].tool_called.max`), as a fix writes it.
pub(crate) fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Reads an integer as i128 (so that any TOML integer fits), or `None` when it is not one.
pub(crate) fn integer(value: &DeValue<'_>) -> Option<i128> {
    match value {
        DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => None,
    }
}

/// Reads a number (integer or float).
pub(crate) fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Float(f) => f.as_str().parse().ok(),
        other => integer(other).map(|i| i as f64),
    }
}

/// Reads a whole number in `min..=max`, or notes the problem.
pub(crate) fn whole(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    min: u64,
    max: u64,
    meaning: &str,
) -> Option<u64> {
    match integer(node.get_ref()) {
        Some(n) if n >= i128::from(min) && n <= i128::from(max) => Some(n as u64),
        Some(n) => {
            let fix = format!("use a whole number from {min} to {max} ({meaning})");
            r.problem(node.span(), key, format!("{n} is out of range"), fix);
            None
        }
        None => {
            let fix = format!("write `{key} = {min}` or more ({meaning})");
            r.mismatch(node, key, "a whole number", fix);
            None
        }
    }
}

/// Reads a number accepted by `ok`, or notes the problem (`allowed` describes the range).
pub(crate) fn real(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    ok: impl Fn(f64) -> bool,
    allowed: &str,
) -> Option<f64> {
    match number(node.get_ref()) {
        Some(x) if x.is_finite() && ok(x) => Some(x),
        Some(x) => {
            let fix = format!("use {allowed}");
            r.problem(node.span(), key, format!("{x} is out of range"), fix);
            None
        }
        None => {
            r.mismatch(node, key, "a number", format!("use {allowed}"));
            None
        }
    }
}

/// A string, or a number, boolean or date-time written as one (versions, input values).
pub(crate) fn scalar_text(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::String(s) => Some(s.to_string()),
        DeValue::Integer(i) => {
            Some(integer(value).map_or_else(|| i.to_string(), |n| n.to_string()))
        }
        DeValue::Float(f) => Some(f.as_str().to_string()),
        DeValue::Boolean(b) => Some(b.to_string()),
        DeValue::Datetime(d) => Some(d.to_string()),
        DeValue::Array(_) | DeValue::Table(_) => None,
    }
}

/// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Notes the key `key` (at `path`) as unknown, suggesting the closest of `valid` (the valid keys
/// `place`, e.g. "in a case").
pub(crate) fn unknown_key(
    r: &mut Reader<'_>,
    key: &Spanned<Cow<'_, str>>,
    path: &str,
    valid: &[&str],
    place: &str,
) {
    let name = key.get_ref().as_ref();
    let hint = match did_you_mean(name, valid.iter().copied()) {
        Some(close) => format!(
            "did you mean `{close}`? Valid keys {place}: {}",
            valid.join(", ")
        ),
        None => format!(
            "remove it, or use one of the valid keys {place}: {}",
            valid.join(", ")
        ),
    };
    r.problem(key.span(), path, format!("unknown key `{name}`"), hint);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // `=` after a two-byte character is the 4th character of line 2.
        assert_eq!(line_column(text, 10), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
    }

    #[test]
    #[cfg(not(feature = "yaml"))]
    fn without_the_yaml_feature_a_yaml_suite_names_the_feature() {
        let Err(problem) = Document::read("prompt: Hi\n", Syntax::Yaml, "") else {
            panic!("read without the feature");
        };
        assert_eq!(
            problem.message,
            "a YAML suite needs the `yaml` feature of prompt-tester"
        );
        assert!(
            problem.fix.contains("features = [\"yaml\"]"),
            "{}",
            problem.fix
        );
    }

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(
            did_you_mean("contain", ["contains", "regex"]),
            Some("contains")
        );
        assert_eq!(
            did_you_mean("promt", ["prompt", "provider"]),
            Some("prompt")
        );
        assert_eq!(did_you_mean("banana", ["contains", "regex"]), None);
    }
}
