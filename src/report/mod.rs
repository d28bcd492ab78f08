//! A run's results and everything rendered from them alone. `results` keeps each process's fragment
//! and merges them; `render::render` is the one pipeline that the end of a `cargo test` run and
//! `cargo prompt-tester report` both call: the stderr summary (`summary`, `matrix`), the baseline
//! comparison (`baseline`), JUnit XML (`--junit PATH` or `PROMPT_TESTER_JUNIT`), the JSON suite report
//! (`--report PATH` or `PROMPT_TESTER_REPORT`, this file), the HTML page (`html`) and the Markdown
//! summary for a pull request ([`markdown`]). It reads nothing of the harness.
//!
//! Every file is redacted (API keys never reach a file) and written atomically: a temporary file beside
//! the target, renamed over it, so a reader never sees half a report.
//!
//! The JSON report has one entry per suite in the golden-dataset shape (`prompt_id`, `prompt_version`,
//! `dataset_version`, `timestamp`, `pass_rate`, `passed`, `total`, `by_category`, `failures`), then the
//! `#[prompt_test]` functions under `tests`, then `totals`. A gated suite's entry counts its rows as its
//! cases, and lists its gates under `gates`.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::budget::BudgetReport;
use crate::calibration::after_run::CalibrationReport;
use crate::case::SuiteInfo;
use crate::record::{SampleRecord, Status, TrialRecord};
use crate::redact::redact;
use crate::shared::replace;
use crate::stats::Counts;
use crate::usage::Usage;

pub(crate) mod baseline;
mod error;
mod gates;
pub(crate) mod html;
#[cfg(feature = "junit")]
mod junit;
pub(crate) mod markdown;
pub mod matrix;
pub(crate) mod pending;
pub(crate) mod render;
pub(crate) mod results;
pub(crate) mod summary;
pub(crate) mod table;

pub use error::ReportError;

#[cfg(feature = "junit")]
pub use junit::write_junit;

/// The category of cases that name none.
pub const UNCATEGORIZED: &str = "uncategorized";

/// A pass rate and its 95% Wilson interval, as the reports write them; all `null` without samples.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Rate {
    /// `passed / total`.
    pub pass_rate: Option<f64>,
    /// The interval's lower end.
    pub ci_low: Option<f64>,
    /// The interval's upper end.
    pub ci_high: Option<f64>,
}

impl Rate {
    /// The rate and interval of `counts`.
    pub fn of(counts: Counts) -> Self {
        let interval = counts.interval();
        Self {
            pass_rate: counts.share(),
            ci_low: interval.map(|i| i.low),
            ci_high: interval.map(|i| i.high),
        }
    }
}

/// Trials as counts: `passed` of `total` (sizes of a suite's or a category's case list).
fn trial_counts(passed: usize, total: usize) -> Counts {
    let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    Counts::new(n(passed), n(total))
}

/// Samples that passed and were taken, summed over trials.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Runs {
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples taken.
    pub runs_total: u32,
}

impl Runs {
    fn add(&mut self, counts: Counts) {
        self.runs_passed += counts.passed;
        self.runs_total += counts.total;
    }
}

/// The JSON report.
#[derive(Debug, Serialize)]
pub struct JsonReport {
    /// When the report was written (RFC 3339, UTC).
    pub timestamp: String,
    /// One entry per suite, by name.
    pub suites: Vec<SuiteReport>,
    /// The `#[prompt_test]` functions (and other trials that are not suite cases).
    pub tests: Vec<TestReport>,
    /// Totals over every trial.
    pub totals: Totals,
    /// The model / prompt-variant matrix, when a trial sits in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<crate::report::matrix::Matrix>,
    /// The judge's calibration, when a calibration set exists (see `src/guide/calibration.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<crate::calibration::after_run::CalibrationReport>,
    /// The run's budget and what was spent against it, under `--budget`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
}

/// A trial that is not a suite case: its record, with its rate and interval.
#[derive(Debug, Serialize)]
pub struct TestReport {
    /// The trial (`runs_passed` and `runs_total` among its fields).
    #[serde(flatten)]
    pub record: TrialRecord,
    /// Its samples' pass rate and interval.
    #[serde(flatten)]
    pub rate: Rate,
}

/// One suite, in the golden-dataset shape.
#[derive(Debug, Serialize)]
pub struct SuiteReport {
    /// The suite's name and file, the prompt's id and version, the dataset's version.
    #[serde(flatten)]
    pub suite: SuiteInfo,
    /// When the report was written.
    pub timestamp: String,
    /// `passed / total` and its interval; `null` when no case ran.
    #[serde(flatten)]
    pub rate: Rate,
    /// Trials that passed.
    pub passed: usize,
    /// Trials that errored (counted in `total`, not in `passed`).
    pub errors: usize,
    /// Trials that ran (passed, failed or errored; skipped and unavailable ones are not counted).
    pub total: usize,
    /// Trials ignored (skipped cases, no recording and no key).
    pub skipped: usize,
    /// Samples passed and taken over every case.
    #[serde(flatten)]
    pub runs: Runs,
    /// Pass rate and count per category.
    pub by_category: BTreeMap<String, CategoryReport>,
    /// Every trial of the suite and how it ended.
    pub cases: Vec<CaseStatus>,
    /// One entry per failed or errored trial.
    pub failures: Vec<FailureReport>,
    /// Why the suite file could not be used, if it could not (it then counts as one failure).
    pub error: Option<String>,
    /// Calls, tokens and cost of the suite.
    pub usage: Usage,
    /// The pass rate corrected for the judge's measured errors, when the suite asked the judge and the
    /// judge in use has a calibration result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_corrected: Option<crate::calibration::after_run::JudgeCorrected>,
    /// The pass rate corrected by labels drawn at random (`cargo prompt-tester label --random`): the
    /// prediction-powered estimate, when the suite has such labels on at least two samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_corrected: Option<crate::calibration::corrected::LabelCorrected>,
    /// Its gates (`[gate]`), when its rows are judged as a whole; the rows are its `cases`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<gates::GateReport>,
}

/// Pass rate and count of one category.
#[derive(Debug, Default, Serialize)]
pub struct CategoryReport {
    /// `passed / count` and its interval.
    #[serde(flatten)]
    pub rate: Rate,
    /// Trials of the category that passed.
    pub passed: usize,
    /// Trials of the category that ran.
    pub count: usize,
    /// Samples passed and taken over the category's cases.
    #[serde(flatten)]
    pub runs: Runs,
}

/// How one trial of a suite ended.
#[derive(Debug, Clone, Serialize)]
pub struct CaseStatus {
    /// The case (`case` or `case::run_N`).
    pub case_id: String,
    /// Its category.
    pub category: String,
    /// `passed`, `failed`, `errored` or `ignored`.
    pub status: Status,
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples taken.
    pub runs_total: u32,
    /// The samples' pass rate and interval.
    #[serde(flatten)]
    pub rate: Rate,
    /// Each sample: output, assertions, judge answers (listed once, here, not again under `failures`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<SampleRecord>,
}

/// One failed or errored trial of a suite.
#[derive(Debug, Serialize)]
pub struct FailureReport {
    /// The trial (`case` or `case::run_N`), its category, and `failed` or `errored`.
    #[serde(flatten)]
    pub case: CaseStatus,
    /// The failure message.
    pub failure_reason: String,
    /// The output of the first failed run, shortened.
    pub output_preview: Option<String>,
}

/// Totals over every trial.
#[derive(Debug, Default, Serialize)]
pub struct Totals {
    /// Trials that passed.
    pub passed: usize,
    /// Trials that failed.
    pub failed: usize,
    /// Trials that errored.
    pub errors: usize,
    /// Trials ignored.
    pub ignored: usize,
    /// Trials that ran: passed, failed and errored.
    pub total: usize,
    /// Calls, tokens and cost.
    pub usage: Usage,
}

/// Builds the JSON report of `records`, stamped `timestamp`.
pub fn json_report(records: &[TrialRecord], timestamp: &str) -> JsonReport {
    let mut suites: BTreeMap<String, SuiteReport> = BTreeMap::new();
    let mut tests = Vec::new();
    let mut totals = Totals::default();
    // The rows a suite's gates judged, once each however many gates count them.
    let mut seen_rows = std::collections::BTreeSet::new();
    for r in records {
        totals.usage += &r.usage;
        match r.status {
            Status::Passed => totals.passed += 1,
            Status::Failed => totals.failed += 1,
            Status::Errored => totals.errors += 1,
            Status::Ignored | Status::LiveOnly => totals.ignored += 1,
        }
        totals.total += usize::from(!matches!(r.status, Status::Ignored | Status::LiveOnly));
        let message = r.message.as_deref().map(|m| redact(m).into_owned());
        let preview = r.output_preview.as_deref().map(|p| redact(p).into_owned());
        let Some(case) = &r.case else {
            let mut r = r.clone();
            r.message = message;
            r.output_preview = preview;
            tests.push(TestReport {
                rate: Rate::of(r.counts()),
                record: r,
            });
            continue;
        };
        let suite = suites
            .entry(case.suite.name.clone())
            .or_insert_with(|| SuiteReport {
                suite: case.suite.clone(),
                timestamp: timestamp.to_string(),
                rate: Rate::default(),
                passed: 0,
                errors: 0,
                total: 0,
                skipped: 0,
                runs: Runs::default(),
                by_category: BTreeMap::new(),
                cases: Vec::new(),
                failures: Vec::new(),
                error: None,
                usage: Usage::default(),
                judge_corrected: None,
                label_corrected: None,
                gates: Vec::new(),
            });
        suite.usage += &r.usage;
        if let Some(gate) = &r.gate {
            gates::add(suite, r, gate, &mut seen_rows);
            continue;
        }
        // A run trial's case id keeps its `::run_N`, so that each failure names the trial to re-run.
        let case_id = r
            .name
            .strip_prefix(&format!("{}::", case.suite.name))
            .unwrap_or(&r.name)
            .to_string();
        add_case(
            suite,
            CaseEntry {
                case_id,
                category: case.category.clone(),
                status: r.status.clone(),
                counts: r.counts(),
                samples: &r.samples,
                message,
                preview,
            },
        );
    }
    for suite in suites.values_mut() {
        gates::count_skipped(suite);
    }
    for suite in suites.values_mut() {
        suite.rate = Rate::of(trial_counts(suite.passed, suite.total));
        for c in suite.by_category.values_mut() {
            c.rate = Rate::of(trial_counts(c.passed, c.count));
        }
    }
    JsonReport {
        timestamp: timestamp.to_string(),
        suites: suites.into_values().collect(),
        tests,
        totals,
        matrix: crate::report::matrix::compute(records),
        calibration: None,
        budget: None,
    }
}

/// One case of a suite as the report counts it: a trial, or a row of a gate.
pub(super) struct CaseEntry<'a> {
    /// The case (`case`, `case::run_N`, `row[column]`).
    pub case_id: String,
    /// Its category.
    pub category: Option<String>,
    /// How it ended.
    pub status: Status,
    /// Samples passed of samples taken.
    pub counts: Counts,
    /// Its samples.
    pub samples: &'a [SampleRecord],
    /// Why it did not pass, redacted.
    pub message: Option<String>,
    /// Its output preview, redacted.
    pub preview: Option<String>,
}

/// Counts `entry` in `suite`: its case list, its rate, `by_category`, and its failures.
pub(super) fn add_case(suite: &mut SuiteReport, entry: CaseEntry<'_>) {
    let CaseEntry {
        case_id,
        category,
        status,
        counts,
        samples,
        message,
        preview,
    } = entry;
    let category = category.unwrap_or_else(|| UNCATEGORIZED.to_string());
    let status = CaseStatus {
        case_id,
        category,
        status,
        runs_passed: counts.passed,
        runs_total: counts.total,
        rate: Rate::of(counts),
        samples: Vec::new(),
    };
    suite.cases.push(CaseStatus {
        samples: samples.to_vec(),
        ..status.clone()
    });
    if matches!(status.status, Status::Ignored | Status::LiveOnly) {
        suite.skipped += 1;
        return;
    }
    let passed = status.status == Status::Passed;
    suite.total += 1;
    suite.passed += usize::from(passed);
    suite.errors += usize::from(status.status == Status::Errored);
    suite.runs.add(counts);
    let entry = suite
        .by_category
        .entry(status.category.clone())
        .or_default();
    entry.count += 1;
    entry.passed += usize::from(passed);
    entry.runs.add(counts);
    if !passed {
        let broken = counts.total == 0;
        if broken {
            suite.error = message.clone();
        }
        suite.failures.push(FailureReport {
            case: status,
            failure_reason: message.unwrap_or_default(),
            output_preview: preview,
        });
    }
}

/// Writes the JSON suite report, with the calibration and the run's budget when there are some.
pub fn write_json(
    path: &Path,
    records: &[TrialRecord],
    calibration: Option<&CalibrationReport>,
    labels: &crate::calibration::corrected::Labels,
    budget: Option<BudgetReport>,
) -> std::io::Result<()> {
    let mut report = json_report(records, &crate::cassette::now_rfc3339());
    if let Some(calibration) = calibration {
        annotate(&mut report, calibration);
    }
    let mut corrected = crate::calibration::corrected::corrected(records, labels);
    for suite in &mut report.suites {
        suite.label_corrected = corrected.remove(&suite.suite.name);
    }
    report.budget = budget;
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
    replace(path, redact(&json).as_bytes())
}

/// Adds the calibration section and each judged suite's corrected pass rate to the JSON report.
fn annotate(report: &mut JsonReport, calibration: &CalibrationReport) {
    for suite in &mut report.suites {
        if suite.usage.judge.calls > 0 && suite.total > 0 {
            suite.judge_corrected = crate::calibration::after_run::correct(
                calibration,
                suite.passed as u32,
                suite.total as u32,
            );
        }
    }
    report.calibration = Some(calibration.clone());
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::case::{CaseInfo, SuiteInfo};

    /// A record of `passed` of `total` samples (shared with the JUnit tests).
    pub(super) fn record(name: &str, status: Status, passed: u32, total: u32) -> TrialRecord {
        TrialRecord {
            runs_passed: passed,
            runs_total: total,
            runs_required: total,
            ..TrialRecord::unrun(name.into(), status, "why", None)
        }
    }

    fn case(name: &str, category: &str, status: Status, passed: u32, total: u32) -> TrialRecord {
        TrialRecord {
            case: Some(CaseInfo {
                suite: SuiteInfo {
                    name: "s".into(),
                    file: "prompt-tests/s.evals.toml".into(),
                    prompt_id: "s".into(),
                    prompt_version: None,
                    dataset_version: None,
                },
                case: name.into(),
                category: Some(category.into()),
            }),
            ..record(&format!("s::{name}"), status, passed, total)
        }
    }

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// The report's shape: every test, case, category and suite carries its counts, its rate and the
    /// rate's 95% interval (`null` where nothing ran), passing ones included.
    #[test]
    fn every_rate_carries_its_counts_and_interval() {
        let records = [
            record("t", Status::Passed, 4, 5),
            case("a", "c", Status::Passed, 4, 5),
            case("b", "c", Status::Failed, 1, 5),
            case("z", "d", Status::Ignored, 0, 0),
        ];
        let report = serde_json::to_value(json_report(&records, "T")).unwrap();
        let (low, high) = (0.3755346297625253, 0.9637758913675698);
        let close = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-12;

        let test = &report["tests"][0];
        assert_eq!(test["name"], "t");
        assert_eq!(
            (&test["runs_passed"], &test["runs_total"]),
            (&json!(4), &json!(5))
        );
        assert!(
            close(&test["pass_rate"], 0.8)
                && close(&test["ci_low"], low)
                && close(&test["ci_high"], high)
        );

        let suite = &report["suites"][0];
        let case_a = &suite["cases"][0];
        assert_eq!(
            keys(case_a),
            [
                "case_id",
                "category",
                "ci_high",
                "ci_low",
                "pass_rate",
                "runs_passed",
                "runs_total",
                "status"
            ]
        );
        assert_eq!(
            (&case_a["case_id"], &case_a["status"]),
            (&json!("a"), &json!("passed"))
        );
        assert!(
            close(&case_a["pass_rate"], 0.8)
                && close(&case_a["ci_low"], low)
                && close(&case_a["ci_high"], high)
        );
        let skipped = &suite["cases"][2];
        assert_eq!(
            [
                &skipped["runs_total"],
                &skipped["pass_rate"],
                &skipped["ci_low"],
                &skipped["ci_high"]
            ],
            [&json!(0), &Value::Null, &Value::Null, &Value::Null]
        );
        // A failure holds its case's counts too.
        assert_eq!(
            keys(&suite["failures"][0]).len(),
            10,
            "{:#}",
            suite["failures"][0]
        );
        assert_eq!(suite["failures"][0]["runs_passed"], 1);

        let c = &suite["by_category"]["c"];
        assert_eq!(
            keys(c),
            [
                "ci_high",
                "ci_low",
                "count",
                "pass_rate",
                "passed",
                "runs_passed",
                "runs_total"
            ]
        );
        assert_eq!(
            [
                &c["passed"],
                &c["count"],
                &c["runs_passed"],
                &c["runs_total"]
            ],
            [1, 2, 5, 10]
        );
        // Trials: 1 of 2, interval 9.5–90.5%.
        assert!(close(&c["pass_rate"], 0.5) && close(&c["ci_low"], 0.09453120573423071));
        assert!(
            suite["by_category"].get("d").is_none(),
            "no category of skipped cases alone"
        );

        for key in [
            "pass_rate",
            "ci_low",
            "ci_high",
            "passed",
            "total",
            "runs_passed",
            "runs_total",
        ] {
            assert!(suite.get(key).is_some(), "suite has no {key}: {suite:#}");
        }
        assert_eq!([&suite["runs_passed"], &suite["runs_total"]], [5, 10]);
        assert!(close(&suite["pass_rate"], 0.5));
    }
}
