//! Cassettes: model calls recorded once into committed JSON files and replayed offline.
//!
//! One file per test (or per suite): `<cassette_dir>/<name>.cassette.json` (`name.rs` keeps two names
//! from sharing one). Entries are keyed by a hash of what decides the answer (provider, model, the
//! rendered request, the run index) and by the test target that recorded them (`owner.rs`), and
//! written in a stable order, pretty-printed, so that a diff reviews well. Writes go to a temporary file
//! that is renamed over the old one while holding a lock file, so concurrent trials (threads or
//! processes) never lose each other's entries and a killed run never leaves a truncated cassette. Lock
//! and temporary files live in [`WORK_DIR`], which ignores itself for git.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub mod decision;
mod entry;
mod name;
mod owner;
mod store;

pub use entry::{
    Entry, Exchange, FORMAT_VERSION, FileBody, OLDEST_VERSION, Recorded, embedding_key, entry_key,
    latency_of, now_rfc3339,
};
pub use owner::Target;
pub use store::{Blocker, CassetteStore};

use crate::redact::redact;
use owner::{Recordings, Slot};

/// How cassettes are used, from `PROMPT_TESTER_CASSETTE` or the `--record` / `--no-cassette` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CassetteMode {
    /// Replay if recorded; otherwise call and record when the provider's key is set; otherwise ignore
    /// the trial with a reason.
    #[default]
    Auto,
    /// Replay only; a missing recording fails.
    Replay,
    /// Always call and overwrite the recording.
    Record,
    /// Always call; record nothing.
    Off,
}

impl CassetteMode {
    /// The environment variable that sets the mode.
    pub const ENV: &'static str = "PROMPT_TESTER_CASSETTE";

    /// Parses a mode name; unknown names are an error that lists the valid ones.
    pub fn parse(value: &str) -> Result<Self, ModeError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "replay" => Ok(Self::Replay),
            "record" => Ok(Self::Record),
            "off" => Ok(Self::Off),
            _ => Err(ModeError(value.to_string())),
        }
    }

    /// The mode's name, as `PROMPT_TESTER_CASSETTE` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Replay => "replay",
            Self::Record => "record",
            Self::Off => "off",
        }
    }

    /// The mode from the environment (`Auto` when unset).
    pub fn from_env() -> Result<Self, ModeError> {
        match crate::config::env_var(Self::ENV) {
            Some(value) => Self::parse(&value),
            None => Ok(Self::Auto),
        }
    }
}

/// A `PROMPT_TESTER_CASSETTE` value that names no mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{env}={0:?} is not a cassette mode: use one of auto, replay, record, off", env = CassetteMode::ENV)]
pub struct ModeError(pub String);

/// A cassette file error.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// Reading or writing failed.
    #[error("cassette {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a cassette: most often a merge left conflict markers in it.
    #[error(
        "cassette {}:{line} is not valid: {message}; {}",
        path.display(),
        invalid_advice(path, *conflict, rerecord.as_deref())
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line the reader stopped at (the first conflict marker's, when there is one).
        line: usize,
        /// The file holds merge conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`).
        conflict: bool,
        /// serde's message.
        message: String,
        /// The command that re-records this file alone, when the cassette's name is known.
        rerecord: Option<String>,
    },
    /// The file is of a format version this prompt-tester does not read.
    #[error(
        "cassette {} is in format version {version}, which this prompt-tester does not read (it reads \
         versions {OLDEST_VERSION} to {FORMAT_VERSION}); {}",
        path.display(),
        if *version > FORMAT_VERSION {
            "a newer prompt-tester wrote it: upgrade prompt-tester".to_string()
        } else {
            format!("restore it from version control (`git checkout -- {}`)", path.display())
        }
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its `version`.
        version: u32,
    },
}

/// The directory, inside the cassette directory, of the lock and temporary files of writes. It holds a
/// `.gitignore` of `*` (as cargo's `target/` does), so git never shows them, even after a `kill -9`.
pub const WORK_DIR: &str = ".prompt-tester";

const WORK_DIR_GITIGNORE: &str =
    "# Written by prompt-tester: lock and temporary files of cassette writes.\n*\n";

/// Creates `<dir>/.prompt-tester` with its `.gitignore` and returns its path. The `.gitignore` is
/// rewritten when it is not ours, so one left empty by a process killed while writing it is mended.
fn work_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let work = dir.join(WORK_DIR);
    fs::create_dir_all(&work)?;
    let ignore = work.join(".gitignore");
    if fs::read_to_string(&ignore).ok().as_deref() != Some(WORK_DIR_GITIGNORE) {
        fs::write(&ignore, WORK_DIR_GITIGNORE)?;
    }
    Ok(work)
}

/// What [`Cassette::prune`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// Entries removed.
    pub removed: usize,
    /// Entries kept (this target's and every other's).
    pub kept: usize,
    /// Entries that named no target and now name this one (`--claim-cassettes`).
    pub claimed: usize,
    /// The file held nothing else, and is gone (only a file no trial of this run opened).
    pub deleted: bool,
}

/// One cassette file, loaded once and shared by every trial that uses it.
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    /// The test target this process runs: it records as this target and prunes only its entries.
    target: Target,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: Recordings,
    /// Whether the file held entries when it was loaded (a missing entry then means the test changed).
    recorded: bool,
    used: BTreeSet<Slot>,
    /// Recorded but not yet written.
    pending: Vec<Entry>,
    last_write: Option<Instant>,
}

/// What a write does to the file as it is on disk (another process may have written it since).
#[derive(Default)]
struct Edit<'a> {
    /// Recorded since the last write.
    new: &'a [Entry],
    /// Entries to remove.
    remove: BTreeSet<Slot>,
    /// Keys whose entry naming no target becomes this target's.
    claim: BTreeSet<String>,
    /// Delete the file when nothing is left in it.
    delete_if_empty: bool,
}

/// Recordings are written at most this often (and at the end of the run): rewriting the whole file
/// for every entry made recording quadratic in the entries of one cassette.
const WRITE_INTERVAL: Duration = Duration::from_secs(1);

impl Cassette {
    fn load(path: PathBuf, target: Target) -> Result<Self, CassetteError> {
        let entries = Recordings::new(read_entries(&path)?);
        let recorded = !entries.is_empty();
        Ok(Self {
            path,
            target,
            state: Mutex::new(State {
                entries,
                recorded,
                ..State::default()
            }),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file name, for messages.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The recorded entry for `key` (this target's own first, see [`Recordings::find`]), marking it
    /// used.
    pub fn lookup(&self, key: &str) -> Option<Entry> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let entry = state.entries.find(key, &self.target).cloned();
        if let Some(entry) = &entry {
            state.used.insert((entry.target.clone(), key.to_string()));
        }
        entry
    }

    /// How many entries the file held when loaded, if it held any.
    pub fn recorded_len(&self) -> Option<usize> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.recorded.then_some(state.entries.len())
    }

    /// Adds (or replaces) this target's entry; the file is written at most once a second and by
    /// [`Cassette::flush`].
    pub fn record(&self, mut entry: Entry) -> Result<(), CassetteError> {
        entry.target = self.target.clone();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.used.insert((entry.target.clone(), entry.key.clone()));
        state.entries.record(entry.clone());
        state.pending.push(entry);
        if state
            .last_write
            .is_none_or(|t| t.elapsed() >= WRITE_INTERVAL)
        {
            self.flush_locked(&mut state)?;
        }
        Ok(())
    }

    /// Writes the recordings not written yet.
    pub fn flush(&self) -> Result<(), CassetteError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.flush_locked(&mut state)
    }

    fn flush_locked(&self, state: &mut State) -> Result<(), CassetteError> {
        if state.pending.is_empty() {
            return Ok(());
        }
        self.write_merged(Edit {
            new: &state.pending,
            ..Edit::default()
        })?;
        state.pending.clear();
        state.last_write = Some(Instant::now());
        Ok(())
    }

    /// Marks the entries recorded by trial `test` (or by its `::run_N` trials) as used, though it did
    /// not run: a case skipped on purpose keeps its recordings through a prune.
    pub fn keep_recordings_of(&self, test: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let runs = format!("{test}::");
        let slots: Vec<Slot> = state
            .entries
            .iter()
            .filter(|e| e.test == test || e.test.starts_with(&runs))
            .map(|e| (e.target.clone(), e.key.clone()))
            .collect();
        state.used.extend(slots);
    }

    /// How many entries name no target and were not used in this run: whether another target uses
    /// them, no prune can tell.
    pub fn unattributed(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .entries
            .iter()
            .filter(|e| e.target.is_none() && !state.used.contains(&(None, e.key.clone())))
            .count()
    }

    /// Removes this target's entries not used in this run; with `claim`, entries that name no target
    /// count as this target's (the used ones are rewritten naming it). Other targets' entries stay.
    pub fn prune(&self, claim: bool) -> Result<Pruned, CassetteError> {
        self.prune_with(claim, false)
    }

    /// Rewrites the entries that name no target and that this run used as this target's; returns how
    /// many.
    pub fn claim_used(&self) -> Result<usize, CassetteError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.flush_locked(&mut state)?;
        if self.target.is_none() {
            return Ok(0);
        }
        let used: Vec<String> = state
            .used
            .iter()
            .filter(|(target, _)| target.is_none())
            .map(|(_, key)| key.clone())
            .collect();
        let mut claim = BTreeSet::new();
        for key in used {
            if state.entries.claim(&key, &self.target) {
                claim.insert(key);
            }
        }
        let claimed = claim.len();
        if claimed > 0 {
            self.write_merged(Edit {
                claim,
                ..Edit::default()
            })?;
        }
        Ok(claimed)
    }

    /// [`Cassette::prune`]; with `delete_if_empty`, a file left with no entry is deleted.
    fn prune_with(&self, claim: bool, delete_if_empty: bool) -> Result<Pruned, CassetteError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.flush_locked(&mut state)?;
        let mine = |entry: &Entry| match (&self.target, &entry.target) {
            (Some(this), Some(theirs)) => this == theirs,
            (Some(_), None) => claim,
            // A process that cannot tell its target owns nothing.
            (None, _) => false,
        };
        let mut edit = Edit {
            delete_if_empty,
            ..Edit::default()
        };
        for entry in state.entries.iter().filter(|e| mine(e)) {
            let slot = (entry.target.clone(), entry.key.clone());
            if !state.used.contains(&slot) {
                edit.remove.insert(slot);
            } else if entry.target.is_none() {
                edit.claim.insert(entry.key.clone());
            }
        }
        for slot in &edit.remove {
            state.entries.remove(slot);
        }
        for key in &edit.claim {
            state.entries.claim(key, &self.target);
        }
        let mut pruned = Pruned {
            removed: edit.remove.len(),
            kept: state.entries.len(),
            claimed: edit.claim.len(),
            deleted: false,
        };
        if pruned.removed + pruned.claimed > 0 {
            pruned.deleted = self.write_merged(edit)?;
        }
        Ok(pruned)
    }

    /// Under the lock: re-reads the file (another process may have recorded), applies `edit`, and
    /// writes atomically (a temporary file renamed over the cassette). Returns whether the file was
    /// deleted instead (`edit.delete_if_empty`, and nothing left).
    ///
    /// The lock file is never deleted: deleting it while a process waits on it would let that process
    /// and a newcomer (who creates a fresh file) both hold "the" lock and overwrite each other.
    fn write_merged(&self, edit: Edit<'_>) -> Result<bool, CassetteError> {
        let io = |source| CassetteError::Io {
            path: self.path.clone(),
            source,
        };
        let work = work_dir(self.path.parent().unwrap_or(Path::new("."))).map_err(io)?;
        let name = self.file_name();
        let lock_path = work.join(format!("{name}.lock"));
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io)?;
        lock.lock().map_err(io)?;
        let mut merged = Recordings::new(read_entries(&self.path)?);
        for entry in edit.new {
            merged.record(entry.clone());
        }
        for slot in &edit.remove {
            merged.remove(slot);
        }
        for key in &edit.claim {
            merged.claim(key, &self.target);
        }
        if edit.delete_if_empty && merged.is_empty() {
            let result = fs::remove_file(&self.path);
            drop(lock);
            return result.map(|()| true).map_err(io);
        }
        // Every file written is of the current version: one of an older version is rewritten only
        // when it is written anyway.
        let body = FileBody {
            version: FORMAT_VERSION,
            entries: merged.into_sorted(),
        };
        let json = serde_json::to_string_pretty(&body).expect("a cassette always serialises");
        let json = redact(&json);
        // Only the lock holder writes it: one name per cassette, overwritten after a killed writer.
        // Inside the cassette's directory (same file system), so the rename is atomic.
        let tmp = work.join(format!("{name}.tmp"));
        let result = (|| {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(json.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            fs::rename(&tmp, &self.path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        drop(lock);
        result.map(|()| false).map_err(io)
    }
}

/// What to do about a cassette that does not parse: never "delete it", which loses every recording.
fn invalid_advice(path: &Path, conflict: bool, rerecord: Option<&str>) -> String {
    let first = if conflict {
        "it holds merge conflict markers: resolve them (keep one side of each conflicting recording)".to_string()
    } else {
        format!(
            "restore it from version control (`git checkout -- {}`)",
            path.display()
        )
    };
    match rerecord {
        Some(command) => format!("{first}, or record this cassette again: `{command}`"),
        None => first,
    }
}

/// The entries of the cassette at `path` (none when it does not exist).
fn read_entries(path: &Path) -> Result<Vec<Entry>, CassetteError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(CassetteError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let body: FileBody = serde_json::from_str(&text).map_err(|e| {
        let marker = text.lines().position(|l| {
            ["<<<<<<<", "=======", ">>>>>>>"]
                .iter()
                .any(|m| l.starts_with(m))
        });
        CassetteError::Invalid {
            path: path.to_path_buf(),
            line: marker.map_or(e.line(), |i| i + 1),
            conflict: marker.is_some(),
            message: e.to_string(),
            rerecord: None,
        }
    })?;
    if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&body.version) {
        return Err(CassetteError::Version {
            path: path.to_path_buf(),
            version: body.version,
        });
    }
    Ok(body.entries)
}

#[cfg(test)]
mod tests;
