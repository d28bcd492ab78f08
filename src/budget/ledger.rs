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

    /// The spend now (nothing when the file cannot be read).
    pub fn read(&self) -> Spend {
        self.update(|spend| *spend).unwrap_or_default()
    }
}

/// Reads the ledger at `path` under its lock (`shared::Shared`, in the same folder), applies `edit`,
/// and writes it back. A file of another run (or none, or one that does not parse) starts from nothing.
fn locked<T>(path: &Path, run: &str, edit: impl FnOnce(&mut Spend) -> T) -> std::io::Result<T> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::cassette::work_dir(dir.parent().unwrap_or(Path::new(".")))?;
    let shared = Shared::new(path, dir);
    let turn = shared.lock()?;
    let mut spend = turn
        .read()
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str::<LedgerFile>(&text).ok())
        .filter(|file| file.nextest_run == run)
        .map(|file| file.spend)
        .unwrap_or_default();
    let out = edit(&mut spend);
    let text = serde_json::to_string(&LedgerFile {
        nextest_run: run.to_string(),
        spend,
    })
    .map_err(std::io::Error::other)?;
    turn.replace(text.as_bytes())?;
    Ok(out)
}
