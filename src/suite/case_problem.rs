//! Why a suite case or dataset row cannot run: the reason its trial fails with, once, before any call.

use std::fmt;

use super::dataset::{Row, RowProblem};
use crate::config::SamplingProblem;

/// Why a case or row was not built: the failing trial's message, not an error of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseProblem {
    /// A dataset row has problems (a value that cannot be used, an input a placeholder lacks, an
    /// assertion that does not read).
    Row(InvalidRow),
    /// The sampling keys, over the suite's and `[defaults]`, cannot make a plan.
    Sampling {
        /// Where the key to fix was written (`file:line`), or the suite file.
        at: String,
        /// The case's trial name.
        case: String,
        /// `" (with [defaults] in prompt-tester.toml)"` when the key is set in no file of the suite.
        whence: &'static str,
        /// What is wrong.
        problem: SamplingProblem,
    },
}

impl fmt::Display for CaseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaseProblem::Row(row) => write!(f, "{row}"),
            CaseProblem::Sampling {
                at,
                case,
                whence,
                problem,
            } => write!(
                f,
                "{at}: `{}` of case `{case}`{whence}: {problem}",
                problem.key()
            ),
        }
    }
}

/// A dataset row that cannot run, with its problems: shown as `file:line: place: message` and the
/// fix, for each ([`CaseProblem::Row`] carries it).
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidRow {
    /// The dataset file as shown.
    pub file: String,
    /// The row's name.
    pub row: String,
    /// The 1-based line where the row starts.
    pub line: usize,
    /// Its problems, in the order found.
    pub problems: Vec<RowProblem>,
}

impl From<InvalidRow> for CaseProblem {
    fn from(row: InvalidRow) -> Self {
        CaseProblem::Row(row)
    }
}

impl InvalidRow {
    /// The `problems` of `row` of the dataset file shown as `file`.
    pub fn new(file: &str, row: &Row, problems: Vec<RowProblem>) -> Self {
        Self {
            file: file.to_string(),
            row: row.name.clone(),
            line: row.line,
            problems,
        }
    }
}

impl fmt::Display for InvalidRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            file,
            row,
            line,
            problems,
        } = self;
        let n = problems.len();
        write!(
            f,
            "row `{row}` of {file} (line {line}) has {n} problem{}; it did not run:",
            if n == 1 { "" } else { "s" }
        )?;
        for p in problems {
            let place = if p.place.is_empty() {
                String::new()
            } else {
                format!(" {}:", p.place)
            };
            write!(f, "\n{file}:{line}:{place} {}\n  fix: {}", p.message, p.fix)?;
        }
        Ok(())
    }
}
