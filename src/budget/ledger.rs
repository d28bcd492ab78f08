//! Where a budget's spend is kept: in the process, or in one file every nextest process of a run
//! shares (`<crate>/.prompt-tester/budget.json`, the run's id inside), read and rewritten under a lock
//! file beside it, so that reserving is one step for the whole run.

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

/// The ledger file's name in the crate's `.prompt-tester/` folder.
pub const FILE: &str = "budget.json";

impl Ledger {
    pub fn local() -> Self {
        Ledger::Local(Mutex::new(Spend::default()))
    }

    pub fn shared(root: &Path, run: &str) -> Self {
        Ledger::Shared {
            path: root.join(crate::cassette::WORK_DIR).join(FILE),
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

/// What the ledger's text (`text`, as its turn read it) says run `run` has spent: nothing when there
/// is no file or it is another run's; `Err` says why the run's spend is unknown (the file unreadable,
/// corrupt, or already found so during this run).
fn read(text: std::io::Result<Option<String>>, run: &str) -> Result<Spend, String> {
    let text = match text {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Spend::default()),
        Err(e) => return Err(format!("unreadable ({e})")),
    };
    let file = serde_json::from_str::<LedgerFile>(&text).map_err(|e| format!("corrupt ({e})"))?;
    if file.nextest_run != run {
        return Ok(Spend::default());
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
/// and writes it back. A file of another run (or none) starts from nothing. A file this run cannot use
/// refuses the edit, and is rewritten as this run's, marked unusable: the run's other processes refuse
/// their calls too, and a later run starts anew.
fn locked<T>(path: &Path, run: &str, edit: impl FnOnce(&mut Spend) -> T) -> std::io::Result<T> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::cassette::work_dir(dir.parent().unwrap_or(Path::new(".")))?;
    let shared = Shared::new(path, dir);
    let turn = shared.lock()?;
    let (mut spend, unusable) = match read(turn.read(), run) {
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

/// Why a call is refused when the run's ledger is unusable, and how to clear it.
fn unusable_error(problem: String) -> std::io::Error {
    std::io::Error::other(format!(
        "{problem}, so this nextest run's spend is unknown and its calls are refused; delete the file \
         to clear it (a later nextest run starts a new ledger)"
    ))
}
