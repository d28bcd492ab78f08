//! Pure: the fragments of one logical run merged into what its reports show. A partition is one run's
//! folder (one machine's share of a nextest run, or a whole run); a trial in two partitions is an
//! error naming both; a trial with several fragments in one partition was retried by nextest, and its
//! last attempt counts, flagged flaky when it passed after a failure (as nextest flags it), and so do
//! its calibration verdicts: those of its earlier attempts are dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Asked, Fragment, Process};
use crate::budget::BudgetReport;
use crate::checks::Observation;
use crate::record::TrialRecord;
use crate::report::ReportError;

/// The fragments found in one folder.
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    /// The run's folder.
    pub folder: PathBuf,
    /// Its fragments, in any order.
    pub fragments: Vec<Fragment>,
}

/// A logical run, merged.
#[derive(Debug, Clone, Default)]
pub(crate) struct Merged {
    /// Every trial once, by name.
    pub records: Vec<TrialRecord>,
    /// Every calibration verdict noted.
    pub observations: Vec<Observation>,
    /// The budget: each partition's last figures, summed over partitions (each machine kept its own
    /// ledger).
    pub budget: Option<BudgetReport>,
    /// The run as a whole: its first start, its last end (as `wall_secs`), the latest process's date,
    /// commit, judge and cassette mode; `run` names the run ids, joined by `+` across partitions.
    pub run: Process,
    /// The reports the latest process that asked for some was asked for.
    pub asked: Asked,
}

/// The partitions merged, or the first trial found in two of them.
pub(crate) fn merge(partitions: Vec<Partition>) -> Result<Merged, ReportError> {
    let mut home: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut records = Vec::new();
    let mut merged = Merged::default();
    let mut processes: Vec<Process> = Vec::new();
    let mut run_ids: Vec<String> = Vec::new();
    for partition in partitions {
        let mut attempts: BTreeMap<String, Vec<(Process, super::Stored)>> = BTreeMap::new();
        let mut verdicts: Vec<(Process, Observation)> = Vec::new();
        let mut budget: Option<BudgetReport> = None;
        for fragment in partition.fragments {
            for stored in fragment.records {
                attempts
                    .entry(stored.name().to_string())
                    .or_default()
                    .push((fragment.process.clone(), stored));
            }
            verdicts.extend(
                fragment
                    .observations
                    .into_iter()
                    .map(|o| (fragment.process.clone(), o)),
            );
            budget = match (budget, fragment.budget) {
                (Some(a), Some(b)) => Some(if later(&b, &a) { b } else { a }),
                (a, b) => a.or(b),
            };
            if !run_ids.contains(&fragment.process.run) {
                run_ids.push(fragment.process.run.clone());
            }
            processes.push(fragment.process);
        }
        let mut counted: BTreeMap<String, Process> = BTreeMap::new();
        for (name, mut tries) in attempts {
            if let Some(first) = home.get(&name) {
                return Err(ReportError::TrialTwice {
                    trial: name,
                    first: first.clone(),
                    second: partition.folder,
                });
            }
            home.insert(name.clone(), partition.folder.clone());
            tries.sort_by(|(a, _), (b, _)| {
                (a.attempt.unwrap_or(1), a.started_unix)
                    .partial_cmp(&(b.attempt.unwrap_or(1), b.started_unix))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            let count = tries.len() as u32;
            let (process, last) = tries.pop().expect("a trial has an attempt");
            counted.insert(name, process);
            let mut record = last.into_record();
            if count > 1 {
                record.attempts = Some(count);
            }
            records.push(record);
        }
        // A verdict counts when its trial's counted attempt noted it (a trial without a record, none
        // was counted: its verdicts stay).
        merged.observations.extend(
            verdicts
                .into_iter()
                .filter(|(process, o)| counted.get(&o.trial).is_none_or(|last| last == process))
                .map(|(_, o)| o),
        );
        merged.budget = match (merged.budget.take(), budget) {
            (Some(sum), Some(b)) => Some(BudgetReport {
                limit_usd: sum.limit_usd.max(b.limit_usd),
                spent_usd: sum.spent_usd + b.spent_usd,
                refused_calls: sum.refused_calls + b.refused_calls,
                whole_nextest_run: sum.whole_nextest_run && b.whole_nextest_run,
                // A partition whose spend is unknown leaves the sum unknown.
                unknown: sum.unknown.or(b.unknown),
            }),
            (a, b) => a.or(b),
        };
    }
    records.sort_by(|a, b| a.name.cmp(&b.name));
    merged.records = records;
    processes.sort_by(|a, b| a.date.cmp(&b.date));
    if let Some(asked) = processes
        .iter()
        .rev()
        .map(|p| &p.reports)
        .find(|r| **r != Asked::default())
    {
        merged.asked = asked.clone();
    }
    if let Some(latest) = processes.last() {
        let start = processes
            .iter()
            .map(|p| p.started_unix)
            .fold(f64::INFINITY, f64::min);
        let end = processes
            .iter()
            .map(|p| p.started_unix + p.wall_secs)
            .fold(f64::NEG_INFINITY, f64::max);
        merged.run = Process {
            run: run_ids.join("+"),
            nextest: processes.iter().any(|p| p.nextest),
            attempt: None,
            started_unix: start,
            wall_secs: (end - start).max(0.0),
            reports: Asked::default(),
            ..latest.clone()
        };
    }
    Ok(merged)
}

/// Whether budget figures `a` were seen after `b` (a ledger only grows).
fn later(a: &BudgetReport, b: &BudgetReport) -> bool {
    (a.spent_usd, a.refused_calls) > (b.spent_usd, b.refused_calls)
}
