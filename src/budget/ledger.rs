//! Where a budget's spend is kept: in the process, or in a file every nextest process of a run
//! shares, read and rewritten under a lock file beside it, so that reserving is one step for the whole
//! run. Each nextest run has a file of its own (`<crate>/.prompt-tester/budget/<run id>.json`): two
//! runs at once (two terminals, a watcher, two partitions on one machine) never see each other's
//! spend, let alone read it as nothing. A run's first write drops the files of runs not written for
//! [`STALE_AFTER`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::shared::Shared;

/// What has been spent and what is held for calls in flight, USD.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Settled: the real cost of the calls made.
    pub spent: f64,
    /// Held for calls in flight (their worst cases).
    pub reserved: f64,
    /// Calls refused for the budget (by every process of a nextest run).
    #[serde(default)]
    pub refused: u64,
}

/// The ledger file as written.
#[derive(Serialize, Deserialize)]
struct LedgerFile {
    nextest_run: String,
    #[serde(flatten)]
    spend: Spend,
    /// Why the run's spend is unknown (the file was found unreadable or corrupt during the run): every
    /// later call of the run is refused. A later run, another id, starts from nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unusable: Option<String>,
}

/// A budget's state.
#[derive(Debug)]
pub enum Ledger {
    /// In this process.
    Local(Mutex<Spend>),
    /// In the run's ledger file, shared by the processes of nextest run `run`.
    Shared {
        /// The file.
        path: PathBuf,
        /// `NEXTEST_RUN_ID`.
        run: String,
        /// Held while this process reads and writes the file: its threads take turns too.
        turn: Mutex<()>,
    },
}

/// The folder of the ledger files in the crate's `.prompt-tester/` folder.
pub const DIR: &str = "budget";

/// How long a run's ledger stays after its last write: an older one is another run's, long over.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

impl Ledger {
    pub fn local() -> Self {
        Ledger::Local(Mutex::new(Spend::default()))
    }

    pub fn shared(root: &Path, run: &str) -> Self {
        Ledger::Shared {
            path: path(root, run),
            run: run.to_string(),
            turn: Mutex::new(()),
        }
    }

    /// Applies `edit` to the spend as one step; `Err` names the file and what failed.
    pub fn update<T>(&self, edit: impl FnOnce(&mut Spend) -> T) -> Result<T, (PathBuf, String)> {
        match self {
            Ledger::Local(spend) => Ok(edit(&mut spend.lock().unwrap_or_else(|e| e.into_inner()))),
            Ledger::Shared { path, run, turn } => {
                let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
                locked(path, run, edit).map_err(|e| (path.clone(), e.to_string()))
            }
        }
    }

    /// The spend now; `Err` names the file and why it cannot be told.
    pub fn read(&self) -> Result<Spend, (PathBuf, String)> {
        self.update(|spend| *spend)
    }
}

/// The ledger file of nextest run `run` in the crate at `root`: named by the run id when it is a
/// plain name (nextest's are UUIDs), else by its hash, so two runs never share a file.
pub fn path(root: &Path, run: &str) -> PathBuf {
    let plain = !run.is_empty()
        && run.len() <= 128
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let stem = if plain {
        run.to_string()
    } else {
        format!("~{}", &crate::text::digest_of_parts([run])[..32])
    };
    root.join(crate::shared::WORK_DIR)
        .join(DIR)
        .join(format!("{stem}.json"))
}

/// What the ledger's text (`text`, as its turn read it) says run `run` has spent: nothing when there
/// is no file; `Err` says why the run's spend is unknown (the file unreadable, corrupt, another run's,
/// or already found so during this run).
fn read(text: std::io::Result<Option<String>>, run: &str) -> Result<Spend, String> {
    let text = match text {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Spend::default()),
        Err(e) => return Err(format!("unreadable ({e})")),
    };
    let file = serde_json::from_str::<LedgerFile>(&text).map_err(|e| format!("corrupt ({e})"))?;
    if file.nextest_run != run {
        return Err(format!(
            "corrupt (it holds nextest run {}, not {run})",
            file.nextest_run
        ));
    }
    if let Some(problem) = file.unusable {
        return Err(problem);
    }
    let Spend {
        spent, reserved, ..
    } = file.spend;
    if !(spent >= 0.0 && reserved >= 0.0 && spent.is_finite() && reserved.is_finite()) {
        return Err(format!(
            "corrupt (spent {spent}, reserved {reserved}: amounts are never negative)"
        ));
    }
    Ok(file.spend)
}

/// Reads the ledger at `path` under its lock (`shared::Shared`, in the same folder), applies `edit`,
/// and writes it back. No file starts from nothing (and drops the stale files of other runs). A file
/// this run cannot use refuses the edit, and is rewritten marked unusable: the run's other processes
/// refuse their calls too, and a later run, with a file of its own, starts anew.
fn locked<T>(path: &Path, run: &str, edit: impl FnOnce(&mut Spend) -> T) -> std::io::Result<T> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(work) = dir.parent().and_then(Path::parent) {
        crate::shared::work_dir(work)?;
    }
    let shared = Shared::new(path, dir);
    let turn = shared.lock()?;
    let text = turn.read();
    if matches!(text, Ok(None)) {
        drop_stale(dir, path, std::time::SystemTime::now());
    }
    let (mut spend, unusable) = match read(text, run) {
        Ok(spend) => (spend, None),
        Err(problem) => (Spend::default(), Some(problem)),
    };
    let out = unusable.is_none().then(|| edit(&mut spend));
    let text = serde_json::to_string(&LedgerFile {
        nextest_run: run.to_string(),
        spend,
        unusable: unusable.clone(),
    })
    .map_err(std::io::Error::other)?;
    if let Err(e) = turn.replace(text.as_bytes()) {
        return Err(unusable.map_or(e, unusable_error));
    }
    drop(turn);
    out.ok_or_else(|| unusable_error(unusable.unwrap_or_default()))
}

/// Removes the ledger files in `dir` (with their lock and temporary files) last written more than
/// [`STALE_AFTER`] before `now`, except `mine`. Best effort: a file that cannot go stays.
fn drop_stale(dir: &Path, mine: &Path, now: std::time::SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > STALE_AFTER));
        if path == mine || path.extension().is_none_or(|e| e != "json") || !stale {
            continue;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        for gone in [
            path.clone(),
            dir.join(format!("{name}.lock")),
            dir.join(format!("{name}.tmp")),
        ] {
            let _ = std::fs::remove_file(gone);
        }
    }
}

/// Why a call is refused when the run's ledger is unusable, and how to clear it.
fn unusable_error(problem: String) -> std::io::Error {
    std::io::Error::other(format!(
        "{problem}, so this nextest run's spend is unknown and its calls are refused; delete the file \
         to clear it (a later nextest run starts a new ledger)"
    ))
}
