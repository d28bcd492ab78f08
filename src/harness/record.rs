//! What each executed trial leaves behind for the summary and the reports.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::usage::Usage;

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Passed.
    Passed,
    /// Failed: an assertion failed or the judge said no.
    Failed,
    /// Errored: a sample ended without a verdict on its output (see [`super::outcome::SampleOutcome`]).
    Errored,
    /// Ignored at run time (no key and no recording, or a skipped case).
    Ignored,
    /// A `live_only` test without a recording: ignored, and listed apart ("live only, not run").
    #[serde(rename = "live_only")]
    LiveOnly,
}

/// Where a suite case came from, for the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseInfo {
    /// The suite's name (file stem without `.evals`).
    pub suite: String,
    /// The suite file, relative to the crate root.
    pub file: String,
    /// The case's name.
    pub case: String,
    /// The case's category, if any.
    pub category: Option<String>,
    /// The prompt id (suite `prompt_id`, else the prompt file or the suite name).
    pub prompt_id: String,
    /// The prompt version (suite `prompt_version`), if given.
    pub prompt_version: Option<String>,
    /// The dataset version (suite `dataset_version`), if given.
    pub dataset_version: Option<String>,
}

/// One executed trial.
#[derive(Debug, Clone, Serialize)]
pub struct TrialRecord {
    /// The trial name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// The failure message, or the reason it was ignored.
    pub message: Option<String>,
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples that errored.
    pub runs_errored: u32,
    /// Samples taken.
    pub runs_total: u32,
    /// Samples that had to pass.
    pub runs_required: u32,
    /// The pass threshold.
    pub pass_threshold: f64,
    /// Tokens, calls and cost.
    pub usage: Usage,
    /// Wall time of the trial.
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
    /// The first failed sample's output, shortened (or the first output when none failed).
    pub output_preview: Option<String>,
    /// The suite case this trial runs, if it is one.
    pub case: Option<CaseInfo>,
}

impl TrialRecord {
    /// The record of a trial that made no call: a skipped case or a broken suite file.
    pub fn unrun(name: String, status: Status, message: &str, case: Option<CaseInfo>) -> Self {
        Self {
            name,
            status,
            message: Some(crate::redact::redact(message).into_owned()),
            runs_passed: 0,
            runs_errored: 0,
            runs_total: 0,
            runs_required: 0,
            pass_threshold: 1.0,
            usage: Usage::default(),
            duration: Duration::ZERO,
            output_preview: None,
            case,
        }
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

static RECORDS: Mutex<Vec<TrialRecord>> = Mutex::new(Vec::new());

/// Keeps a trial's record.
pub fn push(record: TrialRecord) {
    RECORDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(record);
}

/// Every record so far, sorted by name.
pub fn all() -> Vec<TrialRecord> {
    let mut records = RECORDS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    records
}

static WARNINGS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Keeps a warning to print once after the trials: printed as a trial runs, it would land inside
/// libtest's `test name ... ok` line, and every numbered run of a test would repeat it.
pub fn warn(warning: String) {
    WARNINGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(warning);
}

/// Every distinct warning so far, sorted.
pub fn warnings() -> Vec<String> {
    let warnings = WARNINGS.lock().unwrap_or_else(|e| e.into_inner());
    warnings.iter().cloned().collect()
}

/// Shortens `text` to at most `max` characters, marking the cut.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}
