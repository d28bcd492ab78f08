//! Why the reports cannot be made: a results folder that cannot be read or merged, a baseline or its
//! flags that cannot be used, or `cargo prompt-tester report` with nothing to write. One enum for the
//! module, each variant worded for the user.

use std::path::PathBuf;

use super::baseline::MAX_BASELINE_RUNS;
use super::results::RESULTS_VAR;
use crate::defaults::BASELINE_ALPHA as DEFAULT_ALPHA;

/// Why the reports cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A results folder or fragment cannot be read.
    #[error("{}: {source}", path.display())]
    ResultsUnreadable {
        /// The folder or file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A fragment is not one (or of another format).
    #[error(
        "{}: not a results fragment of this prompt-tester ({why}); run the tests again to write it anew",
        path.display()
    )]
    NotAFragment {
        /// The file.
        path: PathBuf,
        /// serde's message, or the format found.
        why: String,
    },
    /// A folder holds no run.
    #[error(
        "{}: no results in it: name a results folder (`{RESULTS_VAR}`, by default `<crate>/.prompt-tester/results`) \
         or one run's folder inside it, after running the tests",
        path.display()
    )]
    NoResults {
        /// The folder.
        path: PathBuf,
    },
    /// A trial is in two partitions: they are not parts of one run.
    #[error(
        "trial `{trial}` is in two partitions, {} and {}: each trial must be run by one partition \
         (`cargo nextest run --partition hash:K/N`, the same N for every job)",
        first.display(),
        second.display()
    )]
    TrialTwice {
        /// The trial.
        trial: String,
        /// The folder it was found in first.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// The baseline file could not be read.
    #[error("cannot read the baseline {path}: {source}; write one with `{write_one}`")]
    BaselineUnreadable {
        /// The baseline's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
        /// The command that writes a report, for this run's test target.
        write_one: String,
    },
    /// The baseline is not a JSON report with the counts a comparison needs.
    #[error(
        "the baseline {path} is not a prompt-tester JSON report ({message}); write one with `{write_one}`"
    )]
    NotAReport {
        /// The baseline's path.
        path: PathBuf,
        /// serde's words, with the line and column.
        message: String,
        /// The command that writes a report, for this run's test target.
        write_one: String,
    },
    /// A baseline's entry counts more passed than counted; `unit` is what it counts (`runs`, `rows`).
    #[error("{unit}_passed {passed} is more than {unit}_total {total}")]
    PassedOverTotal {
        /// `runs` of an entry, `rows` of a gate.
        unit: &'static str,
        /// Passed.
        passed: u32,
        /// Counted.
        total: u32,
    },
    /// A baseline's entry counts more than a run takes.
    #[error("{unit}_total {total} is more than {MAX_BASELINE_RUNS}, more samples than a run takes")]
    TooManySamples {
        /// `runs` of an entry, `rows` of a gate.
        unit: &'static str,
        /// Counted.
        total: u32,
    },
    /// `--baseline-alpha` (or its variable, `name` as given) is not a number in (0, 1).
    #[error(
        "{name} is {value:?}; it must be a number between 0 and 1 (exclusive), the significance level, e.g. \
         {DEFAULT_ALPHA}"
    )]
    Alpha {
        /// The flag or variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// `--fail-on-regression`'s variable is not on or off.
    #[error("{name} is {value:?}; use 1 or true, 0 or false")]
    Switch {
        /// The flag or variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A setting that means nothing without a baseline.
    #[error(
        "{name} needs a baseline: add --baseline PATH (or PROMPT_TESTER_BASELINE=PATH), a JSON report \
         written by `{write_one}`"
    )]
    NoBaseline {
        /// The flag or variable.
        name: &'static str,
        /// The command that writes a report, for this run's test target.
        write_one: String,
    },
    /// `cargo prompt-tester report` without a report named, and the run asked for none.
    #[error(
        "no report to write: name one (--html PATH, --junit PATH, --report PATH, --markdown PATH), or run \
         the tests with one asked for (--html or PROMPT_TESTER_HTML, ...) and it is written to the same path"
    )]
    NothingAsked,
    /// A JUnit report was asked of a build without the `junit` feature.
    #[error(
        "a JUnit report (--junit, PROMPT_TESTER_JUNIT) needs prompt-tester's `junit` feature (on by \
         default): add \"junit\" to its features in Cargo.toml, or ask for no JUnit report"
    )]
    JunitOff,
    /// A report could not be written (said on stderr).
    #[error("a report could not be written (above)")]
    Unwritten,
}
