//! A suite's gates in the JSON report: each gate's counts, rate and failing rows under `gates`, and its
//! rows counted as the suite's cases (once each, however many gates judged them).

use std::collections::BTreeSet;

use serde::Serialize;

use super::{CaseEntry, Rate, SuiteReport, add_case};
use crate::record::{GateRecord, Status, TrialRecord};
use crate::redact::redact;
use crate::stats::Counts;

/// One gate of a suite.
#[derive(Debug, Clone, Serialize)]
pub struct GateReport {
    /// The gate as a case of its suite: `gate`, `gate::category`, with `[column]` in a matrix.
    pub gate: String,
    /// The category it judges; `null` for every row.
    pub category: Option<String>,
    /// `passed`, `failed`, `errored` or `ignored`.
    pub status: Status,
    /// The share of rows that must pass.
    pub pass_threshold: f64,
    /// Rows that passed.
    pub rows_passed: u32,
    /// Rows that errored.
    pub rows_errored: u32,
    /// Rows counted (not skipped).
    pub rows_total: u32,
    /// Rows that had to pass.
    pub rows_required: u32,
    /// Rows skipped, not counted.
    pub rows_skipped: u32,
    /// `rows_passed / rows_total` and its 95% interval.
    #[serde(flatten)]
    pub rate: Rate,
    /// Why it did not pass (every failing row, then the rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each row that failed or errored, with its reason (listed even when the gate passed).
    pub failing_rows: Vec<FailingRow>,
}

/// A row of a gate that did not pass.
#[derive(Debug, Clone, Serialize)]
pub struct FailingRow {
    /// The row.
    pub case_id: String,
    /// `failed` or `errored`.
    pub status: Status,
    /// Why.
    pub reason: String,
}

/// Adds the gate of record `r` to `suite`, and its rows not yet in `seen` (suite, case id) as cases.
pub(super) fn add(
    suite: &mut SuiteReport,
    r: &TrialRecord,
    gate: &GateRecord,
    seen: &mut BTreeSet<(String, String)>,
) {
    let name = suite.suite.name.clone();
    let counts = Counts::new(r.runs_passed, r.runs_total);
    suite.gates.push(GateReport {
        gate: r
            .name
            .strip_prefix(&format!("{name}::"))
            .unwrap_or(&r.name)
            .to_string(),
        category: gate.category.clone(),
        status: r.status.clone(),
        pass_threshold: r.pass_threshold,
        rows_passed: r.runs_passed,
        rows_errored: r.runs_errored,
        rows_total: r.runs_total,
        rows_required: r.runs_required,
        rows_skipped: gate.rows_skipped,
        rate: Rate::of(counts),
        message: r.message.as_deref().map(|m| redact(m).into_owned()),
        failing_rows: gate
            .rows
            .iter()
            .filter(|row| matches!(row.status, Status::Failed | Status::Errored))
            .map(|row| FailingRow {
                case_id: row.case_id.clone(),
                status: row.status.clone(),
                reason: redact(row.message.as_deref().unwrap_or_default()).into_owned(),
            })
            .collect(),
    });
    for row in &gate.rows {
        if !seen.insert((name.clone(), row.case_id.clone())) {
            continue;
        }
        add_case(
            suite,
            CaseEntry {
                case_id: row.case_id.clone(),
                category: row.category.clone(),
                status: row.status.clone(),
                counts: Counts::new(row.runs_passed, row.runs_total),
                samples: &row.samples,
                message: row.message.as_deref().map(|m| redact(m).into_owned()),
                preview: row
                    .output_preview
                    .as_deref()
                    .map(|p| redact(p).into_owned()),
            },
        );
    }
}

/// Counts a gated suite's skipped rows in its `skipped`: those of its whole gates (one per column),
/// else those of its category gates (a category's rows are no other's).
pub(super) fn count_skipped(suite: &mut SuiteReport) {
    let whole: u32 = suite
        .gates
        .iter()
        .filter(|g| g.category.is_none())
        .map(|g| g.rows_skipped)
        .sum();
    let any_whole = suite.gates.iter().any(|g| g.category.is_none());
    suite.skipped += if any_whole {
        whole as usize
    } else {
        suite.gates.iter().map(|g| g.rows_skipped as usize).sum()
    };
}
