//! Why a suite file, a calibration set or a labels file cannot be used, as a typed error: it cannot be
//! read or written, or it has problems, each located by line, column and key. Its `Display` is the failing trial's message: a
//! heading, then for each problem `file:line:column: key: message`, the source line with a caret under
//! the column, and the fix.

use std::fmt;
use std::io;

use super::{Problem, Syntax, line_column};

/// The kind of file, which words the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A `*.evals.toml` / `*.evals.yaml` suite.
    Suite,
    /// A `*.calibration.toml` set.
    CalibrationSet,
    /// A `*.labels.toml` file of labelled judge answers.
    Labels,
}

impl FileKind {
    /// The file as "cannot read the ..." names it.
    fn noun(self) -> &'static str {
        match self {
            Self::Suite => "suite file",
            Self::CalibrationSet => "calibration set",
            Self::Labels => "labels file",
        }
    }

    /// What its problems cost, ending the heading `<file> has N problems; <consequence>:`.
    fn consequence(self) -> &'static str {
        match self {
            Self::Suite => "no case of this suite ran",
            Self::CalibrationSet => "the calibration set did not run",
            Self::Labels => "its labels were not used",
        }
    }
}

/// Why a file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// It is missing, unreadable, or not UTF-8.
    #[error("{file}: cannot read the {}: {source}", kind.noun())]
    Unreadable {
        /// The file as shown.
        file: String,
        /// Its kind.
        kind: FileKind,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// It has problems.
    #[error("{0}")]
    Invalid(Problems),
    /// A labels file (or several, one a line) does not read: it is kept as it is, never written over.
    #[error("{0}\nthe labels file was not rewritten: fix it, then label again")]
    NotRewritten(String),
    /// Writing it failed.
    #[error("cannot write the {} {file}: {source}", kind.noun())]
    Unwritable {
        /// The file as shown.
        file: String,
        /// Its kind.
        kind: FileKind,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl FileError {
    /// The file shown as `file`, of `kind`, read from `path`.
    pub(crate) fn read(path: &std::path::Path, file: &str, kind: FileKind) -> Result<String, Self> {
        crate::text::read(path).map_err(|source| Self::Unreadable {
            file: file.to_string(),
            kind,
            source,
        })
    }

    /// The `problems` of the file shown as `file` whose text is `text`.
    pub(crate) fn invalid(file: &str, kind: FileKind, text: &str, problems: &[Problem]) -> Self {
        let syntax = Syntax::of(file);
        let located = problems
            .iter()
            .map(|p| {
                let (line, column) = line_column(text, p.span.start);
                Located {
                    line,
                    column,
                    key: p.key.clone(),
                    message: syntax.words(&p.message).into_owned(),
                    source_line: text.lines().nth(line - 1).map(str::to_string),
                    fix: syntax.words(&p.fix).into_owned(),
                }
            })
            .collect();
        Self::Invalid(Problems {
            file: file.to_string(),
            kind,
            located,
        })
    }
}

/// The problems of one file, in file order.
#[derive(Debug)]
pub struct Problems {
    /// The file as shown (relative to the crate root).
    pub file: String,
    /// Its kind.
    pub kind: FileKind,
    /// Each problem with where it is.
    pub located: Vec<Located>,
}

/// One problem with its place, in the file's own words (TOML's or YAML's).
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The key path (`cases[0].assert[1]`), or `""` for a syntax error.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// The line of the file it is on, when the file has that line.
    pub source_line: Option<String>,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.located.len();
        writeln!(
            f,
            "{} has {n} problem{}; {}:",
            self.file,
            if n == 1 { "" } else { "s" },
            self.kind.consequence()
        )?;
        for p in &self.located {
            let key = if p.key.is_empty() {
                String::new()
            } else {
                format!(" `{}`:", p.key)
            };
            writeln!(
                f,
                "{}:{}:{}:{key} {}",
                self.file, p.line, p.column, p.message
            )?;
            if let Some(source) = &p.source_line {
                let gutter = p.line.to_string();
                writeln!(f, "{gutter} | {source}")?;
                let pad: String = source
                    .chars()
                    .take(p.column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                writeln!(f, "{} | {pad}^", " ".repeat(gutter.len()))?;
            }
            writeln!(f, "  fix: {}", p.fix)?;
        }
        Ok(())
    }
}
