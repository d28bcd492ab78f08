//! After the trials: recordings flushed, the summary and calibration printed, the baseline compared,
//! the reports written, the cassettes pruned, and the exit code.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use super::reporter::Run;
use super::settings::Settings;
use crate::calibration::{after_run as calibration, corrected as labels};
use crate::cassette::{awaiting as pending, prune};
use crate::record::TrialRecord;
use crate::report::markdown;
use crate::report::{baseline, html, matrix, render, results, summary};

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
    let calibration::AfterRun {
        report: calibrated,
        errors: unwritten_results,
    } = calibration::after_run(
        &engine.config,
        &run.reporter.observations(),
        &settings.commands,
    );
    let advisory = engine
        .config
        .judge
        .as_ref()
        .and_then(|j| calibration::advisory_warning(j.advisory, &records));
    for warning in run.reporter.warnings().into_iter().chain(advisory) {
        eprintln!("warning: {}", crate::redact::for_terminal(&warning));
    }
    summary::print(&records, before.started.elapsed(), &settings.commands);
    let mut failed = trial_failed;
    if let Some(budget) = engine.budget() {
        eprint!("{}", budget.summary_line());
        // A call not made for the budget left a sample without a verdict.
        failed |= budget.refused() > 0;
    }
    // What comes from files and providers (names, paths) is printed escaped, as the summary is.
    let say = |text: &str| eprint!("{}", crate::redact::for_terminal(text));
    if let Some(report) = &calibrated {
        say(&calibration::render(
            report,
            &calibration::judged_suites(&records),
        ));
    }
    let (labelled, unread_labels) = labels::read(&engine.config);
    say(&labels::render(&labels::corrected(&records, &labelled)));
    say(&summary::rate_limits(&engine.rate_limits()));
    let pending = pending::on_disk(&engine.cassettes);
    let mut extras = html::Extras {
        matrix: matrix::compute(&records).map(|m| matrix::table(&m)),
        baseline: None,
        pending: pending.as_deref().ok().and_then(pending::table),
    };
    if let Some((baseline, then)) = &before.baseline {
        let now = baseline::figures_of_records(&records);
        let comparison = baseline::compare(then, &now, baseline.alpha);
        say(&comparison.render(&baseline.path));
        extras.baseline = Some(comparison.table(&baseline.path));
        if baseline.fail_on_regression
            && let Some(why) = comparison.failure()
        {
            say(&format!("error: {why}\n"));
            failed = true;
        }
    }
    for error in unwritten {
        say(&format!("error: recordings were not written: {error}\n"));
        failed = true;
    }
    for error in unread_labels {
        say(&format!("error: {error}"));
        failed = true;
    }
    for error in unwritten_results {
        say(&format!("error: {error}\n"));
        failed = true;
    }
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
    let fragment = results::Fragment::of(
        &records,
        &run.reporter.observations(),
        &info,
        settings,
        &before.root,
    );
    let folder = results::results_dir(&before.root, settings.results.as_deref());
    match results::write(&folder, &fragment) {
        Ok(others) => {
            if let Some(others) = others {
                say(&format!("warning: {others}\n"));
            }
        }
        Err(e) => {
            say(&format!(
                "error: cannot write this run's results in {}: {e}\n",
                folder.display()
            ));
            failed = true;
        }
    }
    if !settings.runner.is_nextest() {
        let info = html::RunInfo {
            commit: info
                .commit
                .clone()
                .or_else(|| render::git_commit(&before.root)),
            ..info
        };
        let rendered = render::Rendered {
            records: &records,
            calibration: calibrated.as_ref(),
            labels: &labelled,
            extras: &extras,
            info: &info,
        };
        failed |= !rendered.write(&results::Asked::from(&settings.reports));
        let pending = pending.as_deref().unwrap_or_default();
        let budget = engine.budget().map(|b| b.report());
        failed |= !markdown_summary(&records, settings, &before, pending, budget.as_ref());
    }
    match &pending {
        Ok(files) => {
            if let Some(line) = pending::line(files) {
                eprintln!("{line}");
            }
        }
        Err(e) => {
            eprintln!("error: {}", crate::redact::for_terminal(&e.to_string()));
            failed = true;
        }
    }
    if settings.prune {
        let on_purpose = before
            .skipped
            .iter()
            .map(|(_, trial)| trial.clone())
            .collect();
        let refusal = pending::refusal(&pending)
            .or_else(|| prune::refusal_after_run(&records, &on_purpose, incomplete));
        match refusal {
            Some(reason) => {
                say(&format!(
                    "error: --prune-cassettes refused: {reason}; nothing was pruned\n"
                ));
                failed = true;
            }
            None => {
                failed |= !prune::prune(
                    &engine.cassettes,
                    &before.skipped,
                    &before.root,
                    settings.claim,
                )
            }
        }
    } else if settings.claim {
        failed |= !prune::claim(&engine.cassettes, &before.root);
    }
    if failed { Exit::Failed } else { Exit::Passed }
}

/// The Markdown summary written where the settings say; false when it could not be written (said on
/// stderr).
fn markdown_summary(
    records: &[TrialRecord],
    settings: &Settings,
    before: &Before,
    pending: &[crate::cassette::pending::PendingFile],
    budget: Option<&crate::budget::BudgetReport>,
) -> bool {
    let context = markdown::Context {
        target: Some(settings.commands.target()),
        baseline: before
            .baseline
            .as_ref()
            .map(|(b, figures)| markdown::Baseline {
                path: &b.path,
                figures,
                alpha: b.alpha,
            }),
        pending,
        budget,
    };
    let errors = markdown::write(&settings.markdown, records, &context);
    for (path, e) in &errors {
        eprintln!(
            "error: cannot write the Markdown summary {}: {e}",
            crate::redact::for_terminal(&path.display().to_string())
        );
    }
    errors.is_empty()
}
