//! The one way from a run's results to everything it shows, [`render`]: the end of a `cargo test`
//! run and `cargo prompt-tester report` (from a results folder) both call it. On stderr the summary,
//! the budget, the calibration and label-corrected rates and the baseline comparison; then this
//! process's results kept (a `cargo test` run's), the report files (JUnit, JSON, HTML, Markdown), and
//! the pending recordings' line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::markdown::{self, Markdown};
use super::results::{self, Asked, Fragment};
use super::{baseline, html, matrix, summary};
use crate::calibration::after_run::{self as calibration, CalibrationReport};
use crate::calibration::corrected::{self as labels, Labels};
use crate::cassette::awaiting;
use crate::cassette::pending::PendingFile;
use crate::cassette::{CassetteError, CassetteStore};
use crate::checks::Observation;
use crate::commands::Commands;
use crate::config::Config;
use crate::provider::RateLimitStats;
use crate::record::TrialRecord;
use crate::redact::for_terminal;
use crate::suite::Walked;

/// A finished run's results: all the reports are rendered from these.
pub(crate) struct Results<'a> {
    /// Every trial, once.
    pub records: &'a [TrialRecord],
    /// The calibration verdicts the trials noted.
    pub observations: &'a [Observation],
    /// The run as a whole, its budget included.
    pub info: html::RunInfo,
    /// The commands messages name, for the run's test target.
    pub commands: &'a Commands,
    /// The rate limits the providers answered with (none known from a results folder).
    pub rate_limits: &'a [(String, RateLimitStats)],
}

/// Where the results go and what they are set against.
pub(crate) struct Outputs<'a> {
    /// The crate's configuration: its calibration sets, labels and judge.
    pub config: &'a Config,
    /// The run's cassette store: its one listing of the cassette folder serves the labels.
    pub cassettes: &'a CassetteStore,
    /// The suite roots as the run walked them (calibration sets and labels are found there).
    pub walked: &'a Walked,
    /// The crate root (git is asked there for the commit when the run did not say).
    pub root: &'a Path,
    /// The report files.
    pub reports: &'a Asked,
    /// Where the Markdown summary goes.
    pub markdown: &'a Markdown,
    /// The baseline to compare with, and its figures.
    pub baseline: Option<(&'a baseline::Settings, &'a baseline::Figures)>,
    /// The recordings pending review now.
    pub pending: &'a Result<Vec<PendingFile>, CassetteError>,
    /// This process's results to keep in the results folder (a `cargo test` run's, not a merged one).
    pub keep: Option<(PathBuf, Fragment)>,
    /// What the run warns of before its summary.
    pub warnings: Vec<String>,
    /// What went wrong in the run itself (each fails it), said beside the rendering's own errors.
    pub errors: Vec<String>,
}

/// What rendering found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rendering {
    /// Something the run must fail for: an error said on stderr, or a regression that fails the run.
    pub failed: bool,
    /// A report file could not be written (said on stderr).
    pub unwritten: bool,
}

/// Renders everything `results` show where `outputs` says, saying on stderr what they show and what
/// could not be done.
pub(crate) fn render(results: Results<'_>, outputs: Outputs<'_>) -> Rendering {
    let Results {
        records,
        observations,
        info,
        commands,
        rate_limits,
    } = results;
    let config = outputs.config;
    let mut done = Rendering::default();
    // What comes from files and providers (names, paths) is printed escaped, as the summary is.
    let say = |text: &str| eprint!("{}", for_terminal(text));
    let calibrated = calibration::after_run(
        config,
        observations,
        commands,
        outputs.cassettes,
        outputs.walked,
    );
    let advisory = config
        .judge
        .as_ref()
        .and_then(|j| calibration::advisory_warning(j.advisory, records));
    for warning in outputs.warnings.iter().chain(&advisory) {
        eprintln!("warning: {}", for_terminal(warning));
    }
    summary::print(
        records,
        Duration::try_from_secs_f64(info.wall_secs).unwrap_or_default(),
        commands,
    );
    if let Some(budget) = &info.budget {
        eprint!("{}", budget.summary_line());
    }
    if let Some(report) = &calibrated.report {
        say(&calibration::render(
            report,
            &calibration::judged_suites(records),
        ));
    }
    let (labelled, unread_labels) = labels::read(config, outputs.cassettes, outputs.walked);
    say(&labels::render(&labels::corrected(records, &labelled)));
    say(&summary::rate_limits(rate_limits));
    let mut extras = html::Extras {
        matrix: matrix::compute(records).map(|m| matrix::table(&m)),
        baseline: None,
        pending: outputs
            .pending
            .as_deref()
            .ok()
            .and_then(super::pending::table),
    };
    let comparison = outputs.baseline.map(|(baseline, then)| {
        baseline::compare(then, &baseline::figures_of_records(records), baseline.alpha)
    });
    if let (Some((baseline, _)), Some(comparison)) = (outputs.baseline, &comparison) {
        say(&comparison.render(&baseline.path));
        extras.baseline = Some(comparison.table(&baseline.path));
        if baseline.fail_on_regression
            && let Some(why) = comparison.failure()
        {
            say(&format!("error: {why}\n"));
            done.failed = true;
        }
    }
    for error in &outputs.errors {
        say(&format!("error: {error}\n"));
        done.failed = true;
    }
    for error in unread_labels {
        say(&format!("error: {error}"));
        done.failed = true;
    }
    for error in &calibrated.errors {
        say(&format!("error: {error}\n"));
        done.failed = true;
    }
    if let Some((folder, fragment)) = &outputs.keep {
        match results::write(folder, fragment) {
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
                done.failed = true;
            }
        }
    }
    // The commit is the HTML report's alone: git is asked only for it.
    let info = html::RunInfo {
        commit: info.commit.clone().or_else(|| {
            outputs
                .reports
                .html
                .as_ref()
                .and_then(|_| git_commit(outputs.root))
        }),
        ..info
    };
    let files = Files {
        records,
        calibration: calibrated.report.as_ref(),
        labels: &labelled,
        extras: &extras,
        info: &info,
    };
    done.unwritten = !files.write(outputs.reports);
    let context = markdown::Context {
        target: Some(commands.target()),
        baseline: (outputs.baseline.zip(comparison.as_ref())).map(|((b, _), comparison)| {
            markdown::Baseline {
                path: &b.path,
                comparison,
            }
        }),
        pending: outputs.pending.as_deref().unwrap_or_default(),
        budget: info.budget.as_ref(),
    };
    for (path, e) in markdown::write(outputs.markdown, records, &context) {
        eprintln!(
            "error: cannot write the Markdown summary {}: {e}",
            for_terminal(&path.display().to_string())
        );
        done.unwritten = true;
    }
    done.failed |= done.unwritten;
    match outputs.pending {
        Ok(files) => {
            if let Some(line) = awaiting::line(files) {
                eprintln!("{line}");
            }
        }
        Err(e) => {
            eprintln!("error: {}", for_terminal(&e.to_string()));
            done.failed = true;
        }
    }
    done
}

/// What the report files are written from.
struct Files<'a> {
    records: &'a [TrialRecord],
    calibration: Option<&'a CalibrationReport>,
    /// The crate's labels of its own outputs, for each suite's label-corrected rate.
    labels: &'a Labels,
    extras: &'a html::Extras,
    info: &'a html::RunInfo,
}

impl Files<'_> {
    /// Writes every report `asked` names; false when one could not be written (each said on stderr).
    fn write(&self, asked: &Asked) -> bool {
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
        // Without the feature `Asked::writable` refused the path before the run.
        #[cfg(feature = "junit")]
        if let Some(path) = &asked.junit {
            wrote("JUnit", path, super::write_junit(path, self.records));
        }
        if let Some(path) = &asked.json {
            let budget = self.info.budget.clone();
            wrote(
                "JSON",
                path,
                super::write_json(path, self.records, self.calibration, self.labels, budget),
            );
        }
        if let Some(path) = &asked.html {
            wrote(
                "HTML",
                path,
                html::write_html(path, self.records, self.info, self.extras),
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
