//! The results folder: each process of a run writes what it found to a fragment of its own, never
//! rewriting what others wrote; the merged reports are rendered once from the fragments (by the run
//! itself under `cargo test`, by `cargo prompt-tester report` under nextest and across machines).
//!
//! `PROMPT_TESTER_RESULTS` (else `<crate>/.prompt-tester/results/`) holds a folder per run, named by
//! its id (nextest's `NEXTEST_RUN_ID`, else one of the harness's own) and marked by [`RUN_MARKER`];
//! the last [`KEPT_RUNS`] marked ones are kept, and nothing else the folder holds is touched. A
//! fragment holds one process's trial records (with the latencies the reports leave out), its
//! calibration verdicts, its view of the budget, and what the finish needs of the run (when it ran,
//! the judge, the cassette mode, the reports it was asked for). Merging them is `merge.rs`'s.

mod merge;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use merge::{Partition, merge};

use super::ReportError;
use crate::budget::BudgetReport;
use crate::checks::Observation;
use crate::record::{Latency, TrialRecord};

/// The variable naming the results folder.
pub const RESULTS_VAR: &str = "PROMPT_TESTER_RESULTS";

/// The results folder's place in the crate when the variable is unset.
pub const DEFAULT_DIR: &str = "results";

/// How many runs a results folder keeps (the oldest go first).
pub const KEPT_RUNS: usize = 10;

/// The format of a fragment, written in it: a reader refuses another.
const FORMAT: u32 = 1;

/// Report paths asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Asked {
    /// JUnit XML.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junit: Option<PathBuf>,
    /// The JSON report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<PathBuf>,
    /// The HTML report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<PathBuf>,
}

impl Asked {
    /// These paths, or why this build cannot write one of them: said before a run, not after it.
    pub(crate) fn writable(self) -> Result<Self, ReportError> {
        if self.junit.is_some() && !cfg!(feature = "junit") {
            return Err(ReportError::JunitOff);
        }
        Ok(self)
    }
}

/// What one process of a run leaves in the run's folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Fragment {
    /// [`FORMAT`].
    pub format: u32,
    /// The process and the run it belongs to.
    pub process: Process,
    /// The trials it ran.
    pub records: Vec<Stored>,
    /// The calibration verdicts its trials noted.
    #[serde(default)]
    pub observations: Vec<Observation>,
    /// The run's budget as this process saw it at its end (the ledger's figures under nextest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
}

/// What a fragment says of its process and run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Process {
    /// The run id.
    pub run: String,
    /// nextest ran it.
    pub nextest: bool,
    /// nextest's `NEXTEST_ATTEMPT` (1 for the first), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Unix time its trials started, seconds.
    pub started_unix: f64,
    /// Its wall time, seconds.
    pub wall_secs: f64,
    /// When it ended (RFC 3339, UTC).
    pub date: String,
    /// `GITHUB_SHA`, when set (else the report asks git when it renders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The judge (`provider/model`), if configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The cassette mode.
    pub cassette_mode: String,
    /// The test target (`cargo test --test <target>`), for the commands the reports name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The reports the run was asked for (absolute paths): `cargo prompt-tester report` writes them
    /// when it is given none.
    #[serde(default)]
    pub reports: Asked,
}

/// A record with the latencies the reports leave out (the matrix's mean needs them).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stored {
    #[serde(flatten)]
    record: TrialRecord,
    latency_secs: f64,
    latency_samples: u32,
}

impl From<&TrialRecord> for Stored {
    fn from(record: &TrialRecord) -> Self {
        Self {
            record: record.clone(),
            latency_secs: record.latency.total.as_secs_f64(),
            latency_samples: record.latency.samples,
        }
    }
}

impl Stored {
    /// The record, its latencies restored.
    pub(crate) fn into_record(self) -> TrialRecord {
        let mut record = self.record;
        record.latency = Latency {
            total: Duration::try_from_secs_f64(self.latency_secs).unwrap_or_default(),
            samples: self.latency_samples,
        };
        record
    }

    /// The trial's name.
    pub(crate) fn name(&self) -> &str {
        &self.record.name
    }
}

/// The results folder of the crate at `root`: `set` (`PROMPT_TESTER_RESULTS`, relative to the crate
/// root), else `<root>/.prompt-tester/results`.
pub fn results_dir(root: &Path, set: Option<&Path>) -> PathBuf {
    match set {
        Some(dir) => root.join(dir),
        None => root.join(crate::shared::WORK_DIR).join(DEFAULT_DIR),
    }
}

/// Where a process of a run comes from, as its fragment says.
pub(crate) struct Origin<'a> {
    /// nextest ran it.
    pub nextest: bool,
    /// nextest's run id, when it said.
    pub run_id: Option<&'a str>,
    /// nextest's `NEXTEST_ATTEMPT`, when it said.
    pub attempt: Option<u32>,
    /// The test target.
    pub target: &'a str,
}

impl Fragment {
    /// What this process leaves: its records and verdicts, the run as `info` describes it, and the
    /// reports it was asked for (made absolute from `root`).
    pub(crate) fn of(
        records: &[TrialRecord],
        observations: &[Observation],
        info: &crate::report::html::RunInfo,
        origin: Origin<'_>,
        reports: &Asked,
        root: &Path,
    ) -> Self {
        let absolute = |p: &Option<PathBuf>| p.as_ref().map(|p| root.join(p));
        Self {
            format: FORMAT,
            process: Process {
                run: origin
                    .run_id
                    .map_or_else(|| own_run_id(info.started_unix), str::to_string),
                nextest: origin.nextest,
                attempt: origin.attempt,
                started_unix: info.started_unix,
                wall_secs: info.wall_secs,
                date: info.date.clone(),
                commit: info.commit.clone(),
                judge: info.judge.clone(),
                cassette_mode: info.cassette_mode.clone(),
                target: Some(origin.target.to_string()),
                reports: Asked {
                    junit: absolute(&reports.junit),
                    json: absolute(&reports.json),
                    html: absolute(&reports.html),
                },
            },
            records: records.iter().map(Stored::from).collect(),
            observations: observations.to_vec(),
            budget: info.budget.clone(),
        }
    }
}

/// A run id of the harness's own (a run not under nextest): when it started, then the process, so
/// the folders of a crate's runs sort by time.
fn own_run_id(started_unix: f64) -> String {
    let secs = started_unix as i64;
    let t = crate::utc::Utc::from_unix(secs);
    let date = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    format!("{date}-{}", std::process::id())
}

/// The file that makes a folder of the results folder a run's: only folders holding it are pruned or
/// read as runs (a results folder may be shared with other things, `target` or `.`). Not hidden, so
/// an artifact upload that leaves hidden files out keeps it.
pub const RUN_MARKER: &str = "prompt-tester-run";

/// Writes `fragment` into its run's folder under `results`: a file of this process's own, so no lock
/// is taken. The process that makes a run's folder marks it ([`RUN_MARKER`]) and prunes the oldest
/// marked runs beyond [`KEPT_RUNS`]; nothing else in `results` is touched. Returns the warning about
/// what else `results` holds, said by that process alone.
pub(crate) fn write(results: &Path, fragment: &Fragment) -> std::io::Result<Option<String>> {
    if results.ends_with(Path::new(crate::shared::WORK_DIR).join(DEFAULT_DIR))
        && let Some(work) = results.parent().and_then(Path::parent)
    {
        crate::shared::work_dir(work)?;
    }
    std::fs::create_dir_all(results)?;
    let run = results.join(folder_name(&fragment.process.run));
    // One process of a nextest run makes the folder: it alone prunes and warns.
    let new_run = match std::fs::create_dir(&run) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && run.is_dir() => false,
        Err(e) => return Err(e),
    };
    let marker = run.join(RUN_MARKER);
    if !marker.exists() {
        let text = format!(
            "prompt-tester run {}: this folder goes when the results folder holds more than {KEPT_RUNS} newer runs",
            fragment.process.run
        );
        crate::shared::replace(&marker, text.as_bytes())?;
    }
    let mut others = None;
    if new_run {
        prune(results, &run);
        others = others_notice(results, &others_in(results));
    }
    let name = format!(
        "{:020}-{}.json",
        (fragment.process.started_unix * 1e6) as u64,
        std::process::id()
    );
    let path = run.join(name);
    let json = serde_json::to_string(fragment).map_err(std::io::Error::other)?;
    crate::shared::replace(&path, crate::redact::redact(&json).as_bytes())?;
    Ok(others)
}

/// A run id as a folder name: what is not a letter, digit, `-` or `_` becomes `_`.
fn folder_name(run: &str) -> String {
    run.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Removes the oldest run folders beyond [`KEPT_RUNS`] (never `keep`, the run being written).
fn prune(results: &Path, keep: &Path) {
    let mut runs = runs_in(results);
    if runs.len() <= KEPT_RUNS {
        return;
    }
    runs.sort_by_key(|(_, modified)| *modified);
    let excess = runs.len() - KEPT_RUNS;
    for (dir, _) in runs.into_iter().take(excess) {
        if dir != keep {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Whether `dir` is a run's folder: it holds [`RUN_MARKER`].
fn is_run(dir: &Path) -> bool {
    dir.join(RUN_MARKER).is_file()
}

/// The run folders in a results folder, with when each was last written.
fn runs_in(results: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let Ok(entries) = std::fs::read_dir(results) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && is_run(&e.path()))
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?)))
        .collect()
}

/// The names of what a results folder holds besides run folders, sorted.
fn others_in(results: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(results) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| !is_run(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What is said of a results folder holding `others` besides its runs (`None` when it holds none).
fn others_notice(results: &Path, others: &[String]) -> Option<String> {
    const NAMED: usize = 3;
    if others.is_empty() {
        return None;
    }
    let mut named = others
        .iter()
        .take(NAMED)
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if others.len() > NAMED {
        named.push_str(&format!(" and {} more", others.len() - NAMED));
    }
    Some(format!(
        "the results folder {} holds other things than prompt-tester's runs ({named}): they are left \
         alone, and only run folders (those holding `{RUN_MARKER}`) are pruned; set {RESULTS_VAR} to a \
         folder of its own to keep them apart",
        results.display()
    ))
}

/// The fragment files of one run's folder.
fn fragments_in(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let io = |source| ReportError::ResultsUnreadable {
        path: dir.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The partition a folder holds: one run's folder (it holds fragments), or a results folder, whose
/// latest run is taken.
pub(crate) fn partition(dir: &Path) -> Result<Partition, ReportError> {
    let mut run = dir.to_path_buf();
    let mut files = fragments_in(dir)?;
    if files.is_empty() {
        let latest = runs_in(dir)
            .into_iter()
            .max_by_key(|(_, modified)| *modified);
        let Some((latest, _)) = latest else {
            return Err(ReportError::NoResults {
                path: dir.to_path_buf(),
            });
        };
        files = fragments_in(&latest)?;
        run = latest;
    }
    if files.is_empty() {
        return Err(ReportError::NoResults { path: run });
    }
    let fragments = files
        .iter()
        .map(|path| read(path))
        .collect::<Result<_, _>>()?;
    Ok(Partition {
        folder: run,
        fragments,
    })
}

/// One fragment file.
fn read(path: &Path) -> Result<Fragment, ReportError> {
    let text = crate::text::read(path).map_err(|source| ReportError::ResultsUnreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let invalid = |why: String| ReportError::NotAFragment {
        path: path.to_path_buf(),
        why,
    };
    let format = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| invalid(e.to_string()))?["format"]
        .as_u64();
    if format != Some(u64::from(FORMAT)) {
        return Err(invalid(format!(
            "format {}, this prompt-tester reads {FORMAT}",
            format.map_or("none".to_string(), |f| f.to_string())
        )));
    }
    serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
mod tests;
