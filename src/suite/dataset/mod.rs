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

#[cfg(feature = "csv")]
mod csv;
mod jsonl;

#[cfg(feature = "csv")]
use self::csv::csv_rows;
use jsonl::jsonl;

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
pub(super) const NAME_KEYS: [&str; 2] = ["name", "id"];
pub(super) const JSONL_KEYS: [&str; 7] = [
    "name", "id", "category", "skip", "expected", "inputs", "assert",
];
#[cfg_attr(not(feature = "csv"), allow(dead_code))]
pub(super) const CSV_KEYS: [&str; 5] = ["name", "id", "category", "skip", "expected"];

/// Reads a dataset of `format` from its bytes; `file` is how it is shown.
pub fn read(format: Format, file: &str, bytes: &[u8]) -> Result<Dataset, FileProblem> {
    let (rows, version) = match format {
        Format::Jsonl => jsonl(bytes)?,
        Format::Csv => (csv_rows(bytes)?, None),
    };
    // Without a version of its own, the first 12 hex digits of the file's SHA-256.
    let version = version.unwrap_or_else(|| crate::text::sha256_hex(&[bytes], 6));
    Ok(Dataset {
        file: file.to_string(),
        version,
        rows,
    })
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
    } else if name.contains(char::is_control) {
        // libtest prints trial names as they are: an escape would reach the terminal.
        Some("the name contains a control character")
    } else {
        None
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

    /// What is first wrong with `row`.
    fn first_problem(row: &Row) -> &str {
        &row.problems[0].message
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
        assert!(first_problem(&rows[1]).starts_with("not JSON"));
        assert_eq!(rows[2].problems[0].place, "`name`");
        let places: Vec<&str> = rows[3].problems.iter().map(|p| p.place.as_str()).collect();
        assert_eq!(places, ["`skip`", "`extra`"]);
        assert!(first_problem(&rows[4]).contains("only as the first line"));
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
    #[cfg(feature = "csv")]
    fn csv_rows_read_columns_as_inputs() {
        let text = "name,category,expected,skip,city\nparis,geo,Paris,,\"Paris, France\"\nrome,geo,,true,Rome\n";
        let rows = rows(Format::Csv, text);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].line, rows[0].name.as_str()), (2, "paris"));
        assert_eq!(
            rows[0].inputs,
            vec![("city".into(), "Paris, France".into())]
        );
        assert_eq!(rows[0].expected.as_deref(), Some("Paris"));
        assert_eq!(rows[0].skip, None);
        assert_eq!(rows[1].expected, None);
        assert_eq!(rows[1].skip.as_deref(), Some("skipped in the dataset"));
    }

    #[test]
    #[cfg(feature = "csv")]
    fn csv_problems_name_the_line_and_column() {
        let text = "id,expected,q\n,x,y\na::b,x,y\nok,x\n\"multi\nline\",x,y\nlast,x,y\n";
        let rows = rows(Format::Csv, text);
        let got: Vec<(usize, &str)> = rows.iter().map(|r| (r.line, r.name.as_str())).collect();
        assert_eq!(
            got,
            [
                (2, "line_2"),
                (3, "line_3"),
                (4, "line_4"),
                (5, "line_5"),
                (7, "last")
            ]
        );
        assert_eq!(rows[0].problems[0].place, "column 1 (`id`)");
        assert!(first_problem(&rows[1]).contains("`::`"));
        assert!(first_problem(&rows[2]).contains("2 fields; the header has 3"));
    }

    #[test]
    #[cfg(feature = "csv")]
    fn csv_header_problems_are_file_problems() {
        for (text, want) in [
            ("category,q\nx,y\n", "no `name` or `id` column"),
            ("name,id\na,b\n", "both a `name` and an `id`"),
            ("name,q,q\na,b,c\n", "column 3 repeats"),
            ("name,,q\na,b,c\n", "column 2 has no name"),
            ("name,assert\na,b\n", "cannot carry assert"),
            ("", "the file is empty"),
        ] {
            let e = read(Format::Csv, "d", text.as_bytes()).unwrap_err();
            assert_eq!(e.line, 1);
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
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
