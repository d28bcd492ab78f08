//! Reports written after a run: JUnit XML (`--junit PATH` or `PROMPT_TESTER_JUNIT`) and the JSON suite
//! report (`--report PATH` or `PROMPT_TESTER_REPORT`).
//!
//! Both are redacted (API keys never reach a file) and written atomically: a temporary file beside the
//! target, renamed over it, so a reader never sees half a report.
//!
//! The JSON report has one entry per suite in the golden-dataset shape (`prompt_id`, `prompt_version`,
//! `dataset_version`, `timestamp`, `pass_rate`, `passed`, `total`, `by_category`, `failures`), then the
//! `#[prompt_test]` functions under `tests`, then `totals`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use serde::Serialize;

use crate::case::SuiteInfo;
use crate::harness::record::{Status, TrialRecord};
use crate::redact::redact;
use crate::usage::Usage;

/// The category of cases that name none.
pub const UNCATEGORIZED: &str = "uncategorized";

/// The JUnit test suite of a `#[prompt_test]` at the crate root (no module path).
const ROOT_SUITE: &str = "prompt_tests";

/// Writes a JUnit XML report: one `<testsuite>` per suite file (per module for `#[prompt_test]`
/// functions), one `<testcase>` per trial, its runs, pass rate, tokens and costs as properties.
pub fn write_junit(path: &Path, records: &[TrialRecord]) -> std::io::Result<()> {
    let xml = junit_xml(records).map_err(std::io::Error::other)?;
    write_atomically(path, redact(&xml).as_bytes())
}

/// The JUnit XML of `records`.
pub fn junit_xml(records: &[TrialRecord]) -> Result<String, quick_junit::SerializeError> {
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    for r in records {
        let group = match &r.case {
            Some(case) => case.suite.name.clone(),
            None => r
                .name
                .rsplit_once("::")
                .map_or(ROOT_SUITE.to_string(), |(module, _)| module.to_string()),
        };
        let suite = suites
            .entry(group.clone())
            .or_insert_with(|| TestSuite::new(group.clone()));
        let message = r.message.as_deref().map(|m| redact(m).into_owned());
        let status = match r.status {
            Status::Passed => TestCaseStatus::success(),
            Status::Ignored | Status::LiveOnly => {
                let mut s = TestCaseStatus::skipped();
                if let Some(m) = &message {
                    s.set_message(m.as_str());
                }
                s
            }
            Status::Failed | Status::Errored => {
                let kind = if r.status == Status::Errored {
                    NonSuccessKind::Error
                } else {
                    NonSuccessKind::Failure
                };
                let mut s = TestCaseStatus::non_success(kind);
                let text = message.clone().unwrap_or_else(|| "failed".to_string());
                s.set_message(text.lines().next().unwrap_or_default());
                s.set_type("prompt-tester");
                s.set_description(text);
                s
            }
        };
        let mut case = TestCase::new(r.name.as_str(), status);
        case.set_classname(group.as_str());
        case.set_time(r.duration);
        case.add_properties(properties(r));
        if let Some(preview) = &r.output_preview {
            case.set_system_out(redact(preview).into_owned());
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("prompt-tester");
    report.add_test_suites(suites.into_values());
    report.to_string()
}

fn properties(r: &TrialRecord) -> Vec<Property> {
    let u = &r.usage;
    let mut props = vec![
        Property::new("runs", r.runs_total.to_string()),
        Property::new("runs_passed", r.runs_passed.to_string()),
        Property::new("runs_errored", r.runs_errored.to_string()),
        Property::new("runs_required", r.runs_required.to_string()),
        Property::new("pass_threshold", r.pass_threshold.to_string()),
    ];
    if let Some(rate) = pass_rate(r.runs_passed as usize, r.runs_total as usize) {
        props.push(Property::new("pass_rate", format!("{rate:.4}")));
    }
    props.extend([
        Property::new("subject_calls", u.subject.calls.to_string()),
        Property::new("subject_replayed", u.subject.replayed.to_string()),
        Property::new("subject_input_tokens", u.subject.tokens.input.to_string()),
        Property::new("subject_output_tokens", u.subject.tokens.output.to_string()),
    ]);
    props.extend(cost_property("subject_cost_usd", &u.subject));
    props.extend([
        Property::new("judge_calls", u.judge.calls.to_string()),
        Property::new("judge_input_tokens", u.judge.tokens.input.to_string()),
        Property::new("judge_output_tokens", u.judge.tokens.output.to_string()),
    ]);
    props.extend(cost_property("judge_cost_usd", &u.judge));
    if u.embedding.calls > 0 {
        props.extend([
            Property::new("embedding_calls", u.embedding.calls.to_string()),
            Property::new(
                "embedding_input_tokens",
                u.embedding.tokens.input.to_string(),
            ),
        ]);
        props.extend(cost_property("embedding_cost_usd", &u.embedding));
    }
    if !u.unpriced.is_empty() {
        props.push(Property::new(
            "unpriced_models",
            u.unpriced.iter().cloned().collect::<Vec<_>>().join(","),
        ));
    }
    if let Some(case) = &r.case {
        props.push(Property::new("suite_file", case.suite.file.as_str()));
        props.push(Property::new(
            "category",
            case.category.as_deref().unwrap_or(UNCATEGORIZED),
        ));
    }
    props
}

/// The cost property, absent when a call had no price: that cost is unknown (`unpriced_models` says
/// which), and a sum of the priced calls alone would understate it.
fn cost_property(name: &str, tally: &crate::usage::Tally) -> Option<Property> {
    let usd = tally.cost.known()?;
    Some(Property::new(name, format!("{usd:.6}")))
}

fn pass_rate(passed: usize, total: usize) -> Option<f64> {
    (total > 0).then(|| passed as f64 / total as f64)
}

/// The JSON report.
#[derive(Debug, Serialize)]
pub struct JsonReport {
    /// When the report was written (RFC 3339, UTC).
    pub timestamp: String,
    /// One entry per suite, by name.
    pub suites: Vec<SuiteReport>,
    /// The `#[prompt_test]` functions (and other trials that are not suite cases).
    pub tests: Vec<TrialRecord>,
    /// Totals over every trial.
    pub totals: Totals,
}

/// One suite, in the golden-dataset shape.
#[derive(Debug, Serialize)]
pub struct SuiteReport {
    /// The suite's name and file, the prompt's id and version, the dataset's version.
    #[serde(flatten)]
    pub suite: SuiteInfo,
    /// When the report was written.
    pub timestamp: String,
    /// `passed / total`; `null` when no case ran.
    pub pass_rate: Option<f64>,
    /// Trials that passed.
    pub passed: usize,
    /// Trials that errored (counted in `total`, not in `passed`).
    pub errors: usize,
    /// Trials that ran (passed, failed or errored; skipped and unavailable ones are not counted).
    pub total: usize,
    /// Trials ignored (skipped cases, no recording and no key).
    pub skipped: usize,
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
}

/// Pass rate and count of one category.
#[derive(Debug, Serialize)]
pub struct CategoryReport {
    /// `passed / count`.
    pub pass_rate: f64,
    /// Trials of the category that ran.
    pub count: usize,
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
            tests.push(r);
            continue;
        };
        let suite = suites
            .entry(case.suite.name.clone())
            .or_insert_with(|| SuiteReport {
                suite: case.suite.clone(),
                timestamp: timestamp.to_string(),
                pass_rate: None,
                passed: 0,
                errors: 0,
                total: 0,
                skipped: 0,
                by_category: BTreeMap::new(),
                cases: Vec::new(),
                failures: Vec::new(),
                error: None,
                usage: Usage::default(),
            });
        suite.usage += &r.usage;
        let category = case
            .category
            .clone()
            .unwrap_or_else(|| UNCATEGORIZED.to_string());
        // A run trial's case id keeps its `::run_N`, so that each failure names the trial to re-run.
        let case_id = r
            .name
            .strip_prefix(&format!("{}::", case.suite.name))
            .unwrap_or(&r.name)
            .to_string();
        let status = CaseStatus {
            case_id,
            category,
            status: r.status.clone(),
        };
        suite.cases.push(status.clone());
        if matches!(r.status, Status::Ignored | Status::LiveOnly) {
            suite.skipped += 1;
            continue;
        }
        let passed = r.status == Status::Passed;
        suite.total += 1;
        suite.passed += usize::from(passed);
        suite.errors += usize::from(r.status == Status::Errored);
        // Counted as passes until the rates are computed below.
        let entry = suite
            .by_category
            .entry(status.category.clone())
            .or_insert(CategoryReport {
                pass_rate: 0.0,
                count: 0,
            });
        entry.count += 1;
        entry.pass_rate += f64::from(u8::from(passed));
        if !passed {
            let broken = r.runs_total == 0;
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
    for suite in suites.values_mut() {
        suite.pass_rate = pass_rate(suite.passed, suite.total);
        for c in suite.by_category.values_mut() {
            c.pass_rate /= c.count as f64;
        }
    }
    JsonReport {
        timestamp: timestamp.to_string(),
        suites: suites.into_values().collect(),
        tests,
        totals,
    }
}

/// Writes the JSON suite report.
pub fn write_json(path: &Path, records: &[TrialRecord]) -> std::io::Result<()> {
    let report = json_report(records, &crate::cassette::now_rfc3339());
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
    write_atomically(path, redact(&json).as_bytes())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the report path names no file"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
