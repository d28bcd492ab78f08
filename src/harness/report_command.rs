//! `cargo prompt-tester report`: a run's results folders (the crate's last run, or the partitions
//! named by `--from`) merged and handed to the one report pipeline (`report::render`), which the end
//! of a `cargo test` run calls too.

use std::path::{Path, PathBuf};

use super::error::HarnessError;
use super::settings;
use crate::cassette::CassetteStore;
use crate::cassette::media::{MediaStore, reference_to};
use crate::commands::Commands;
use crate::config::Config;
use crate::record::{PREVIEW_MAX_BYTES, Status, TrialRecord};
use crate::report::ReportError;
use crate::report::markdown::Markdown;
use crate::report::results::{Asked, RESULTS_VAR, merge, partition, results_dir};
use crate::report::{baseline, html, render};

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
    /// `--baseline`: an earlier JSON report to compare with, as given (read from the current folder,
    /// named so in the reports).
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
    /// A trial failed or errored, or something the reports needed did not hold (said on stderr).
    pub failed: bool,
}

/// Merges the partitions `request` names and writes the reports.
pub fn report(request: &Request) -> Result<Done, HarnessError> {
    let folders = if request.from.is_empty() {
        vec![results_dir(
            &request.root,
            crate::config::env_var(RESULTS_VAR)
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
    let mut merged = merge(partitions)?;
    let named = Asked {
        junit: request.junit.clone(),
        json: request.json.clone(),
        html: request.html.clone(),
    };
    let asked = if named == Asked::default() {
        merged.asked.clone()
    } else {
        named
    }
    .writable()?;
    let markdown = settings::markdown(request.markdown.as_deref(), false)?;
    if asked == Asked::default() && markdown == Markdown::default() {
        return Err(ReportError::NothingAsked.into());
    }
    let config = Config::load(&request.root)?;
    previews_from_store(
        &mut merged.records,
        &MediaStore::beside(&config.cassette_dir),
    );
    let run = &merged.run;
    let commands = Commands::new(run.target.as_deref());
    let baseline = match &request.baseline {
        Some(path) => Some((
            baseline::Settings {
                path: path.clone(),
                alpha: crate::defaults::BASELINE_ALPHA,
                fail_on_regression: false,
            },
            baseline::load(path, &commands)?,
        )),
        None => None,
    };
    // The cassette folder, listed once for the labels and the pending recordings.
    let cassettes = CassetteStore::new(&config.cassette_dir)
        .with_pending_dir(Some(pending_dir(&request.root, &config)));
    let walked = crate::suite::Walked::of(&config);
    let pending = crate::cassette::awaiting::on_disk(&cassettes);
    let records = &merged.records;
    let info = html::RunInfo {
        date: run.date.clone(),
        commit: run.commit.clone(),
        judge: run.judge.clone(),
        cassette_mode: run.cassette_mode.clone(),
        wall_secs: run.wall_secs,
        started_unix: run.started_unix,
        nextest_run: run.nextest.then(|| run.run.clone()),
        budget: merged.budget.clone(),
    };
    let rendered = render::render(
        render::Results {
            records,
            observations: &merged.observations,
            info,
            commands: &commands,
            rate_limits: &[],
        },
        render::Outputs {
            config: &config,
            cassettes: &cassettes,
            walked: &walked,
            root: &request.root,
            reports: &asked,
            markdown: &markdown,
            baseline: baseline.as_ref().map(|(b, figures)| (b, figures)),
            pending: &pending,
            keep: None,
            warnings: Vec::new(),
            errors: Vec::new(),
        },
    );
    if rendered.unwritten {
        return Err(ReportError::Unwritten.into());
    }
    let failed = rendered.failed
        || records
            .iter()
            .any(|r| matches!(r.status, Status::Failed | Status::Errored));
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

/// The previews a report merged from results fragments lacks (a fragment holds none), read from the
/// media store where the run recorded the images; an image not stored there stays named only.
fn previews_from_store(records: &mut [TrialRecord], store: &MediaStore) {
    for media in records.iter_mut().flat_map(|r| &mut r.media) {
        if media.preview.is_some() || media.bytes > PREVIEW_MAX_BYTES as u64 {
            continue;
        }
        let Some(media_type) = crate::completion::MediaType::from_mime(&media.media_type) else {
            continue;
        };
        let file = store.path_of(&reference_to(&media.sha256, media_type));
        let part = std::fs::read(file)
            .ok()
            .and_then(|bytes| crate::completion::MediaPart::new(media.name.clone(), bytes).ok());
        // Only the bytes the trial sent: the name is the hash, but a file can be edited.
        if let Some(part) = part.filter(|p| p.sha256() == media.sha256) {
            media.preview = crate::record::preview_of(&part);
        }
    }
}

/// Where the crate's pending recordings are: `PROMPT_TESTER_PENDING_DIR` (relative to the crate
/// root), else beside the cassettes.
fn pending_dir(root: &Path, config: &Config) -> PathBuf {
    crate::config::env_var(crate::harness::PENDING_DIR)
        .map(|dir| root.join(dir))
        .unwrap_or_else(|| config.cassette_dir.clone())
}
