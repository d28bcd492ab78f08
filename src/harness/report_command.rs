//! `cargo prompt-tester report`: the merged reports of a run rendered once from its results folders
//! (the crate's last run, or the partitions named by `--from`), with the summary on stderr.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::calibration::after_run as calibration;
use crate::cassette::awaiting as pending;
use crate::commands::Commands;
use crate::config::{Config, ConfigError};
use crate::harness::Markdown;
use crate::report::markdown;
use crate::report::render::{Rendered, git_commit};
use crate::report::results::{Asked, ResultsError, merge, partition, results_dir};
use crate::report::{baseline, html, matrix, summary};

/// What `cargo prompt-tester report` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The crate root.
    pub root: PathBuf,
    /// `--from`: results folders or run folders, each a partition; none: the crate's last run.
    pub from: Vec<PathBuf>,
    /// `--junit`, `--report`, `--html`: when none is given, the reports the run was asked for.
    pub junit: Option<PathBuf>,
    /// The JSON report.
    pub json: Option<PathBuf>,
    /// The HTML report.
    pub html: Option<PathBuf>,
    /// `--baseline`: an earlier JSON report to compare with.
    pub baseline: Option<PathBuf>,
    /// `--markdown` as given (a path, or `off`); with `PROMPT_TESTER_MARKDOWN` and
    /// `GITHUB_STEP_SUMMARY` read as the harness reads them.
    pub markdown: Option<String>,
}

/// What the report did.
#[derive(Debug, Clone)]
pub struct Done {
    /// The run folders merged.
    pub folders: Vec<PathBuf>,
    /// The trials in the merged reports.
    pub trials: usize,
    /// The reports written.
    pub written: Vec<PathBuf>,
    /// A trial failed or errored, or a significant regression against the baseline.
    pub failed: bool,
}

/// Why no report was rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The results cannot be read or merged.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// The crate's configuration cannot be read (calibration sets and cassettes are found through it).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The baseline cannot be read.
    #[error(transparent)]
    Baseline(#[from] baseline::BaselineError),
    /// `--markdown` or `PROMPT_TESTER_MARKDOWN` cannot be used.
    #[error(transparent)]
    Markdown(#[from] crate::harness::error::HarnessError),
    /// No report named, and the run asked for none.
    #[error(
        "no report to write: name one (--html PATH, --junit PATH, --report PATH, --markdown PATH), or run \
         the tests with one asked for (--html or PROMPT_TESTER_HTML, ...) and it is written to the same path"
    )]
    NothingAsked,
    /// A report could not be written (said on stderr).
    #[error("a report could not be written (above)")]
    Unwritten,
}

/// Merges the partitions `request` names and writes the reports.
pub fn report(request: &Request) -> Result<Done, ReportError> {
    let folders = if request.from.is_empty() {
        vec![results_dir(
            &request.root,
            crate::config::env_var(crate::report::results::RESULTS_VAR)
                .map(PathBuf::from)
                .as_deref(),
        )]
    } else {
        request.from.clone()
    };
    let partitions = folders
        .iter()
        .map(|dir| partition(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let folders: Vec<PathBuf> = partitions.iter().map(|p| p.folder.clone()).collect();
    let merged = merge(partitions)?;
    let named = Asked {
        junit: request.junit.clone(),
        json: request.json.clone(),
        html: request.html.clone(),
    };
    let asked = if named == Asked::default() {
        merged.asked.clone()
    } else {
        named
    };
    let markdown = Markdown::read(request.markdown.as_deref(), false)?;
    if asked == Asked::default() && markdown == Markdown::default() {
        return Err(ReportError::NothingAsked);
    }
    let config = Config::load(&request.root)?;
    let commands = Commands::new(None);
    let records = &merged.records;
    let say = |text: &str| eprint!("{}", crate::redact::for_terminal(text));
    summary::print(
        records,
        Duration::try_from_secs_f64(merged.run.wall_secs).unwrap_or_default(),
        &commands,
    );
    let calibrated = calibration::after_run(&config, &merged.observations, &commands);
    for error in &calibrated.errors {
        say(&format!("warning: {error}\n"));
    }
    let calibrated = calibrated.report;
    if let Some(report) = &calibrated {
        say(&calibration::render(
            report,
            &calibration::judged_suites(records),
        ));
    }
    let pending = crate::cassette::pending::pending_in(
        &pending_dir(&request.root, &config),
        &config.cassette_dir,
    );
    let mut extras = html::Extras {
        matrix: matrix::compute(records).map(|m| matrix::table(&m)),
        baseline: None,
        pending: pending.as_deref().ok().and_then(pending::table),
    };
    let mut failed = records.iter().any(|r| {
        matches!(
            r.status,
            crate::outcome::Status::Failed | crate::outcome::Status::Errored
        )
    });
    let then = match &request.baseline {
        Some(path) => Some(baseline::load(path, &commands)?),
        None => None,
    };
    let alpha = crate::defaults::BASELINE_ALPHA;
    if let (Some(path), Some(then)) = (&request.baseline, &then) {
        let now = baseline::figures_of_records(records);
        let comparison = baseline::compare(then, &now, alpha);
        say(&comparison.render(path));
        extras.baseline = Some(comparison.table(path));
        failed |= comparison.failure().is_some();
    }
    let run = &merged.run;
    let info = html::RunInfo {
        date: run.date.clone(),
        commit: run.commit.clone().or_else(|| git_commit(&request.root)),
        judge: run.judge.clone(),
        cassette_mode: run.cassette_mode.clone(),
        wall_secs: run.wall_secs,
        started_unix: run.started_unix,
        nextest_run: run.nextest.then(|| run.run.clone()),
        budget: merged.budget.clone(),
    };
    let (labelled, unread_labels) = crate::calibration::corrected::read(&config);
    for error in &unread_labels {
        say(&format!("error: {error}"));
    }
    failed |= !unread_labels.is_empty();
    say(&crate::calibration::corrected::render(
        &crate::calibration::corrected::corrected(records, &labelled),
    ));
    let rendered = Rendered {
        records,
        calibration: calibrated.as_ref(),
        labels: &labelled,
        extras: &extras,
        info: &info,
    };
    let mut written = rendered.write(&asked);
    let context = markdown::Context {
        target: None,
        baseline: request
            .baseline
            .as_deref()
            .zip(then.as_ref())
            .map(|(path, figures)| markdown::Baseline {
                path,
                figures,
                alpha,
            }),
        pending: pending.as_deref().unwrap_or_default(),
        budget: merged.budget.as_ref(),
    };
    for (path, e) in markdown::write(&markdown, records, &context) {
        eprintln!(
            "error: cannot write the Markdown summary {}: {e}",
            crate::redact::for_terminal(&path.display().to_string())
        );
        written = false;
    }
    if !written {
        return Err(ReportError::Unwritten);
    }
    Ok(Done {
        folders,
        trials: records.len(),
        written: [asked.junit, asked.json, asked.html, markdown.file]
            .into_iter()
            .flatten()
            .collect(),
        failed,
    })
}

/// Where the crate's pending recordings are: `PROMPT_TESTER_PENDING_DIR` (relative to the crate
/// root), else beside the cassettes.
fn pending_dir(root: &Path, config: &Config) -> PathBuf {
    crate::config::env_var(crate::harness::PENDING_DIR)
        .map(|dir| root.join(dir))
        .unwrap_or_else(|| config.cassette_dir.clone())
}
