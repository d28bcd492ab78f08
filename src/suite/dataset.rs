//! Golden datasets: a suite's `cases_file`, JSON Lines or CSV, read into rows.
//!
//! Reading is cheap on purpose (names, categories and the raw fields of every row): a row's
//! assertions and placeholders are worked out only when its trial is built (`rows.rs`), so that
//! `--exact suite::case` and listing stay fast on thousands of rows. A problem with one row is kept
//! with the row (it becomes that row's failing trial); only a problem with the file as a whole (no
//! name column, a bad metadata line) is returned as an error, for the suite's error trial.

use std::fmt;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The CSV reader (the `csv` feature).
#[cfg(feature = "csv")]
mod csv_file;
#[cfg(feature = "csv")]
use csv_file::rows as csv_rows;

/// The file formats a dataset may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON Lines: one object per line, an optional metadata line first.
    Jsonl,
    /// CSV with a header row.
    Csv,
}

impl Format {
    /// The format of a file, from its extension (`.jsonl`, `.ndjson`, `.csv`).
    pub fn of(path: &str) -> Option<Format> {
        let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "jsonl" | "ndjson" => Some(Format::Jsonl),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// A dataset read from its file.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The file as shown (relative to the crate root).
    pub file: String,
    /// The metadata line's `dataset_version`, else the first 12 hex digits of the file's SHA-256.
    pub version: String,
    /// The rows, in file order.
    pub rows: Vec<Row>,
}

/// One row of a dataset.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// The 1-based physical line where the row starts (a CSV header is line 1).
    pub line: usize,
    /// Its `name` or `id`; `line_N` when it has none that can be used.
    pub name: String,
    /// Its category.
    pub category: Option<String>,
    /// Why it is skipped, if it is.
    pub skip: Option<String>,
    /// The expected answer, for `{expected}` in assertions.
    pub expected: Option<String>,
    /// The input values, in file order.
    pub inputs: Vec<(String, String)>,
    /// Its own assertions (JSON Lines only), read when the row's trial is built.
    pub asserts: Option<Value>,
    /// What is wrong with the row: non-empty, it becomes a failing trial.
    pub problems: Vec<RowProblem>,
}

impl Row {
    /// The trial-name fallback of a row without a usable name.
    pub fn line_name(line: usize) -> String {
        format!("line_{line}")
    }
}

/// A problem with one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowProblem {
    /// Where in the row: "`key`" (JSON Lines), "column N (`name`)" (CSV), or empty for the whole row.
    pub place: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl RowProblem {
    /// A problem at `place` (see [`RowProblem::place`]).
    pub fn new(
        place: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            place: place.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// The failing trial's message for a row with problems: `file:line: place: message` and the fix,
/// for each.
pub fn row_report(file: &str, row: &Row, problems: &[RowProblem]) -> String {
    let n = problems.len();
    let mut text = format!(
        "row `{}` of {file} (line {}) has {n} problem{}; it did not run:",
        row.name,
        row.line,
        if n == 1 { "" } else { "s" }
    );
    for p in problems {
        let place = if p.place.is_empty() {
            String::new()
        } else {
            format!(" {}:", p.place)
        };
        text.push_str(&format!(
            "\n{file}:{}:{place} {}\n  fix: {}",
            row.line, p.message, p.fix
        ));
    }
    text
}

/// A problem with the dataset file as a whole: no row can be read.
#[derive(Debug, Clone, PartialEq)]
pub struct FileProblem {
    /// The 1-based line it is on.
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Keys a row may have besides its inputs.
const NAME_KEYS: [&str; 2] = ["name", "id"];
const JSONL_KEYS: [&str; 7] = [
    "name", "id", "category", "skip", "expected", "inputs", "assert",
];

/// Reads a dataset of `format` from its bytes; `file` is how it is shown.
pub fn read(format: Format, file: &str, bytes: &[u8]) -> Result<Dataset, FileProblem> {
    let (rows, version) = match format {
        Format::Jsonl => jsonl(bytes)?,
        Format::Csv => (csv_rows(bytes)?, None),
    };
    let version = version.unwrap_or_else(|| short_sha256(bytes));
    Ok(Dataset {
        file: file.to_string(),
        version,
        rows,
    })
}

/// The first 12 hex digits of the SHA-256 of `bytes`.
pub fn short_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The problem with a case or row name, if any (the trial is `<suite>::<name>`).
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("the name is empty")
    } else if name.contains("::") {
        Some("the name contains `::`")
    } else if name.trim() != name {
        Some("the name has leading or trailing spaces")
    } else if name.contains(['\n', '\r']) {
        Some("the name contains a line break")
    } else {
        None
    }
}

/// A JSON scalar as text (strings as they are, numbers and booleans as written), else `None`.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// serde_json's message without its position (the line is the file's, not the one-line text's).
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&at).unwrap_or(&text).to_string()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The rows of a JSON Lines file and the version its metadata line gives, if it has one.
fn jsonl(bytes: &[u8]) -> Result<(Vec<Row>, Option<String>), FileProblem> {
    let mut rows = Vec::new();
    let mut version = None;
    let mut first = true;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let Ok(text) = std::str::from_utf8(raw) else {
            rows.push(Row {
                line,
                name: Row::line_name(line),
                problems: vec![RowProblem::new(
                    "",
                    "the line is not valid UTF-8",
                    "save the file as UTF-8",
                )],
                ..Row::default()
            });
            first = false;
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                rows.push(Row {
                    line,
                    name: Row::line_name(line),
                    problems: vec![RowProblem::new(
                        format!("column {}", e.column()),
                        format!("not JSON: {}", json_error(&e)),
                        "write each row as one JSON object on one line: {\"name\": \"...\", \"expected\": \"...\", ...}",
                    )],
                    ..Row::default()
                });
                first = false;
                continue;
            }
        };
        let is_meta = value.get("dataset_version").is_some()
            && NAME_KEYS.iter().all(|k| value.get(k).is_none());
        if is_meta && first {
            version = Some(metadata(&value, line)?);
            first = false;
            continue;
        }
        first = false;
        rows.push(jsonl_row(value, line, is_meta));
    }
    Ok((rows, version))
}

/// The `dataset_version` of the metadata line.
fn metadata(value: &Value, line: usize) -> Result<String, FileProblem> {
    let fix = "write the metadata line as {\"dataset_version\": \"2025-06\"} (optionally with \"description\")";
    if let Value::Object(map) = value
        && let Some(key) = map
            .keys()
            .find(|k| *k != "dataset_version" && *k != "description")
    {
        return Err(FileProblem {
            line,
            message: format!("unknown key `{key}` in the metadata line"),
            fix: fix.into(),
        });
    }
    match value.get("dataset_version").and_then(scalar) {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(FileProblem {
            line,
            message: "`dataset_version` must be a non-empty string or a number".into(),
            fix: fix.into(),
        }),
    }
}

/// One JSON Lines row (`misplaced_meta`: a metadata line that is not the first line).
fn jsonl_row(value: Value, line: usize, misplaced_meta: bool) -> Row {
    let mut row = Row {
        line,
        name: Row::line_name(line),
        ..Row::default()
    };
    let Value::Object(map) = value else {
        row.problems.push(RowProblem::new(
            "",
            format!("expected a JSON object, found {}", json_type(&value)),
            "write each row as {\"name\": \"...\", \"expected\": \"...\", ...}",
        ));
        return row;
    };
    if misplaced_meta {
        row.problems.push(RowProblem::new(
            "`dataset_version`",
            "a metadata line is read only as the first line of the file",
            "move {\"dataset_version\": \"...\"} to the first line, or give this row a `name`",
        ));
        return row;
    }
    let mut problem = |place: &str, message: String, fix: &str| {
        row.problems
            .push(RowProblem::new(format!("`{place}`"), message, fix))
    };
    let mut name = None;
    match (map.get("name"), map.get("id")) {
        (Some(_), Some(_)) => problem(
            "id",
            "the row has both `name` and `id`".into(),
            "keep one of them: it names the trial `<suite>::<name>`",
        ),
        (None, None) => problem(
            "name",
            "the row has no `name` or `id`".into(),
            "add \"name\": \"...\" (the trial is `<suite>::<name>`)",
        ),
        (Some(v), None) | (None, Some(v)) => {
            let key = if map.contains_key("name") {
                "name"
            } else {
                "id"
            };
            match scalar(v).filter(|_| !v.is_boolean()) {
                Some(n) => match name_problem(&n) {
                    None => name = Some(n),
                    Some(why) => problem(
                        key,
                        format!("{n:?} is not a usable name: {why}"),
                        "use a non-empty name without `::` and without leading or trailing spaces",
                    ),
                },
                None => problem(
                    key,
                    format!("expected a string or a number, found {}", json_type(v)),
                    "write \"name\": \"...\"",
                ),
            }
        }
    }
    let mut optional_text = |key: &str, fix: &str| match map.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => {
            let text = scalar(v);
            if text.is_none() {
                problem(
                    key,
                    format!("expected a string, found {}", json_type(v)),
                    fix,
                );
            }
            text
        }
    };
    let category = optional_text("category", "write \"category\": \"billing\"");
    let expected = optional_text(
        "expected",
        "write \"expected\": \"...\" (text, a number or a boolean)",
    );
    let skip = match map.get("skip") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("skipped in the dataset".to_string()),
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(other) => {
            problem(
                "skip",
                format!(
                    "expected the reason as a string, found {}",
                    json_type(other)
                ),
                "write \"skip\": \"why it is skipped\" (or true)",
            );
            None
        }
    };
    let mut inputs = Vec::new();
    let mut input = |key: &str, place: String, value: &Value| match scalar(value) {
        Some(text) => inputs.push((key.to_string(), text)),
        None => problem(
            &place,
            format!("expected a string, found {}", json_type(value)),
            "write the value as text (it is pasted into the prompt; JSON can be written as a string)",
        ),
    };
    match map.get("inputs") {
        Some(Value::Object(values)) => {
            for (key, value) in values {
                input(key, format!("inputs.{key}"), value);
            }
            for key in map.keys().filter(|k| !JSONL_KEYS.contains(&k.as_str())) {
                problem(
                    key,
                    format!("unknown key `{key}` in a row that has an `inputs` object"),
                    &format!(
                        "move it into `inputs`, or remove it (the keys of a row are {})",
                        JSONL_KEYS.join(", ")
                    ),
                );
            }
        }
        Some(other) => problem(
            "inputs",
            format!("expected an object, found {}", json_type(other)),
            "write \"inputs\": {\"name\": \"value\", ...}, or the inputs as keys of the row",
        ),
        None => {
            for (key, value) in map
                .iter()
                .filter(|(k, _)| !JSONL_KEYS.contains(&k.as_str()))
            {
                input(key, key.clone(), value);
            }
        }
    }
    let asserts = match map.get("assert") {
        None => None,
        Some(v @ (Value::Array(_) | Value::Object(_))) => Some(v.clone()),
        Some(other) => {
            problem(
                "assert",
                format!(
                    "expected an array of assertions, found {}",
                    json_type(other)
                ),
                "write \"assert\": [{\"contains\": \"...\"}, {\"max_words\": 50}]",
            );
            None
        }
    };
    if let (Some(name), true) = (name, row.problems.is_empty()) {
        row.name = name;
    }
    Row {
        category,
        skip,
        expected,
        inputs,
        asserts,
        ..row
    }
}

/// Without the `csv` feature a CSV dataset cannot be read: the suite says which feature it needs.
#[cfg(not(feature = "csv"))]
fn csv_rows(_bytes: &[u8]) -> Result<Vec<Row>, FileProblem> {
    Err(FileProblem {
        line: 1,
        message: "a `.csv` dataset needs the `csv` feature of prompt-tester".into(),
        fix: "turn the feature on (it is a default one): `prompt-tester = { version = \"0.1\", features = \
              [\"csv\"] }` in Cargo.toml, or save the dataset as JSON Lines (`.jsonl`)"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(format: Format, text: &str) -> Vec<Row> {
        read(format, "d", text.as_bytes()).unwrap().rows
    }

    #[test]
    fn jsonl_rows_read_names_fields_and_inputs() {
        let text = "{\"dataset_version\": \"2025-06\"}\n\n{\"id\": 7, \"category\": \"geo\", \"expected\": \"Paris\", \"country\": \"France\", \"n\": 2}\n{\"name\": \"b\", \"inputs\": {\"country\": \"Italy\"}, \"skip\": \"later\", \"assert\": [{\"contains\": \"Rome\"}]}\n";
        let d = read(Format::Jsonl, "d", text.as_bytes()).unwrap();
        assert_eq!(d.version, "2025-06");
        let [a, b] = d.rows.as_slice() else {
            panic!("{:?}", d.rows)
        };
        assert_eq!((a.line, a.name.as_str()), (3, "7"));
        assert_eq!(a.category.as_deref(), Some("geo"));
        assert_eq!(a.expected.as_deref(), Some("Paris"));
        assert_eq!(
            a.inputs,
            vec![
                ("country".into(), "France".into()),
                ("n".into(), "2".into())
            ]
        );
        assert_eq!((b.line, b.name.as_str()), (4, "b"));
        assert_eq!(b.skip.as_deref(), Some("later"));
        assert_eq!(b.inputs, vec![("country".into(), "Italy".into())]);
        assert!(b.asserts.is_some());
        assert!(a.problems.is_empty() && b.problems.is_empty());
    }

    #[test]
    fn without_metadata_the_version_is_the_file_hash() {
        let text = "{\"name\": \"a\"}\n";
        let d = read(Format::Jsonl, "d", text.as_bytes()).unwrap();
        // printf '{"name": "a"}\n' | sha256sum
        assert_eq!(d.version, "8699e8390abb");
    }

    #[test]
    fn bad_jsonl_rows_keep_their_line_and_the_others_read() {
        let text = "{\"name\": \"a\"}\nnot json\n{\"category\": \"x\"}\n{\"name\": \"c\", \"skip\": 3, \"inputs\": {\"q\": \"x\"}, \"extra\": 1}\n{\"dataset_version\": \"2\"}\n";
        let rows = rows(Format::Jsonl, text);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "line_2", "line_3", "line_4", "line_5"]);
        assert!(rows[0].problems.is_empty());
        assert!(rows[1].problems[0].message.starts_with("not JSON"));
        assert_eq!(rows[2].problems[0].place, "`name`");
        let places: Vec<&str> = rows[3].problems.iter().map(|p| p.place.as_str()).collect();
        assert_eq!(places, ["`skip`", "`extra`"]);
        assert!(
            rows[4].problems[0]
                .message
                .contains("only as the first line")
        );
    }

    #[test]
    fn a_bad_metadata_line_is_a_file_problem() {
        let e = read(
            Format::Jsonl,
            "d",
            b"{\"dataset_version\": \"1\", \"owner\": \"x\"}\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("unknown key `owner`"), "{e}");
    }

    #[test]
    #[cfg(not(feature = "csv"))]
    fn without_the_csv_feature_a_csv_dataset_names_the_feature() {
        let e = read(Format::Csv, "d", b"name,q\na,b\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert_eq!(
            e.message,
            "a `.csv` dataset needs the `csv` feature of prompt-tester"
        );
        assert!(e.fix.contains("features = [\"csv\"]"), "{}", e.fix);
    }
}
