//! Cassettes: model calls recorded once into committed JSON files and replayed offline.
//!
//! One file per test (or per suite): `<cassette_dir>/<name>.cassette.json` (`name.rs` keeps two names
//! from sharing one). Entries are keyed by a hash of what decides the answer (provider, model, the
//! rendered request, the run index) and by the test target that recorded them (`owner.rs`), and
//! written in a stable order, pretty-printed, so that a diff reviews well. Writes go to a temporary file
//! that is renamed over the old one while holding a lock file, so concurrent trials (threads or
//! processes) never lose each other's entries and a killed run never leaves a truncated cassette. Lock
//! and temporary files live in [`crate::shared::WORK_DIR`], which ignores itself for git.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub(crate) mod awaiting;
pub mod changes;
pub mod decision;
pub mod diff;
mod entry;
mod file;
mod flush;
pub mod folder;
mod index;
pub mod media;
mod media_ref;
mod name;
mod owner;
pub mod pending;
pub(crate) mod prune;
pub mod raw;
mod store;

#[cfg(any(feature = "endpoint", test))]
pub use entry::raw_key;
pub use entry::{
    CheckVerdict, Entry, Exchange, FORMAT_VERSION, FileBody, Recorded, RecordedChecks,
    embedding_key, entry_key, entry_key_nth, latency_of, now_rfc3339,
};
pub use file::CassetteError;
pub(crate) use file::read_body;
pub use index::Loading;
pub use owner::{Target, this_target};
pub use store::CassetteStore;

use crate::config::ConfigError;
use file::{WhenEmpty, rewrite_locked};
use owner::{Recordings, Slot};
use pending::{SampleCalls, SampleId};

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
    pub fn parse(value: &str) -> Result<Self, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "replay" => Ok(Self::Replay),
            "record" => Ok(Self::Record),
            "off" => Ok(Self::Off),
            _ => Err(ConfigError::Mode {
                name: Self::ENV,
                value: value.to_string(),
            }),
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
    pub fn from_env() -> Result<Self, ConfigError> {
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
    /// The commands its messages name, for this run's test target.
    pub commands: crate::commands::Commands,
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

/// What [`Cassette::prune`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// Entries removed.
    pub removed: usize,
    /// Entries kept (this target's and every other's).
    pub kept: usize,
    /// The file held nothing else, and is gone (only a file no trial of this run opened).
    pub deleted: bool,
}

/// One cassette file, loaded once and shared by every trial that uses it.
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    /// Where replacements go when they are pending (see [`pending`]).
    pending_path: PathBuf,
    /// The test target this process runs: it records as this target and prunes only its entries.
    target: Target,
    state: Mutex<State>,
    /// Held while the file is written (`flush.rs`): one write at a time, and the state's lock free
    /// meanwhile for the calls that record and replay.
    writing: Mutex<()>,
}

#[derive(Debug, Default)]
struct State {
    /// Every entry of the file as loaded (with this run's recordings); only the keys looked up so far
    /// while `unread` holds the file (see [`index`]).
    entries: Recordings,
    /// The file read but not parsed, with its index: entries are parsed as their keys are looked up.
    unread: Option<index::Unread>,
    /// Whether the file held entries when it was loaded (a missing entry then means the test changed).
    recorded: bool,
    used: BTreeSet<Slot>,
    /// How many entries each sample has in the file as loaded; built on the first miss (a replay that
    /// finds every call never pays for it).
    samples: Option<HashMap<SampleId, usize>>,
    /// First recordings not yet written.
    unwritten: Vec<Entry>,
    /// The samples this run recorded first (nothing was recorded for them before).
    first_recorded: BTreeSet<SampleId>,
    /// The verdicts of first-recorded samples, not yet written.
    verdicts_unwritten: Vec<RecordedChecks>,
    /// Samples recorded anew in this run that replace what the file holds: every call each made.
    replacing: BTreeMap<SampleId, Replacement>,
    /// Of those, the ones with calls not yet written.
    replacing_unwritten: BTreeSet<SampleId>,
    last_write: Option<Instant>,
}

impl State {
    /// A sample's verdict is kept only when this run records or replaces its calls (a replayed
    /// sample's verdict is on file already).
    fn keeps_verdict_of(&self, sample: &SampleId) -> bool {
        self.replacing.contains_key(sample) || self.first_recorded.contains(sample)
    }
}

/// A sample's new calls, and where they go.
#[derive(Debug)]
struct Replacement {
    to: ReplaceInto,
    entries: Vec<Entry>,
    verdict: Option<RecordedChecks>,
}

/// Where a sample's replacing calls are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceInto {
    /// The pending file, for review.
    Pending,
    /// The cassette itself, replacing the sample's recordings (accepted at once).
    Cassette,
}

/// What a write does to the file as it is on disk (another process may have written it since).
#[derive(Default)]
struct Edit<'a> {
    /// Recorded since the last write.
    new: &'a [Entry],
    /// Samples whose recordings are replaced as a whole by these calls.
    replaced: BTreeMap<SampleId, SampleCalls>,
    /// Verdicts of samples recorded first, since the last write.
    verdicts: Vec<RecordedChecks>,
    /// Entries to remove.
    remove: BTreeSet<Slot>,
    /// Delete the file when nothing is left in it.
    delete_if_empty: bool,
}

/// Recordings are written at most this often (and at the end of the run): rewriting the whole file
/// for every entry made recording quadratic in the entries of one cassette.
const WRITE_INTERVAL: Duration = Duration::from_secs(1);

impl Cassette {
    fn load(
        path: PathBuf,
        pending_path: PathBuf,
        target: Target,
        loading: Loading,
    ) -> Result<Self, CassetteError> {
        let state = match folder::counted(|| index::load(&path, loading))? {
            index::Loaded::Whole(body) => {
                let entries = Recordings::new(body.entries);
                State {
                    recorded: !entries.is_empty(),
                    entries,
                    ..State::default()
                }
            }
            index::Loaded::Indexed(unread) => State {
                recorded: unread.len() > 0,
                unread: Some(unread),
                ..State::default()
            },
        };
        Ok(Self {
            path,
            pending_path,
            target,
            state: Mutex::new(state),
            writing: Mutex::new(()),
        })
    }

    /// Whether the file is loaded through its index, some entries not parsed yet.
    #[cfg(test)]
    fn is_partial(&self) -> bool {
        self.state().unread.is_some()
    }

    /// The state with every entry of the file parsed (what a whole load holds, with this run's
    /// changes): for what needs them all.
    fn whole(&self) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.state();
        // A parse that fails is not reached: the index is trusted only for the very contents that
        // parsed when it was written. What was looked up would stay.
        if let Some(Ok(body)) = state.unread.take().map(|unread| unread.whole(&self.path)) {
            // The keys looked up (and recorded since) replace the file's own.
            let looked_up = std::mem::take(&mut state.entries);
            state.entries = Recordings::new(body.entries);
            state.entries.overlay(looked_up);
        }
        state
    }

    /// The state, with the file's entries for `key` parsed; `Err` when they name a media file the
    /// store does not hold, as a whole load says it (a trial run alone, as nextest runs it, fails
    /// as it does among all).
    fn with_key(&self, key: &str) -> Result<std::sync::MutexGuard<'_, State>, CassetteError> {
        let mut state = self.state();
        let State {
            unread, entries, ..
        } = &mut *state;
        let Some(unread) = unread else {
            return Ok(state);
        };
        if entries.has_key(key) {
            return Ok(state);
        }
        match unread.entries_of(key) {
            Some(mut found) => {
                let placed = media::place_parts(&self.path, &mut found);
                entries.overlay(Recordings::new(found));
                placed.map(|()| state)
            }
            // The index does not match the file: parse it whole.
            None => {
                drop(state);
                Ok(self.whole())
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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

    /// The recorded entry for `key` (this target's own first, see [`Recordings::find`]), marking it
    /// used.
    ///
    /// When the call's sample is being recorded anew in this run, the entry joins its replacement: a
    /// replacement holds every call of the sample.
    /// `Err` when the entry names a media file the store does not hold.
    pub fn lookup(&self, key: &str) -> Result<Option<Entry>, CassetteError> {
        let mut state = self.with_key(key)?;
        let Some(entry) = state.entries.find(key, &self.target).cloned() else {
            return Ok(None);
        };
        state.used.insert((entry.target.clone(), key.to_string()));
        if !state.replacing.is_empty()
            && let Some(sample) = SampleId::of(&entry, &self.target)
            && let Some(replacement) = state.replacing.get_mut(&sample)
        {
            replacement.entries.push(entry.clone());
            state.replacing_unwritten.insert(sample);
        }
        Ok(Some(entry))
    }

    /// The sample a call of `test`'s run `run` belongs to, as this target records it.
    pub fn sample(&self, test: &str, run: u32) -> SampleId {
        SampleId {
            target: self.target.clone(),
            test: crate::trial_name::sample_owner(test, run).to_string(),
            run,
        }
    }

    /// How many entries the file held for `sample` when loaded (this target's, and those that name
    /// no target).
    pub fn sample_recordings(&self, sample: &SampleId) -> usize {
        let mut state = self.whole();
        let State {
            entries, samples, ..
        } = &mut *state;
        let target = &self.target;
        let index = samples.get_or_insert_with(|| {
            let mut index = HashMap::new();
            for entry in entries.iter() {
                if let Some(sample) = SampleId::of(entry, target) {
                    *index.entry(sample).or_insert(0) += 1;
                }
            }
            index
        });
        index.get(sample).copied().unwrap_or(0)
    }

    /// The calls the file holds for `sample` made by `role`, as loaded, in key order.
    pub fn recorded_calls(&self, sample: &SampleId, role: crate::role::CallRole) -> Vec<Exchange> {
        let state = self.whole();
        let mut found: Vec<(&String, &Exchange)> = state
            .entries
            .iter()
            .filter(|e| e.role == role && sample.owns(e))
            .map(|e| (&e.key, &e.call))
            .collect();
        found.sort_by_key(|(key, _)| *key);
        found.into_iter().map(|(_, call)| call.clone()).collect()
    }

    /// Every entry, as loaded with this run's recordings: for what needs them all (an estimate).
    pub fn entries(&self) -> Vec<Entry> {
        self.whole().entries.iter().cloned().collect()
    }

    /// How many entries the file held when loaded, if it held any.
    pub fn recorded_len(&self) -> Option<usize> {
        let state = self.whole();
        state.recorded.then_some(state.entries.len())
    }

    /// Adds (or replaces) this target's entry as a first recording (nothing was recorded for its
    /// sample); the file is written at most once a second and by [`Cassette::flush`].
    pub fn record(&self, mut entry: Entry) -> Result<(), CassetteError> {
        entry.target = self.target.clone();
        // The entry recorded now carries its own bytes: one it replaces may name a missing file.
        let mut state = self.with_key(&entry.key).unwrap_or_else(|_| self.state());
        state.used.insert((entry.target.clone(), entry.key.clone()));
        if let Some(sample) = SampleId::of(&entry, &self.target) {
            state.first_recorded.insert(sample);
        }
        state.entries.record(entry.clone());
        state.unwritten.push(entry);
        self.flush_if_due(state)
    }

    /// Keeps what `sample`'s checks decided, with the calls it recorded in this run (first recorded
    /// or replacing): what a later review shows as "before" or "after". A sample that only replayed
    /// keeps the verdict it has.
    pub fn note_verdict(
        &self,
        sample: &SampleId,
        verdict: RecordedChecks,
    ) -> Result<(), CassetteError> {
        let mut state = self.state();
        if !state.keeps_verdict_of(sample) {
            return Ok(());
        }
        if let Some(replacement) = state.replacing.get_mut(sample) {
            replacement.verdict = Some(verdict);
            state.replacing_unwritten.insert(sample.clone());
        } else {
            state.verdicts_unwritten.push(verdict);
        }
        self.flush_if_due(state)
    }

    /// Whether [`Cassette::note_verdict`] keeps a verdict of `sample`.
    pub fn keeps_verdict_of(&self, sample: &SampleId) -> bool {
        self.state().keeps_verdict_of(sample)
    }

    /// Adds a call of a sample that replaces the sample's recordings, into the pending file or (when
    /// accepted at once) the cassette. The sample's calls replayed so far in this run go with it.
    pub fn record_replacing(&self, mut entry: Entry, to: ReplaceInto) -> Result<(), CassetteError> {
        entry.target = self.target.clone();
        let Some(sample) = SampleId::of(&entry, &self.target) else {
            return self.record(entry);
        };
        let mut state = self.whole();
        if !state.replacing.contains_key(&sample) {
            let replayed: Vec<Entry> = state
                .entries
                .iter()
                .filter(|e| {
                    sample.owns(e) && state.used.contains(&(e.target.clone(), e.key.clone()))
                })
                .cloned()
                .collect();
            state.replacing.insert(
                sample.clone(),
                Replacement {
                    to,
                    entries: replayed,
                    verdict: None,
                },
            );
        }
        if let Some(replacement) = state.replacing.get_mut(&sample) {
            replacement.entries.retain(|e| e.key != entry.key);
            replacement.entries.push(entry);
        }
        state.replacing_unwritten.insert(sample);
        self.flush_if_due(state)
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

    /// Marks the entries recorded by trial `test` (or by its `::run_N` trials) as used, though it did
    /// not run: a case skipped on purpose keeps its recordings through a prune.
    pub fn keep_recordings_of(&self, test: &str) {
        let mut state = self.whole();
        let slots: Vec<Slot> = state
            .entries
            .iter()
            .filter(|e| recorded_by(e, test))
            .map(|e| (e.target.clone(), e.key.clone()))
            .collect();
        state.used.extend(slots);
    }

    /// Whether it holds an entry recorded by trial `test` (or by its `::run_N` trials).
    pub fn has_recordings_of(&self, test: &str) -> bool {
        let state = self.state();
        state.entries.iter().any(|e| recorded_by(e, test))
            || state
                .unread
                .as_ref()
                .is_some_and(|unread| unread.has_recordings_of(test))
    }

    /// Removes this target's entries not used in this run. Other targets' entries stay.
    pub fn prune(&self) -> Result<Pruned, CassetteError> {
        self.prune_with(false)
    }

    /// [`Cassette::prune`]; with `delete_if_empty`, a file left with no entry is deleted.
    fn prune_with(&self, delete_if_empty: bool) -> Result<Pruned, CassetteError> {
        let _turn = self.write_turn();
        let mut state = self.whole();
        self.flush_locked(&mut state)?;
        // A process that cannot tell its target owns nothing.
        let mine = |entry: &Entry| self.target.is_some() && entry.target == self.target;
        let mut edit = Edit {
            delete_if_empty,
            ..Edit::default()
        };
        for entry in state.entries.iter().filter(|e| mine(e)) {
            let slot = (entry.target.clone(), entry.key.clone());
            if !state.used.contains(&slot) {
                edit.remove.insert(slot);
            }
        }
        for slot in &edit.remove {
            state.entries.remove(slot);
        }
        let mut pruned = Pruned {
            removed: edit.remove.len(),
            kept: state.entries.len(),
            deleted: false,
        };
        if pruned.removed > 0 {
            pruned.deleted = self.write_merged(edit)?;
        }
        Ok(pruned)
    }

    /// Under the lock: re-reads the file (another process may have recorded), applies `edit`, and
    /// writes atomically (see [`file::rewrite_locked`]). Returns whether the file was deleted instead
    /// (`edit.delete_if_empty`, and nothing left).
    fn write_merged(&self, edit: Edit<'_>) -> Result<bool, CassetteError> {
        let when_empty = if edit.delete_if_empty {
            WhenEmpty::Remove
        } else {
            WhenEmpty::Keep
        };
        rewrite_locked(&self.path, when_empty, |held| {
            let held = pending::replace_samples(held, &edit.replaced);
            let mut merged = Recordings::new(held.entries);
            for entry in edit.new {
                merged.record(entry.clone());
            }
            for slot in &edit.remove {
                merged.remove(slot);
            }
            let entries = merged.into_sorted();
            // A verdict stays while its sample has recordings, and a new one replaces the old.
            let recorded: std::collections::HashSet<(&str, u32)> =
                entries.iter().map(|e| (e.test.as_str(), e.run)).collect();
            let mut verdicts: Vec<RecordedChecks> = held
                .verdicts
                .into_iter()
                .filter(|v| {
                    !edit.verdicts.iter().any(|n| same_sample(n, v))
                        && recorded.contains(&(v.test.as_str(), v.run))
                })
                .collect();
            verdicts.extend(edit.verdicts.iter().cloned());
            pending::sort_verdicts(&mut verdicts);
            FileBody {
                version: held.version,
                entries,
                verdicts,
            }
        })
    }
}

/// Whether two verdicts are of one sample.
fn same_sample(a: &RecordedChecks, b: &RecordedChecks) -> bool {
    a.test == b.test && a.run == b.run && a.target == b.target
}

/// Whether trial `test` or one of its `::run_N` trials recorded `entry`.
fn recorded_by(entry: &Entry, test: &str) -> bool {
    entry
        .test
        .strip_prefix(test)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

#[cfg(test)]
mod tests;
