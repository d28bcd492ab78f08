//! After the trials: recordings flushed, the summary and calibration printed, the baseline compared,
//! the reports written, the cassettes pruned, and the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use super::record::TrialRecord;
use super::reporter::Run;
use super::settings::Settings;
use super::{baseline, calibration, html, labels, matrix, pending, prune, report, summary};

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
        .filter(|j| j.advisory == crate::config::AdvisoryPolicy::Warn)
        .and_then(|_| calibration::advisory_failures(&records));
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
    let written = Written {
        records: &records,
        settings,
        calibration: calibrated.as_ref(),
        labels: &labelled,
        extras: &extras,
        wall: before.started.elapsed(),
        started_unix: before.started_unix,
        root: &before.root,
        run,
    };
    failed |= !written.reports();
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

/// What the report writers are given.
struct Written<'a> {
    records: &'a [TrialRecord],
    settings: &'a Settings,
    calibration: Option<&'a calibration::CalibrationReport>,
    labels: &'a labels::Labels,
    extras: &'a html::Extras,
    wall: Duration,
    started_unix: f64,
    root: &'a Path,
    run: &'a Run,
}

impl Written<'_> {
    /// Writes every report asked for; false when one could not be written (each said on stderr).
    fn reports(&self) -> bool {
        let reports = &self.settings.reports;
        let nextest_run = self.settings.runner.run_id();
        let mut ok = true;
        let mut wrote = |kind: &str, path: &Path, result: std::io::Result<()>| {
            if let Err(e) = result {
                eprintln!(
                    "error: cannot write the {kind} report {}: {e}",
                    path.display()
                );
                ok = false;
            }
        };
        if let Some(path) = &reports.junit {
            wrote(
                "JUnit",
                path,
                report::write_junit(path, self.records, nextest_run),
            );
        }
        if let Some(path) = &reports.json {
            wrote(
                "JSON",
                path,
                report::write_json(
                    path,
                    self.records,
                    nextest_run,
                    self.calibration,
                    self.labels,
                    self.run.engine.budget().map(|b| b.report()),
                ),
            );
        }
        if let Some(path) = &reports.html {
            let config = &self.run.engine.config;
            let info = html::RunInfo {
                date: crate::cassette::now_rfc3339(),
                commit: self
                    .settings
                    .commit
                    .clone()
                    .or_else(|| git_commit(self.root)),
                judge: config
                    .judge
                    .as_ref()
                    .map(|j| format!("{}/{}", j.provider, j.model)),
                cassette_mode: self.settings.mode.name().to_string(),
                wall_secs: self.wall.as_secs_f64(),
                started_unix: self.started_unix,
                nextest_run: nextest_run.map(str::to_string),
                budget: self.run.engine.budget().map(|b| b.report()),
            };
            wrote(
                "HTML",
                path,
                html::write_html(path, self.records, &info, self.extras),
            );
        }
        ok
    }
}

/// The commit the run tested: `git rev-parse` in the crate root; `None` outside git.
fn git_commit(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}
