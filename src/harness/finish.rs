//! After the trials: recordings flushed, the run's results handed to the one report pipeline
//! (`report::render`: the summary, the results kept, the reports), the cassettes pruned, and the exit
//! code.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use super::reporter::Run;
use super::settings::Settings;
use crate::cassette::{awaiting, prune};
use crate::record::{Status, TrialRecord};
use crate::report::markdown::Markdown;
use crate::report::results::Asked;
use crate::report::{baseline, html, render, results};

/// How a run ends, named once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every selected trial passed and everything was written.
    Passed,
    /// A trial failed, or something the run had to write or check did not hold (libtest's 101).
    Failed,
    /// The command line, the configuration or a file the run needs is wrong: nothing ran (2).
    Usage,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        match exit {
            Exit::Passed => ExitCode::SUCCESS,
            Exit::Failed => ExitCode::from(101),
            Exit::Usage => ExitCode::from(2),
        }
    }
}

/// What the run had before the trials, for the finish.
pub struct Before {
    /// When the trials started.
    pub started: std::time::Instant,
    /// The same instant as Unix time (to merge the wall times of nextest's processes).
    pub started_unix: f64,
    /// The baseline report, loaded before any call, with its settings.
    pub baseline: Option<(baseline::Settings, baseline::Figures)>,
    /// Cases skipped on purpose, as (cassette, trial): they keep their recordings through a prune.
    pub skipped: Vec<(String, String)>,
    /// The crate root.
    pub root: PathBuf,
    /// The suite roots as the run walked them.
    pub walked: crate::suite::Walked,
}

/// Unix time now, in seconds.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Everything after libtest's trials, given whether one failed.
pub fn finish(run: &Run, settings: &Settings, before: Before, trial_failed: bool) -> Exit {
    let engine = &run.engine;
    // Recordings are buffered (see `Cassette::record`): write what is left.
    let unwritten = engine.cassettes.flush_all();
    let incomplete = if !unwritten.is_empty() {
        Some("recordings were not written")
    } else if trial_failed {
        Some("a trial failed")
    } else {
        None
    };
    let records = run.reporter.take_records();
    let observations = run.reporter.observations();
    let mut failed = trial_failed;
    // A call not made for the budget left a sample without a verdict.
    failed |= engine.budget().is_some_and(|b| b.refused() > 0);
    let info = html::RunInfo {
        date: crate::cassette::now_rfc3339(),
        commit: settings.commit.clone(),
        judge: engine
            .config
            .judge
            .as_ref()
            .map(|j| format!("{}/{}", j.provider, j.model)),
        cassette_mode: settings.mode.name().to_string(),
        wall_secs: before.started.elapsed().as_secs_f64(),
        started_unix: before.started_unix,
        nextest_run: settings.runner.run_id().map(str::to_string),
        budget: engine.budget().map(|b| b.report()),
    };
    // Every process leaves its results; under nextest they are the only reports it writes: the merged
    // ones are rendered once, by `cargo prompt-tester report`.
    let origin = results::Origin {
        nextest: settings.runner.is_nextest(),
        run_id: settings.runner.run_id(),
        attempt: settings.runner.attempt(),
        target: settings.commands.target(),
    };
    let fragment = results::Fragment::of(
        &records,
        &observations,
        &info,
        origin,
        &settings.reports,
        &before.root,
    );
    let folder = results::results_dir(&before.root, settings.results.as_deref());
    let nextest = settings.runner.is_nextest();
    let (reports, markdown) = if nextest {
        (Asked::default(), Markdown::default())
    } else {
        (settings.reports.clone(), settings.markdown.clone())
    };
    let pending = awaiting::on_disk(&engine.cassettes);
    let rendered = render::render(
        render::Results {
            records: &records,
            observations: &observations,
            info,
            commands: &settings.commands,
            rate_limits: &engine.rate_limits(),
        },
        render::Outputs {
            config: &engine.config,
            cassettes: &engine.cassettes,
            walked: &before.walked,
            root: &before.root,
            reports: &reports,
            markdown: &markdown,
            baseline: before.baseline.as_ref().map(|(b, figures)| (b, figures)),
            pending: &pending,
            keep: Some((folder, fragment)),
            warnings: run.reporter.warnings(),
            errors: unwritten
                .iter()
                .map(|e| format!("recordings were not written: {e}"))
                .collect(),
        },
    );
    failed |= rendered.failed;
    if settings.prune {
        let on_purpose = before
            .skipped
            .iter()
            .map(|(_, trial)| trial.clone())
            .collect();
        let refusal = awaiting::refusal(&pending)
            .or_else(|| refusal_after_run(&records, &on_purpose, incomplete));
        match refusal {
            Some(reason) => {
                eprint!(
                    "{}",
                    crate::redact::for_terminal(&format!(
                        "error: --prune-cassettes refused: {reason}; nothing was pruned\n"
                    ))
                );
                failed = true;
            }
            None => failed |= !prune::prune(&engine.cassettes, &before.skipped, &before.root),
        }
    }
    if failed { Exit::Failed } else { Exit::Passed }
}

/// Why this run, now finished, cannot prune: a trial that did not pass (failed, or ignored for want of
/// a recording) may not have used its recordings. Trials skipped on purpose (`on_purpose`) and live-only
/// trials do not count; `incomplete` names any other reason the run is not trustworthy (unwritten recordings).
pub(crate) fn refusal_after_run(
    records: &[TrialRecord],
    on_purpose: &BTreeSet<String>,
    incomplete: Option<&str>,
) -> Option<String> {
    const SHOWN: usize = 5;
    let blocking: Vec<String> = records
        .iter()
        .filter(|r| match r.status {
            // A live-only test without a recording has none to keep or lose.
            Status::Passed | Status::LiveOnly => false,
            Status::Ignored => !on_purpose.contains(&r.name),
            _ => true,
        })
        .map(|r| format!("{}: {}", r.name, format!("{:?}", r.status).to_lowercase()))
        .collect();
    if !blocking.is_empty() {
        let more = blocking.len().saturating_sub(SHOWN);
        let mut list = blocking[..blocking.len().min(SHOWN)].join(", ");
        if more > 0 {
            list.push_str(&format!(", and {more} more"));
        }
        return Some(format!("{} trial(s) did not pass ({list})", blocking.len()));
    }
    incomplete.map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, status: Status) -> TrialRecord {
        TrialRecord::unrun(name.into(), status, "why", None)
    }

    #[test]
    fn a_trial_that_did_not_pass_blocks_unless_skipped_on_purpose() {
        let skipped: BTreeSet<String> = ["s::later".to_string()].into();
        let passed = [
            record("s::a", Status::Passed),
            record("s::later", Status::Ignored),
        ];
        assert_eq!(refusal_after_run(&passed, &skipped, None), None);
        assert_eq!(
            refusal_after_run(&passed, &skipped, Some("recordings were not written")).as_deref(),
            Some("recordings were not written")
        );
        let mut partial = passed.to_vec();
        partial.push(record("s::new", Status::Ignored));
        partial.push(record("s::b", Status::Failed));
        assert_eq!(
            refusal_after_run(&partial, &skipped, None).as_deref(),
            Some("2 trial(s) did not pass (s::new: ignored, s::b: failed)")
        );
        let many: Vec<TrialRecord> = (0..7)
            .map(|i| record(&format!("t{i}"), Status::Failed))
            .collect();
        assert!(
            refusal_after_run(&many, &skipped, None)
                .unwrap()
                .ends_with("t4: failed, and 2 more)")
        );
    }
}
