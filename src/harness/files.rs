//! Report files on disk: atomic writes, the lock that lets nextest's processes take turns, and the
//! record store that merges a nextest run's records beside a report.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::harness::record::{Latency, TrialRecord};
use crate::redact::redact;

/// The records of a nextest run so far, kept beside a report (`.NAME.records.json`).
#[derive(Serialize, Deserialize)]
struct RunRecords {
    nextest_run: String,
    records: Vec<StoredRecord>,
}

/// A record with the latencies the reports leave out (the matrix's mean needs them).
#[derive(Serialize, Deserialize)]
struct StoredRecord {
    #[serde(flatten)]
    record: TrialRecord,
    latency_secs: f64,
    latency_samples: u32,
}

/// Writes the report `render` makes of `records` to `path`. Under nextest every trial is its own process
/// and each writes the report: the records of the run (`nextest_run`) so far are kept beside it, merged
/// by trial name under the report's lock, so the report holds every trial of the run, not only the last
/// process's. A record file of another run is replaced.
pub(crate) fn write_run_report(
    path: &Path,
    records: &[TrialRecord],
    nextest_run: Option<&str>,
    render: impl FnOnce(&[TrialRecord]) -> std::io::Result<String>,
) -> std::io::Result<()> {
    let Some(run) = nextest_run else {
        return write_atomically(path, render(records)?.as_bytes());
    };
    let (dir, name) = dir_and_name(path)?;
    let store = dir.join(format!(".{}.records.json", name.to_string_lossy()));
    update_locked(path, |_| {
        let earlier = std::fs::read_to_string(&store)
            .ok()
            .and_then(|text| serde_json::from_str::<RunRecords>(&text).ok())
            .filter(|stored| stored.nextest_run == run)
            .map(|stored| stored.records)
            .unwrap_or_default();
        let mut merged: BTreeMap<String, TrialRecord> = earlier
            .into_iter()
            .map(|s| {
                let mut record = s.record;
                record.latency = Latency {
                    total: Duration::try_from_secs_f64(s.latency_secs).unwrap_or_default(),
                    samples: s.latency_samples,
                };
                (record.name.clone(), record)
            })
            .collect();
        for r in records {
            merged.insert(r.name.clone(), r.clone());
        }
        let merged: Vec<TrialRecord> = merged.into_values().collect();
        let stored = RunRecords {
            nextest_run: run.to_string(),
            records: merged
                .iter()
                .map(|r| StoredRecord {
                    record: r.clone(),
                    latency_secs: r.latency.total.as_secs_f64(),
                    latency_samples: r.latency.samples,
                })
                .collect(),
        };
        let text = serde_json::to_string(&stored).map_err(std::io::Error::other)?;
        write_atomically(&store, redact(&text).as_bytes())?;
        render(&merged)
    })
}

/// Rewrites `path` with `update(its current text)`, holding a lock file beside it, so that processes
/// writing the same report (nextest runs one per trial) take turns and each sees the others' writes.
/// The lock file (`.NAME.lock`) is never deleted, as with cassettes: deleting it while a process waits
/// on it would let that process and a newcomer both hold "the" lock.
pub(crate) fn update_locked(
    path: &Path,
    update: impl FnOnce(Option<&str>) -> std::io::Result<String>,
) -> std::io::Result<()> {
    let (dir, name) = dir_and_name(path)?;
    std::fs::create_dir_all(dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!(".{}.lock", name.to_string_lossy())))?;
    lock.lock()?;
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let written = update(old.as_deref()).and_then(|text| write_atomically(path, text.as_bytes()));
    drop(lock);
    written
}

/// The directory (`.` when none is named) and the file name of a report path.
fn dir_and_name(path: &Path) -> std::io::Result<(&Path, &std::ffi::OsStr)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the report path names no file"))?;
    Ok((dir, name))
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, name) = dir_and_name(path)?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
