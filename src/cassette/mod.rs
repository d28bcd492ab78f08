//! Cassettes: model calls recorded once into committed JSON files and replayed offline.
//!
//! One file per test (or per suite): `<cassette_dir>/<name>.cassette.json`. Entries are keyed by a hash
//! of what decides the answer (provider, model, the rendered request, the run index) and written in a
//! stable order, pretty-printed, so that a diff reviews well. Writes go to a temporary file that is
//! renamed over the old one while holding a lock file, so concurrent trials (threads or processes)
//! never lose each other's entries and a killed run never leaves a truncated cassette. Lock and
//! temporary files live in [`WORK_DIR`], which ignores itself for git.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod decision;
mod entry;

pub use entry::{
    Entry, Exchange, FORMAT_VERSION, FileBody, Recorded, embedding_key, entry_key, latency_of,
    now_rfc3339,
};

use crate::redact::redact;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Entries removed.
    pub removed: usize,
    /// Entries kept.
    pub kept: usize,
}

/// One cassette file, loaded once and shared by every trial that uses it.
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Whether the file held entries when it was loaded (a missing entry then means the test changed).
    recorded: bool,
    used: BTreeSet<String>,
    /// Recorded but not yet written.
    pending: Vec<Entry>,
    last_write: Option<Instant>,
}

/// Recordings are written at most this often (and at the end of the run): rewriting the whole file
/// for every entry made recording quadratic in the entries of one cassette.
const WRITE_INTERVAL: Duration = Duration::from_secs(1);

impl Cassette {
    fn load(path: PathBuf) -> Result<Self, CassetteError> {
        let entries = read_entries(&path)?;
        let recorded = !entries.is_empty();
        Ok(Self {
            path,
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

    /// The recorded entry for `key`, marking it used.
    pub fn lookup(&self, key: &str) -> Option<Entry> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let entry = state.entries.get(key).cloned();
        if entry.is_some() {
            state.used.insert(key.to_string());
        }
        entry
    }

    /// How many entries the file held when loaded, if it held any.
    pub fn recorded_len(&self) -> Option<usize> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.recorded.then_some(state.entries.len())
    }

    /// Adds (or replaces) an entry; the file is written at most once a second and by [`Cassette::flush`].
    pub fn record(&self, entry: Entry) -> Result<(), CassetteError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.used.insert(entry.key.clone());
        state.entries.insert(entry.key.clone(), entry.clone());
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
        self.write_merged(&state.pending, None)?;
        state.pending.clear();
        state.last_write = Some(Instant::now());
        Ok(())
    }

    /// Marks the entries recorded by trial `test` (or by its `::run_N` trials) as used, though it did
    /// not run: a case skipped on purpose keeps its recordings through a prune.
    pub fn keep_recordings_of(&self, test: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let runs = format!("{test}::");
        let keys: Vec<String> = state
            .entries
            .values()
            .filter(|e| e.test == test || e.test.starts_with(&runs))
            .map(|e| e.key.clone())
            .collect();
        state.used.extend(keys);
    }

    /// Rewrites the file keeping only the entries used in this run.
    pub fn prune(&self) -> Result<Pruned, CassetteError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.flush_locked(&mut state)?;
        let used = state.used.clone();
        let before = state.entries.len();
        state.entries.retain(|key, _| used.contains(key));
        let kept = state.entries.len();
        if kept < before {
            self.write_merged(&[], Some(&used))?;
        }
        Ok(Pruned {
            removed: before - kept,
            kept,
        })
    }

    /// Under the lock: re-reads the file (another process may have recorded), merges `new`, keeps
    /// only `keep` if given, and writes atomically (a temporary file renamed over the cassette).
    ///
    /// The lock file is never deleted: deleting it while a process waits on it would let that process
    /// and a newcomer (who creates a fresh file) both hold "the" lock and overwrite each other.
    fn write_merged(
        &self,
        new: &[Entry],
        keep: Option<&BTreeSet<String>>,
    ) -> Result<(), CassetteError> {
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
        let mut merged = read_entries(&self.path)?;
        for entry in new {
            merged.insert(entry.key.clone(), entry.clone());
        }
        if let Some(keep) = keep {
            merged.retain(|key, _| keep.contains(key));
        }
        let mut entries: Vec<Entry> = merged.into_values().collect();
        entries.sort_by(|a, b| {
            (&a.test, a.run, a.role.as_str(), &a.key).cmp(&(
                &b.test,
                b.run,
                b.role.as_str(),
                &b.key,
            ))
        });
        let body = FileBody {
            version: FORMAT_VERSION,
            entries,
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
        result.map_err(io)
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

fn read_entries(path: &Path) -> Result<HashMap<String, Entry>, CassetteError> {
    let text = match crate::text::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
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
    Ok(body
        .entries
        .into_iter()
        .map(|e| (e.key.clone(), e))
        .collect())
}

/// Every cassette this process opened, loaded once each.
#[derive(Debug, Default)]
pub struct CassetteStore {
    dir: PathBuf,
    open: Mutex<BTreeMap<String, Arc<Cassette>>>,
}

impl CassetteStore {
    /// A store for the cassettes under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            open: Mutex::new(BTreeMap::new()),
        }
    }

    /// The file for a test or suite name: `a::b` becomes `a.b.cassette.json`.
    pub fn path_for(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{}.cassette.json", file_stem(name)))
    }

    /// The cassette for `name`, loaded on first use.
    pub fn open(&self, name: &str) -> Result<Arc<Cassette>, CassetteError> {
        let stem = file_stem(name);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cassette) = open.get(&stem) {
            return Ok(cassette.clone());
        }
        let cassette = Arc::new(Cassette::load(self.path_for(name)).map_err(|e| match e {
            CassetteError::Invalid {
                path,
                line,
                conflict,
                message,
                rerecord: None,
            } => CassetteError::Invalid {
                path,
                line,
                conflict,
                message,
                rerecord: Some(crate::commands::record(name, None)),
            },
            other => other,
        })?);
        open.insert(stem, cassette.clone());
        Ok(cassette)
    }

    /// Writes every opened cassette's pending recordings; returns the failures.
    pub fn flush_all(&self) -> Vec<CassetteError> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.values().filter_map(|c| c.flush().err()).collect()
    }

    /// Prunes every opened cassette to the entries used in this run; returns what each prune did.
    pub fn prune_all(&self) -> Vec<(PathBuf, Result<Pruned, CassetteError>)> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.values().map(|c| (c.path.clone(), c.prune())).collect()
    }

    /// Deletes the cassette files in the directory that no trial of this run opened (their tests are
    /// gone or renamed); returns each deleted file with how many entries it held (`None`: it did not
    /// parse). Only meaningful after a run of every test.
    pub fn remove_unopened(&self) -> Result<Vec<(PathBuf, Option<usize>)>, CassetteError> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let opened: BTreeSet<PathBuf> = open.values().map(|c| c.path.clone()).collect();
        let io = |source| CassetteError::Io {
            path: self.dir.clone(),
            source,
        };
        let listing = match fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(e)),
        };
        let mut removed = Vec::new();
        for entry in listing {
            let path = entry.map_err(io)?.path();
            let is_cassette = path.to_string_lossy().ends_with(".cassette.json");
            if is_cassette && !opened.contains(&path) {
                let entries = read_entries(&path).ok().map(|e| e.len());
                fs::remove_file(&path).map_err(io)?;
                removed.push((path, entries));
            }
        }
        removed.sort();
        Ok(removed)
    }
}

fn file_stem(name: &str) -> String {
    name.replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cassette_that_does_not_parse_names_its_line_and_the_command_that_records_it_alone() {
        let dir = std::env::temp_dir().join(format!("pt-invalid-cassette-{}", std::process::id()));
        let store = CassetteStore::new(&dir);
        let path = store.path_for("quick_start");
        std::fs::create_dir_all(&dir).unwrap();
        let conflicted = "{\n  \"version\": 1,\n<<<<<<< HEAD\n  \"entries\": []\n=======\n  \"entries\": []\n>>>>>>> theirs\n}\n";
        std::fs::write(&path, conflicted).unwrap();
        let shown = store.open("quick_start").unwrap_err().to_string();
        assert!(
            shown.contains(".cassette.json:3 is not valid")
                && shown.contains("merge conflict markers")
                && shown.contains(
                    "PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- quick_start"
                ),
            "{shown}"
        );
        assert!(!shown.to_lowercase().contains("delete"), "{shown}");
        std::fs::write(&path, "{\"version\": 1, \"entries\": [}").unwrap();
        let shown = CassetteStore::new(&dir)
            .open("quick_start")
            .unwrap_err()
            .to_string();
        assert!(
            shown.contains(":1 is not valid") && shown.contains("git checkout --"),
            "{shown}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    use crate::completion::{CompletionRequest, CompletionResult};
    use crate::role::CallRole;

    fn entry(key: &str, run: u32) -> Entry {
        Entry {
            key: key.into(),
            test: "t".into(),
            run,
            role: CallRole::Subject,
            provider: "openai".into(),
            model: "m".into(),
            call: Exchange::Completion {
                request: CompletionRequest::new("m", "hi", 10),
                response: CompletionResult::new("hello", 1, 2),
            },
            latency_ms: 5,
            recorded_at: now_rfc3339(),
        }
    }

    #[test]
    fn key_depends_on_run_and_request_only() {
        let req = CompletionRequest::new("m", "hi", 10);
        let k1 = entry_key("openai", &req, 1);
        assert_eq!(k1, entry_key("openai", &req, 1));
        assert_ne!(k1, entry_key("openai", &req, 2));
        assert_ne!(k1, entry_key("anthropic", &req, 1));
        let mut other = req.clone();
        other.temperature = Some(0.0);
        assert_ne!(k1, entry_key("openai", &other, 1));
        // A seed is part of the key when set; unset, the key is the one computed before seeds existed
        // (sha256 of `{"provider":"openai","model":"m","system":null,...,"run":1}`), so older
        // recordings still match.
        assert_eq!(k1, "c56028db4903ef4f9ea93a59");
        let mut seeded = req.clone();
        seeded.seed = Some(42);
        assert_ne!(k1, entry_key("openai", &seeded, 1));
    }

    #[test]
    fn record_merge_prune_roundtrip() {
        let dir = std::env::temp_dir().join(format!("pt-cassette-{}", std::process::id()));
        let store = CassetteStore::new(&dir);
        let a = store.open("mod::greet").unwrap();
        assert_eq!(a.path().file_name().unwrap(), "mod.greet.cassette.json");
        assert_eq!(a.recorded_len(), None);
        a.record(entry("k1", 1)).unwrap();
        a.record(entry("k0", 1)).unwrap();
        let on_disk = || {
            CassetteStore::new(&dir)
                .open("mod::greet")
                .unwrap()
                .recorded_len()
        };
        assert_eq!(
            on_disk(),
            Some(1),
            "the second recording within a second is buffered"
        );
        a.flush().unwrap();
        assert_eq!(on_disk(), Some(2));
        // A second process (a second store) records into the same file without losing k1.
        let other = CassetteStore::new(&dir).open("mod::greet").unwrap();
        other.record(entry("k2", 2)).unwrap();
        other.flush().unwrap();
        let reloaded = CassetteStore::new(&dir).open("mod::greet").unwrap();
        assert_eq!(reloaded.recorded_len(), Some(3));
        assert!(reloaded.lookup("k2").is_some());
        assert_eq!(
            reloaded.prune().unwrap(),
            Pruned {
                removed: 2,
                kept: 1
            }
        );
        let after = CassetteStore::new(&dir).open("mod::greet").unwrap();
        assert!(after.lookup("k1").is_none() && after.lookup("k2").is_some());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn lock_and_temporary_files_stay_in_a_directory_git_ignores() {
        let dir = std::env::temp_dir().join(format!("pt-cassette-work-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let store = CassetteStore::new(&dir);
        let cassette = store.open("greet").unwrap();
        cassette.record(entry("k1", 1)).unwrap();
        let work = dir.join(WORK_DIR);
        let listing = |d: &Path| {
            let mut names: Vec<String> = fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(listing(&dir), [WORK_DIR, "greet.cassette.json"]);
        // The lock file outlives the write: removing it is what let two writers hold "the" lock.
        assert_eq!(listing(&work), [".gitignore", "greet.cassette.json.lock"]);
        assert!(
            fs::read_to_string(work.join(".gitignore"))
                .unwrap()
                .ends_with("\n*\n")
        );

        // A writer killed mid-write left a partial temporary file and an empty `.gitignore`: the next
        // write mends the one and consumes the other.
        fs::write(work.join(".gitignore"), "").unwrap();
        fs::write(
            work.join("greet.cassette.json.tmp"),
            "{\"version\": 1, \"entr",
        )
        .unwrap();
        cassette.record(entry("k2", 2)).unwrap();
        cassette.flush().unwrap();
        assert_eq!(listing(&work), [".gitignore", "greet.cassette.json.lock"]);
        assert_eq!(
            fs::read_to_string(work.join(".gitignore")).unwrap(),
            WORK_DIR_GITIGNORE
        );
        assert_eq!(read_entries(&cassette.path).unwrap().len(), 2);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_skipped_test_keeps_its_recordings_through_a_prune() {
        let dir = std::env::temp_dir().join(format!("pt-cassette-keep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let recorder = CassetteStore::new(&dir).open("suite").unwrap();
        let recorded = |test: &str, key: &str| Entry {
            test: test.into(),
            ..entry(key, 1)
        };
        recorder.record(recorded("suite::a", "a")).unwrap();
        recorder.record(recorded("suite::ab", "ab")).unwrap();
        recorder.record(recorded("suite::a::run_2", "a2")).unwrap();
        recorder.record(recorded("suite::gone", "gone")).unwrap();
        recorder.flush().unwrap();
        let cassette = CassetteStore::new(&dir).open("suite").unwrap();
        assert!(cassette.lookup("ab").is_some());
        cassette.keep_recordings_of("suite::a");
        assert_eq!(
            cassette.prune().unwrap(),
            Pruned {
                removed: 1,
                kept: 3
            }
        );
        let mut kept: Vec<String> = read_entries(&cassette.path).unwrap().into_keys().collect();
        kept.sort();
        assert_eq!(kept, ["a", "a2", "ab"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn modes_parse_and_unknown_lists_valid() {
        assert_eq!(CassetteMode::parse("Record").unwrap(), CassetteMode::Record);
        let err = CassetteMode::parse("sometimes").unwrap_err().to_string();
        assert!(err.contains("auto, replay, record, off"), "{err}");
    }
}
