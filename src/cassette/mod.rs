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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod changes;
pub mod decision;
mod entry;
mod file;
pub mod pending;

pub use entry::{Entry, Exchange, Recorded, embedding_key, entry_key, latency_of, now_rfc3339};

pub use file::CassetteError;
pub(crate) use file::read_entry_list;
#[cfg(test)]
use file::{WORK_DIR, WORK_DIR_GITIGNORE};
use file::{WhenEmpty, read_entries, rewrite_locked};
use pending::SampleId;

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

/// How a run uses its cassettes: the mode, whether `CI` is set, and where answers that replace a
/// sample's recordings go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The cassette mode.
    pub mode: CassetteMode,
    /// `CI` is set.
    pub ci: bool,
    /// Pending for review, or accepted at once.
    pub replacements: decision::Replacements,
    /// `PROMPT_TESTER_PENDING_DIR`: pending recordings go there instead of beside their cassettes.
    pub pending_dir: Option<PathBuf>,
}

impl Policy {
    /// Cassettes off, outside CI.
    #[cfg(test)]
    pub fn off() -> Self {
        Self {
            mode: CassetteMode::Off,
            ..Self::default()
        }
    }
}

/// A `PROMPT_TESTER_CASSETTE` value that names no mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{env}={0:?} is not a cassette mode: use one of auto, replay, record, off", env = CassetteMode::ENV)]
pub struct ModeError(pub String);

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
    /// Where replacements go when they are pending (see [`pending`]).
    pending_path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// How many entries each sample has in the file as loaded; built on the first miss (a replay that
    /// finds every call never pays for it).
    samples: Option<HashMap<SampleId, usize>>,
    used: BTreeSet<String>,
    /// First recordings not yet written.
    unwritten: Vec<Entry>,
    /// Samples recorded anew in this run that replace what the file holds: every call each made.
    replacing: BTreeMap<SampleId, Replacement>,
    /// Of those, the ones with calls not yet written.
    replacing_unwritten: BTreeSet<SampleId>,
    last_write: Option<Instant>,
}

/// A sample's new calls, and where they go.
#[derive(Debug)]
struct Replacement {
    to: ReplaceInto,
    entries: Vec<Entry>,
}

/// Where a sample's replacing calls are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceInto {
    /// The pending file, for review.
    Pending,
    /// The cassette itself, replacing the sample's recordings (accepted at once).
    Cassette,
}

/// Recordings are written at most this often (and at the end of the run): rewriting the whole file
/// for every entry made recording quadratic in the entries of one cassette.
const WRITE_INTERVAL: Duration = Duration::from_secs(1);

impl Cassette {
    fn load(path: PathBuf, pending_path: PathBuf) -> Result<Self, CassetteError> {
        let entries = read_entries(&path)?;
        Ok(Self {
            path,
            pending_path,
            state: Mutex::new(State {
                entries,
                ..State::default()
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this cassette's pending recordings go.
    pub fn pending_path(&self) -> &Path {
        &self.pending_path
    }

    /// The file name, for messages.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The recorded entry for `key`, marking it used (and counting it in its sample's replacement,
    /// when the sample is being recorded anew: a replacement holds every call of the sample).
    pub fn lookup(&self, key: &str) -> Option<Entry> {
        let mut state = self.state();
        let entry = state.entries.get(key).cloned()?;
        state.used.insert(key.to_string());
        if !state.replacing.is_empty()
            && let Some(sample) = SampleId::of(&entry)
            && let Some(replacement) = state.replacing.get_mut(&sample)
        {
            replacement.entries.push(entry.clone());
            state.replacing_unwritten.insert(sample);
        }
        Some(entry)
    }

    /// How many entries it holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.state().entries.len()
    }

    /// How many entries the file held for `sample` when loaded.
    pub fn sample_recordings(&self, sample: &SampleId) -> usize {
        let mut state = self.state();
        let State {
            entries, samples, ..
        } = &mut *state;
        let index = samples.get_or_insert_with(|| {
            let mut index = HashMap::new();
            for entry in entries.values() {
                if let Some(sample) = SampleId::of(entry) {
                    *index.entry(sample).or_insert(0) += 1;
                }
            }
            index
        });
        index.get(sample).copied().unwrap_or(0)
    }

    /// The requests the file holds for `sample` made by `role`, as loaded.
    pub fn recorded_requests(
        &self,
        sample: &SampleId,
        role: crate::role::CallRole,
    ) -> Vec<crate::completion::CompletionRequest> {
        let state = self.state();
        let mut found: Vec<(&String, &crate::completion::CompletionRequest)> = state
            .entries
            .values()
            .filter(|e| e.role == role && SampleId::of(e).as_ref() == Some(sample))
            .filter_map(|e| match &e.call {
                Exchange::Completion { request, .. } => Some((&e.key, request)),
                Exchange::Embedding { .. } => None,
            })
            .collect();
        found.sort_by_key(|(key, _)| *key);
        found.into_iter().map(|(_, r)| r.clone()).collect()
    }

    /// Adds a first recording (nothing was recorded for its sample); the file is written at most once
    /// a second and by [`Cassette::flush`].
    pub fn record(&self, entry: Entry) -> Result<(), CassetteError> {
        let mut state = self.state();
        state.used.insert(entry.key.clone());
        state.entries.insert(entry.key.clone(), entry.clone());
        state.unwritten.push(entry);
        self.flush_due(&mut state)
    }

    /// Adds a call of a sample that replaces the sample's recordings, into the pending file or (when
    /// accepted at once) the cassette. The sample's calls replayed so far in this run go with it.
    pub fn record_replacing(&self, entry: Entry, to: ReplaceInto) -> Result<(), CassetteError> {
        let Some(sample) = SampleId::of(&entry) else {
            return self.record(entry);
        };
        let mut state = self.state();
        if !state.replacing.contains_key(&sample) {
            let used = &state.used;
            let replayed: Vec<Entry> = state
                .entries
                .values()
                .filter(|e| used.contains(&e.key) && SampleId::of(e).as_ref() == Some(&sample))
                .cloned()
                .collect();
            state.replacing.insert(
                sample.clone(),
                Replacement {
                    to,
                    entries: replayed,
                },
            );
        }
        if let Some(replacement) = state.replacing.get_mut(&sample) {
            replacement.entries.retain(|e| e.key != entry.key);
            replacement.entries.push(entry);
        }
        state.replacing_unwritten.insert(sample);
        self.flush_due(&mut state)
    }

    /// The samples of this run whose new calls went pending.
    pub fn pending_samples(&self) -> Vec<SampleId> {
        let state = self.state();
        state
            .replacing
            .iter()
            .filter(|(_, r)| r.to == ReplaceInto::Pending)
            .map(|(s, _)| s.clone())
            .collect()
    }

    fn flush_due(&self, state: &mut State) -> Result<(), CassetteError> {
        if state
            .last_write
            .is_none_or(|t| t.elapsed() >= WRITE_INTERVAL)
        {
            self.flush_locked(state)?;
        }
        Ok(())
    }

    /// Writes the recordings not written yet.
    pub fn flush(&self) -> Result<(), CassetteError> {
        let mut state = self.state();
        self.flush_locked(&mut state)
    }

    fn flush_locked(&self, state: &mut State) -> Result<(), CassetteError> {
        if state.unwritten.is_empty() && state.replacing_unwritten.is_empty() {
            return Ok(());
        }
        let mut into_cassette = BTreeMap::new();
        let mut pending = BTreeMap::new();
        for sample in std::mem::take(&mut state.replacing_unwritten) {
            if let Some(replacement) = state.replacing.get(&sample) {
                let target = match replacement.to {
                    ReplaceInto::Cassette => &mut into_cassette,
                    ReplaceInto::Pending => &mut pending,
                };
                target.insert(sample, replacement.entries.clone());
            }
        }
        if !state.unwritten.is_empty() || !into_cassette.is_empty() {
            self.write_merged(&state.unwritten, &into_cassette, None)?;
        }
        if !pending.is_empty() {
            pending::write_samples(&self.pending_path, &pending)?;
        }
        state.unwritten.clear();
        state.last_write = Some(Instant::now());
        Ok(())
    }

    /// Marks the entries recorded by trial `test` (or by its `::run_N` trials) as used, though it did
    /// not run: a case skipped on purpose keeps its recordings through a prune.
    pub fn keep_recordings_of(&self, test: &str) {
        let mut state = self.state();
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
        let mut state = self.state();
        self.flush_locked(&mut state)?;
        let used = state.used.clone();
        let before = state.entries.len();
        state.entries.retain(|key, _| used.contains(key));
        let kept = state.entries.len();
        if kept < before {
            self.write_merged(&[], &BTreeMap::new(), Some(&used))?;
        }
        Ok(Pruned {
            removed: before - kept,
            kept,
        })
    }

    /// Under the lock: merges `new` (by key) and `replaced` (each sample as a whole) into the file as
    /// it is now, keeps only `keep` if given, and writes it atomically.
    fn write_merged(
        &self,
        new: &[Entry],
        replaced: &BTreeMap<SampleId, Vec<Entry>>,
        keep: Option<&BTreeSet<String>>,
    ) -> Result<(), CassetteError> {
        rewrite_locked(&self.path, WhenEmpty::Keep, |held| {
            let mut merged: HashMap<String, Entry> = pending::replace_samples(held, replaced)
                .into_iter()
                .map(|e| (e.key.clone(), e))
                .collect();
            for entry in new {
                merged.insert(entry.key.clone(), entry.clone());
            }
            if let Some(keep) = keep {
                merged.retain(|key, _| keep.contains(key));
            }
            merged.into_values().collect()
        })
    }
}

/// Every cassette this process opened, loaded once each.
#[derive(Debug, Default)]
pub struct CassetteStore {
    dir: PathBuf,
    /// `PROMPT_TESTER_PENDING_DIR`: where pending recordings go instead of beside their cassettes.
    pending_dir: Option<PathBuf>,
    open: Mutex<BTreeMap<String, Arc<Cassette>>>,
}

impl CassetteStore {
    /// A store for the cassettes under `dir`, their pending recordings beside them.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            pending_dir: None,
            open: Mutex::new(BTreeMap::new()),
        }
    }

    /// The same store, its pending recordings in `dir` (when given) instead.
    pub fn with_pending_dir(self, dir: Option<PathBuf>) -> Self {
        Self {
            pending_dir: dir,
            ..self
        }
    }

    /// The cassette directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where pending recordings are kept: the pending folder, else the cassette directory.
    pub fn pending_dir(&self) -> &Path {
        self.pending_dir.as_deref().unwrap_or(&self.dir)
    }

    /// What is pending review in the pending folder now (this run's and earlier runs'): each file
    /// with its samples. A file that does not parse is an error.
    pub fn pending_on_disk(&self) -> Result<Vec<(PathBuf, Vec<SampleId>)>, CassetteError> {
        let mut found = Vec::new();
        for path in pending::pending_files(self.pending_dir())? {
            let samples = pending::by_sample(read_entry_list(&path)?);
            if !samples.is_empty() {
                found.push((path, samples.into_keys().collect()));
            }
        }
        Ok(found)
    }

    /// The samples of this run whose new calls went pending, by cassette.
    pub fn pending_samples(&self) -> Vec<(PathBuf, Vec<SampleId>)> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.values()
            .map(|c| (c.pending_path.clone(), c.pending_samples()))
            .filter(|(_, samples)| !samples.is_empty())
            .collect()
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
        let path = self.path_for(name);
        let pending = pending::pending_path(&path, self.pending_dir.as_deref());
        let cassette = Arc::new(Cassette::load(path, pending).map_err(|e| match e {
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
mod tests;
