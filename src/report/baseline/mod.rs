//! `--baseline PATH`: this run against a previous JSON report. Per test, suite, case, category and gate, the
//! pass rate then and now (from `runs_passed` / `runs_total`), and whether the change is significant by
//! Fisher's exact test, two-sided, at `--baseline-alpha` (no multiple-comparison correction).
//!
//! Both sides are read the same way: the baseline from its file, this run from the JSON report it would
//! write. [`compare`] is pure; the harness prints [`Comparison::render`] and, with
//! `--fail-on-regression`, fails the run on [`Comparison::failure`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ReportError;
use crate::commands::Commands;
use crate::record::TrialRecord;
use crate::stats::Counts;
use crate::stats::fisher;

use crate::defaults::BASELINE_ALPHA as DEFAULT_ALPHA;

/// What a figure is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    /// A `#[prompt_test]` (or another trial that is not a suite case), by trial name.
    Test(String),
    /// A whole suite: every case's samples.
    Suite(String),
    /// A suite case (`case` or `case::run_N`).
    Case {
        /// The suite.
        suite: String,
        /// The case id.
        case: String,
    },
    /// A suite's category: the samples of its cases.
    Category {
        /// The suite.
        suite: String,
        /// The category.
        category: String,
    },
    /// A gate of a suite (`[gate]`): its rows passed of its rows counted.
    Gate {
        /// The suite.
        suite: String,
        /// The gate (`gate`, `gate::category`, with its column in a matrix).
        gate: String,
    },
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Test(name) => write!(f, "test {name}"),
            Subject::Suite(suite) => write!(f, "suite {suite}"),
            Subject::Case { suite, case } => write!(f, "case {suite}::{case}"),
            Subject::Category { suite, category } => write!(f, "category {suite}/{category}"),
            Subject::Gate { suite, gate } => write!(f, "gate {suite}::{gate}"),
        }
    }
}

/// Samples passed of samples taken, per subject: what a report says, for comparing.
pub type Figures = BTreeMap<Subject, Counts>;

/// The parts of a JSON report a comparison reads (see `report::JsonReport`).
#[derive(Deserialize)]
struct ReportCounts {
    suites: Vec<SuiteCounts>,
    tests: Vec<TestCounts>,
}

#[derive(Deserialize)]
struct TestCounts {
    name: String,
    #[serde(flatten)]
    runs: CheckedRuns,
}

#[derive(Deserialize)]
struct SuiteCounts {
    suite: String,
    #[serde(flatten)]
    runs: CheckedRuns,
    cases: Vec<CaseCounts>,
    by_category: BTreeMap<String, CheckedRuns>,
    /// A report from before gates has none.
    #[serde(default)]
    gates: Vec<GateCounts>,
}

/// A gate's rows passed and counted, checked as they are read.
#[derive(Deserialize)]
#[serde(try_from = "GateRows")]
struct GateCounts {
    gate: String,
    rows: Counts,
}

/// A gate's counts as a report writes them.
#[derive(Deserialize)]
struct GateRows {
    gate: String,
    rows_passed: u32,
    rows_total: u32,
}

impl TryFrom<GateRows> for GateCounts {
    type Error = ReportError;

    fn try_from(g: GateRows) -> Result<Self, ReportError> {
        Ok(GateCounts {
            gate: g.gate,
            rows: checked("rows", g.rows_passed, g.rows_total)?,
        })
    }
}

#[derive(Deserialize)]
struct CaseCounts {
    case_id: String,
    #[serde(flatten)]
    runs: CheckedRuns,
}

/// An entry's counts, checked as they are read.
#[derive(Deserialize)]
#[serde(try_from = "RunCounts")]
struct CheckedRuns(Counts);

/// An entry's counts as a report writes them.
#[derive(Deserialize)]
struct RunCounts {
    runs_passed: u32,
    runs_total: u32,
}

/// The most samples one entry of a baseline may count: far more than any run takes, so that a
/// hand-edited or corrupted file is an error rather than hours of arithmetic.
pub(super) const MAX_BASELINE_RUNS: u32 = 10_000_000;

impl TryFrom<RunCounts> for CheckedRuns {
    type Error = ReportError;

    fn try_from(runs: RunCounts) -> Result<Self, ReportError> {
        checked("runs", runs.runs_passed, runs.runs_total).map(CheckedRuns)
    }
}

/// `passed` of `total` as a baseline may hold them.
fn checked(unit: &'static str, passed: u32, total: u32) -> Result<Counts, ReportError> {
    if passed > total {
        return Err(ReportError::PassedOverTotal {
            unit,
            passed,
            total,
        });
    }
    if total > MAX_BASELINE_RUNS {
        return Err(ReportError::TooManySamples { unit, total });
    }
    Ok(Counts::new(passed, total))
}

impl ReportCounts {
    fn figures(self) -> Figures {
        let mut figures = Figures::new();
        for t in self.tests {
            figures.insert(Subject::Test(t.name), t.runs.0);
        }
        for s in self.suites {
            for c in s.cases {
                let (suite, case) = (s.suite.clone(), c.case_id);
                figures.insert(Subject::Case { suite, case }, c.runs.0);
            }
            for g in s.gates {
                let (suite, gate) = (s.suite.clone(), g.gate);
                figures.insert(Subject::Gate { suite, gate }, g.rows);
            }
            for (category, runs) in s.by_category {
                let suite = s.suite.clone();
                figures.insert(Subject::Category { suite, category }, runs.0);
            }
            figures.insert(Subject::Suite(s.suite), s.runs.0);
        }
        figures
    }
}

/// The figures of a JSON report's text.
pub fn figures_of_json(json: &str) -> Result<Figures, serde_json::Error> {
    Ok(serde_json::from_str::<ReportCounts>(json)?.figures())
}

/// The figures of this run, read from the JSON report it would write: the same reader as a baseline's.
pub fn figures_of_records(records: &[TrialRecord]) -> Figures {
    let report = crate::report::json_report(records, "");
    let value = serde_json::to_value(report).expect("a report serializes");
    serde_json::from_value::<ReportCounts>(value)
        .expect("a report has the counts a comparison reads")
        .figures()
}

/// The figures of the baseline at `path`; an error names the command of `commands` that writes one.
pub fn load(path: &Path, commands: &Commands) -> Result<Figures, ReportError> {
    let write_one = || commands.report("PATH");
    let text = crate::text::read(path).map_err(|source| ReportError::BaselineUnreadable {
        path: path.to_path_buf(),
        source,
        write_one: write_one(),
    })?;
    figures_of_json(&text).map_err(|e| ReportError::NotAReport {
        path: path.to_path_buf(),
        message: e.to_string(),
        write_one: write_one(),
    })
}

/// Which way a rate shifted, and whether that is significant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shift {
    /// Lower now, significantly.
    Regression,
    /// Higher now, significantly.
    Improvement,
    /// Different, but the difference could be chance at this alpha.
    NotSignificant,
}

/// One subject's rate then and now.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// What changed.
    pub subject: Subject,
    /// In the baseline.
    pub then: Counts,
    /// In this run.
    pub now: Counts,
    /// Fisher's exact test, two-sided.
    pub p_value: f64,
    /// Regression, improvement, or not significant.
    pub verdict: Shift,
}

/// A run against its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The significance level.
    pub alpha: f64,
    /// Subjects whose rate differs: regressions, then improvements, then the rest, each by p-value.
    pub changes: Vec<Change>,
    /// Subjects with samples on both sides and the same rate.
    pub unchanged: usize,
    /// Subjects with samples in the baseline but none now (not run, filtered out, removed).
    pub baseline_only: usize,
    /// Subjects with samples now but none in the baseline (new).
    pub new: usize,
}

/// Compares `now` with `then` at significance level `alpha`.
pub fn compare(then: &Figures, now: &Figures, alpha: f64) -> Comparison {
    let mut comparison = Comparison {
        alpha,
        changes: Vec::new(),
        unchanged: 0,
        baseline_only: 0,
        new: 0,
    };
    let sampled = |figures: &Figures, subject: &Subject| {
        figures.get(subject).copied().filter(|c| c.total > 0)
    };
    for subject in now.keys().filter(|s| sampled(then, s).is_none()) {
        comparison.new += usize::from(sampled(now, subject).is_some());
    }
    for (subject, &before) in then.iter().filter(|(_, c)| c.total > 0) {
        let Some(after) = sampled(now, subject) else {
            comparison.baseline_only += 1;
            continue;
        };
        // Equal shares (4/5 and 8/10 too): nothing moved.
        if u64::from(before.passed) * u64::from(after.total)
            == u64::from(after.passed) * u64::from(before.total)
        {
            comparison.unchanged += 1;
            continue;
        }
        let p_value = fisher::two_sided(before, after);
        let verdict = if p_value > alpha {
            Shift::NotSignificant
        } else if after.share() < before.share() {
            Shift::Regression
        } else {
            Shift::Improvement
        };
        comparison.changes.push(Change {
            subject: subject.clone(),
            then: before,
            now: after,
            p_value,
            verdict,
        });
    }
    comparison.changes.sort_by(|a, b| {
        (a.verdict, a.p_value)
            .partial_cmp(&(b.verdict, b.p_value))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    comparison
}

/// `4/5 (80%)`.
fn rate(c: Counts) -> String {
    format!("{}/{} ({:.0}%)", c.passed, c.total, c.percent())
}

/// `p = 0.0476`, or `p < 0.0001`.
fn p_value(p: f64) -> String {
    if p < 1e-4 {
        "p < 0.0001".to_string()
    } else {
        format!("p = {p:.4}")
    }
}

impl Comparison {
    /// The significant regressions.
    pub fn regressions(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|c| c.verdict == Shift::Regression)
    }

    /// Why `--fail-on-regression` fails the run, if it does.
    pub fn failure(&self) -> Option<String> {
        let names: Vec<String> = self.regressions().map(|c| c.subject.to_string()).collect();
        (!names.is_empty()).then(|| {
            format!(
                "--fail-on-regression: {} significant regression{} since the baseline ({}); every test may \
                 still pass its threshold, but its pass rate dropped by more than chance explains at p ≤ {}",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                self.alpha
            )
        })
    }

    /// The changes as the HTML report's table: what, then, now, p-value, verdict.
    pub fn table(&self, path: &Path) -> crate::report::table::Table {
        crate::report::table::Table {
            title: format!(
                "Against the baseline {} (Fisher's exact test, two-sided, significant at p ≤ {}; no multiple-comparison correction)",
                path.display(),
                self.alpha
            ),
            columns: ["change", "what", "then", "now", "p"]
                .map(String::from)
                .to_vec(),
            rows: self
                .changes
                .iter()
                .map(|c| {
                    let verdict = match c.verdict {
                        Shift::Regression => "regression",
                        Shift::Improvement => "improvement",
                        Shift::NotSignificant => "not significant",
                    };
                    vec![
                        verdict.to_string(),
                        c.subject.to_string(),
                        rate(c.then),
                        rate(c.now),
                        format!("{:.4}", c.p_value),
                    ]
                })
                .collect(),
        }
    }

    /// The lines the summary prints for a baseline at `path`.
    pub fn render(&self, path: &Path) -> String {
        let count = |v: Shift| self.changes.iter().filter(|c| c.verdict == v).count();
        let (regressions, improvements) = (count(Shift::Regression), count(Shift::Improvement));
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let mut out = format!(
            "\nbaseline {}: {}, {} (Fisher's exact test, two-sided, significant at p ≤ {}; no \
             multiple-comparison correction)\n",
            path.display(),
            plural(regressions, "significant regression"),
            plural(improvements, "significant improvement"),
            self.alpha
        );
        for c in &self.changes {
            let label = match c.verdict {
                Shift::Regression => "REGRESSION ",
                Shift::Improvement => "improvement",
                Shift::NotSignificant => "not signif.",
            };
            out.push_str(&format!(
                "  {label}  {}: {} then, {} now, {}\n",
                c.subject,
                rate(c.then),
                rate(c.now),
                p_value(c.p_value)
            ));
        }
        out.push_str(&format!(
            "  {} compared: {} changed, {} unchanged; not compared: {} in the baseline only, {} new\n",
            self.changes.len() + self.unchanged,
            self.changes.len(),
            self.unchanged,
            self.baseline_only,
            self.new
        ));
        out
    }
}

/// What `--baseline`, `--baseline-alpha` and `--fail-on-regression` (or their variables) ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The baseline report.
    pub path: PathBuf,
    /// The significance level, in (0, 1).
    pub alpha: f64,
    /// Whether a significant regression fails the run.
    pub fail_on_regression: bool,
}

/// Where a value came from, to name it in an error.
pub type Source = (&'static str, String);

/// The settings from the flags' values, each `(flag or variable name, value)`; `None` without a
/// baseline. `alpha` and `fail_on_regression` without a baseline are errors: they would do nothing
/// (naming the command of `commands` that writes a baseline).
pub fn settings(
    path: Option<Source>,
    alpha: Option<Source>,
    fail_on_regression: Option<Source>,
    commands: &Commands,
) -> Result<Option<Settings>, ReportError> {
    let alpha_value = alpha
        .as_ref()
        .map(|(name, value)| parse_alpha(name, value))
        .transpose()?;
    let fail = fail_on_regression
        .as_ref()
        .map(|(name, value)| parse_switch(name, value))
        .transpose()?;
    let Some((_, path)) = path else {
        let stray = [
            alpha.map(|(n, _)| n),
            fail.filter(|f| *f).and(fail_on_regression.map(|(n, _)| n)),
        ];
        return match stray.into_iter().flatten().next() {
            Some(name) => Err(ReportError::NoBaseline {
                name,
                write_one: commands.report("PATH"),
            }),
            None => Ok(None),
        };
    };
    Ok(Some(Settings {
        path: PathBuf::from(path),
        alpha: alpha_value.unwrap_or(DEFAULT_ALPHA),
        fail_on_regression: fail.unwrap_or(false),
    }))
}

/// A significance level in (0, 1).
fn parse_alpha(name: &'static str, value: &str) -> Result<f64, ReportError> {
    match value.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(ReportError::Alpha {
            name,
            value: value.to_string(),
        }),
    }
}

/// An on/off value: `1`/`true` or `0`/`false` (a flag without a value is `1`).
fn parse_switch(name: &'static str, value: &str) -> Result<bool, ReportError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(ReportError::Switch {
            name,
            value: value.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests;
