//! One gate trial (`[gate]` in a suite): its rows run as they would alone (each its own samples, its
//! recordings filed under its own trial name, so a gate replays what the rows recorded), concurrently
//! up to the provider's in-flight limit; then `gate::decide` judges them as the samples of one trial.
//!
//! The gates of one column share their rows ([`Shared`]): the first that needs a row runs it, the
//! others wait for it, so a row is called once per process however many gates count it.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use futures::StreamExt;
use libtest_mimic::{Completion, Failed};
use tokio::sync::OnceCell;

use super::reporter::Run;
use super::trial;
use crate::gate::{self, RowVerdict};
use crate::record::{self, GateRecord, GateRow, Status, TrialRecord};
use crate::redact::redact;
use crate::suite::gates::{Gate, GateRows};
use crate::usage::Usage;

/// The rows of one column of a gated suite, built when the first of its gates runs, and each row's
/// record once it has run.
pub(super) struct Shared {
    make: Arc<dyn Fn() -> GateRows + Send + Sync>,
    /// The provider the rows call, for the in-flight limit.
    provider: Option<String>,
    built: OnceLock<Built>,
}

struct Built {
    rows: GateRows,
    done: Vec<OnceCell<Arc<TrialRecord>>>,
}

impl Shared {
    /// The rows `make` builds, calling `provider`.
    pub fn new(
        make: Arc<dyn Fn() -> GateRows + Send + Sync>,
        provider: Option<String>,
    ) -> Arc<Self> {
        Arc::new(Self {
            make,
            provider,
            built: OnceLock::new(),
        })
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let rows = (self.make)();
            let done = rows.rows.iter().map(|_| OnceCell::new()).collect();
            Built { rows, done }
        })
    }

    /// The rows, built on first use.
    pub fn rows(&self) -> &GateRows {
        &self.built().rows
    }
}

/// A gate and the rows it shares with the other gates of its column.
pub(super) struct GateTrial {
    /// The gate.
    pub gate: Gate,
    /// Its column's rows.
    pub shared: Arc<Shared>,
}

impl GateTrial {
    /// The indices of the rows this gate counts (not skipped), and how many it skips.
    pub fn counted(&self) -> (Vec<usize>, u32) {
        let rows = &self.shared.rows().rows;
        let mine = rows.iter().enumerate().filter(|(_, r)| self.gate.covers(r));
        let (mut counted, mut skipped) = (Vec::new(), 0);
        for (i, row) in mine {
            match row.skip {
                Some(_) => skipped += 1,
                None => counted.push(i),
            }
        }
        (counted, skipped)
    }

    /// The trial names of the rows it skips (they keep their recordings through a prune).
    pub fn skipped_rows(&self) -> Vec<String> {
        let rows = &self.shared.rows().rows;
        rows.iter()
            .filter(|r| self.gate.covers(r) && r.skip.is_some())
            .map(|r| r.trial.clone())
            .collect()
    }
}

/// Runs the gate's rows (those another gate has not run yet), decides the gate, and reports it.
pub(super) fn execute(trial: GateTrial, run: &Run) -> Result<Completion, Failed> {
    let started = Instant::now();
    let (counted, skipped) = trial.counted();
    let built = trial.shared.built();
    let limit = trial::wave_limit(&run.engine, trial.shared.provider.as_deref()) as usize;
    let rows = trial::in_trial(|| {
        run.engine.block_on(
            futures::stream::iter(counted.iter().map(|&i| {
                let built = &built;
                async move {
                    let mut here = false;
                    let record = built.done[i]
                        .get_or_init(|| async {
                            here = true;
                            Arc::new(run_row(&built.rows, i, run).await)
                        })
                        .await
                        .clone();
                    (i, record, here)
                }
            }))
            .buffered(limit.max(1))
            .collect::<Vec<_>>(),
        )
    });
    let gate = trial.gate;
    let listed = &built.rows.rows;
    let verdicts: Vec<RowVerdict<'_>> = rows
        .iter()
        .map(|(i, r, _)| RowVerdict {
            name: &listed[*i].case_id,
            status: &r.status,
            message: r.message.as_deref(),
        })
        .collect();
    let decision = gate::decide(&verdicts, skipped, gate.share);
    // The calls this gate made; a row another gate ran is counted there.
    let mut usage = Usage::default();
    let mut latency = record::Latency::default();
    for (_, r, here) in &rows {
        if *here {
            usage += &r.usage;
        }
        latency += r.latency;
    }
    let preview = rows
        .iter()
        .find(|(_, r, _)| r.status != Status::Passed && r.output_preview.is_some())
        .and_then(|(_, r, _)| r.output_preview.clone());
    let ignored = matches!(decision.status, Status::Ignored | Status::LiveOnly);
    let record = TrialRecord {
        name: gate.name,
        status: decision.status,
        message: decision
            .message
            .map(|m| if ignored { m } else { redact(&m).into_owned() }),
        runs_passed: decision.passed,
        runs_errored: decision.errored,
        runs_total: decision.counted,
        runs_required: decision.required,
        runs_skipped: 0,
        pass_threshold: gate.share,
        usage,
        duration: started.elapsed(),
        output_preview: preview,
        case: Some(gate.info),
        cell: gate.cell,
        latency,
        prompt: None,
        media: Vec::new(),
        samples: Vec::new(),
        attempts: None,
        gate: Some(GateRecord {
            category: gate.category,
            rows_skipped: skipped,
            rows: rows
                .iter()
                .map(|(i, r, _)| GateRow {
                    case_id: listed[*i].case_id.clone(),
                    category: listed[*i].category.clone(),
                    status: r.status.clone(),
                    message: r.message.clone(),
                    runs_passed: r.runs_passed,
                    runs_total: r.runs_total,
                    output_preview: r.output_preview.clone(),
                    samples: r.samples.clone(),
                })
                .collect(),
        }),
    };
    trial::finished(record, run)
}

/// Row `i` run as its own trial would run (a row that cannot be built errors: it hides its answer).
async fn run_row(rows: &GateRows, i: usize, run: &Run) -> TrialRecord {
    let row = &rows.rows[i];
    let started = Instant::now();
    match rows.case(i) {
        Err(error) => {
            TrialRecord::unrun(row.trial.clone(), Status::Errored, &error.to_string(), None)
        }
        Ok(case) => {
            let taken = trial::take(&row.trial, None, &case, run).await;
            trial::conclude(row.trial.clone(), &case, taken, run, started)
        }
    }
}
