//! What each executed trial leaves behind for the summary and the reports.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

pub use crate::case::CaseInfo;
pub use crate::outcome::Status;
use crate::usage::Usage;

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
    /// Samples not taken because the verdict was already decided (early stop, adaptive sampling): the
    /// most the trial could take minus those it took.
    pub runs_skipped: u32,
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
            runs_skipped: 0,
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

/// `mutex`, locked even if a thread panicked holding it: a trial that panics must not cost the
/// others their records.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

static RECORDS: Mutex<Vec<TrialRecord>> = Mutex::new(Vec::new());

/// Keeps a trial's record.
pub fn push(record: TrialRecord) {
    locked(&RECORDS).push(record);
}

/// Keeps the record of a trial that did not run (skipped, or broken before it could), with why.
pub fn push_unrun(name: String, status: Status, why: &str, case: Option<CaseInfo>) {
    push(TrialRecord::unrun(name, status, why, case));
}

/// Every record so far, sorted by name.
pub fn all() -> Vec<TrialRecord> {
    let mut records = locked(&RECORDS).clone();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    records
}

static WARNINGS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Keeps a warning to print once after the trials: printed as a trial runs, it would land inside
/// libtest's `test name ... ok` line, and every numbered run of a test would repeat it.
pub fn warn(warning: String) {
    locked(&WARNINGS).insert(warning);
}

/// Every distinct warning so far, sorted.
pub fn warnings() -> Vec<String> {
    locked(&WARNINGS).iter().cloned().collect()
}
