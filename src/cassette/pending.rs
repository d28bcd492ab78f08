//! Pending recordings: new answers that would replace what a cassette already holds for a sample,
//! kept beside it (`<stem>.pending.json`, or under `PROMPT_TESTER_PENDING_DIR`) until a person
//! accepts or rejects them (`cargo prompt-tester review`, `accept`, `reject`).
//!
//! A pending file has the cassette's own format. It holds whole samples: every call a sample made in
//! the run that went pending (the replayed ones too), so that accepting replaces the sample's
//! recordings as a whole and never mixes old and new calls of one sample.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::CassetteError;
use super::entry::{Entry, FileBody, RecordedChecks};
use super::file::{WhenEmpty, read_body, rewrite_locked};
use super::owner::Target;
use crate::role::CallRole;

/// How a pending file's name ends; the cassette's ends in `.cassette.json`.
pub const PENDING_SUFFIX: &str = ".pending.json";

/// How a cassette file's name ends.
pub const CASSETTE_SUFFIX: &str = ".cassette.json";

/// One sample of one test of one test target: what a pending recording replaces as a whole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SampleId {
    /// The test target that records it (none: its process could not tell its target).
    pub target: Target,
    /// The trial that recorded it.
    pub test: String,
    /// The run index, 1-based.
    pub run: u32,
}

impl SampleId {
    /// The sample `entry` belongs to as `target` sees it, when it belongs to one of `target`'s:
    /// embeddings are keyed by their text alone and shared by every sample, so no sample owns them;
    /// another target's entries are its own.
    pub fn of(entry: &Entry, target: &Target) -> Option<Self> {
        (entry.role != CallRole::Embedding && entry.target == *target).then(|| Self {
            target: target.clone(),
            test: crate::trial_name::sample_owner(&entry.test, entry.run).to_string(),
            run: entry.run,
        })
    }

    /// Whether `entry` is one of this sample's recordings.
    pub fn owns(&self, entry: &Entry) -> bool {
        SampleId::of(entry, &self.target).as_ref() == Some(self)
    }

    /// Whether `verdict` is this sample's.
    pub fn judged_by(&self, verdict: &RecordedChecks) -> bool {
        verdict.test == self.test
            && verdict.run == self.run
            && (verdict.target.is_none() || verdict.target == self.target)
    }
}

impl std::fmt::Display for SampleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (run {})", self.test, self.run)
    }
}

/// The pending file of the cassette at `cassette`: beside it, or in `dir` when one is given.
pub fn pending_path(cassette: &Path, dir: Option<&Path>) -> PathBuf {
    let name = cassette
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(CASSETTE_SUFFIX).unwrap_or(&name);
    let file = format!("{stem}{PENDING_SUFFIX}");
    match dir {
        Some(dir) => dir.join(file),
        None => cassette.with_file_name(file),
    }
}

/// The cassette a pending file at `pending` belongs to, in `cassette_dir`.
pub fn cassette_path(pending: &Path, cassette_dir: &Path) -> PathBuf {
    let name = pending
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(PENDING_SUFFIX).unwrap_or(&name);
    cassette_dir.join(format!("{stem}{CASSETTE_SUFFIX}"))
}

/// Groups `entries` by the sample they belong to (embeddings left out).
pub fn by_sample(entries: Vec<Entry>) -> BTreeMap<SampleId, Vec<Entry>> {
    let mut samples: BTreeMap<SampleId, Vec<Entry>> = BTreeMap::new();
    for entry in entries {
        let target = entry.target.clone();
        if let Some(sample) = SampleId::of(&entry, &target) {
            samples.entry(sample).or_default().push(entry);
        }
    }
    samples
}

/// One sample's calls, and what its checks decided on them when they were recorded (when known).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleCalls {
    /// Every call of the sample.
    pub entries: Vec<Entry>,
    /// Its checks' verdict.
    pub verdict: Option<RecordedChecks>,
}

/// The samples of a file: their calls, each with its verdict when the file holds one.
pub fn samples_of(body: FileBody) -> BTreeMap<SampleId, SampleCalls> {
    let mut samples: BTreeMap<SampleId, SampleCalls> = by_sample(body.entries)
        .into_iter()
        .map(|(id, entries)| {
            let calls = SampleCalls {
                entries,
                verdict: None,
            };
            (id, calls)
        })
        .collect();
    for verdict in body.verdicts {
        if let Some((_, calls)) = samples.iter_mut().find(|(id, _)| id.judged_by(&verdict)) {
            calls.verdict = Some(verdict);
        }
    }
    samples
}

/// Writes `samples` into the pending file at `path` under its lock: each replaces what the file held
/// for that sample (a later run supersedes an earlier pending answer); every other sample stays.
pub fn write_samples(
    path: &Path,
    samples: &BTreeMap<SampleId, SampleCalls>,
) -> Result<(), CassetteError> {
    rewrite_locked(path, WhenEmpty::Remove, |held| {
        replace_samples(held, samples)
    })?;
    Ok(())
}

/// `held` with every entry and verdict of the samples in `samples` replaced by theirs; the entries
/// in the order a file holds them (see `owner::Recordings::into_sorted`).
pub fn replace_samples(held: FileBody, samples: &BTreeMap<SampleId, SampleCalls>) -> FileBody {
    let mut entries: Vec<Entry> = held
        .entries
        .into_iter()
        .filter(|e| !samples.keys().any(|s| s.owns(e)))
        .collect();
    let mut keys: BTreeSet<String> = entries.iter().map(|e| e.key.clone()).collect();
    for entry in samples.values().flat_map(|c| &c.entries) {
        if keys.insert(entry.key.clone()) {
            entries.push(entry.clone());
        } else if let Some(old) = entries.iter_mut().find(|e| e.key == entry.key) {
            *old = entry.clone();
        }
    }
    let mut verdicts: Vec<RecordedChecks> = held
        .verdicts
        .into_iter()
        .filter(|v| !samples.keys().any(|s| s.judged_by(v)))
        .collect();
    verdicts.extend(samples.values().filter_map(|c| c.verdict.clone()));
    sort_verdicts(&mut verdicts);
    FileBody {
        version: held.version,
        entries: super::owner::Recordings::new(entries).into_sorted(),
        verdicts,
    }
}

/// Verdicts in the order a file holds them: by test, run and target.
pub(super) fn sort_verdicts(verdicts: &mut [RecordedChecks]) {
    verdicts.sort_by(|a, b| (&a.test, a.run, &a.target).cmp(&(&b.test, b.run, &b.target)));
}

/// One pending file and the cassette it belongs to, with each sample's new and accepted calls.
#[derive(Debug, Clone)]
pub struct PendingFile {
    /// The cassette the samples would go into.
    pub cassette: PathBuf,
    /// The pending file.
    pub pending: PathBuf,
    /// Its samples, sorted by target, test and run.
    pub samples: Vec<PendingSample>,
}

/// One pending sample: its new calls and the accepted ones they would replace, with what the checks
/// decided on each side when it was recorded.
#[derive(Debug, Clone)]
pub struct PendingSample {
    /// The test and run.
    pub id: SampleId,
    /// The calls recorded anew.
    pub new: Vec<Entry>,
    /// The calls the cassette holds for the sample now (none: it would be a first recording).
    pub old: Vec<Entry>,
    /// What the sample's checks decided on the new calls (none: recorded before verdicts were kept).
    pub new_verdict: Option<RecordedChecks>,
    /// What they decided on the accepted calls, when the cassette kept it.
    pub old_verdict: Option<RecordedChecks>,
}

impl PendingFile {
    /// Accepts the samples `chosen` picks into the cassette, replacing theirs.
    pub fn accept(&self, chosen: impl Fn(&SampleId) -> bool) -> Result<Settled, CassetteError> {
        accept(&self.cassette, &self.pending, chosen)
    }

    /// Rejects the samples `chosen` picks: the cassette keeps its recordings.
    pub fn reject(&self, chosen: impl Fn(&SampleId) -> bool) -> Result<Settled, CassetteError> {
        reject(&self.pending, chosen)
    }
}

/// Every pending file in `pending_dir` with its samples, beside what their cassettes in
/// `cassette_dir` hold now.
pub fn pending_in(
    pending_dir: &Path,
    cassette_dir: &Path,
) -> Result<Vec<PendingFile>, CassetteError> {
    let listed = super::folder::Folder::list(pending_dir)?;
    read_pending(
        listed.ending_in(PENDING_SUFFIX).cloned().collect(),
        cassette_dir,
    )
}

/// The pending files `files` with their samples, beside what their cassettes in `cassette_dir` hold
/// now.
pub fn read_pending(
    files: Vec<PathBuf>,
    cassette_dir: &Path,
) -> Result<Vec<PendingFile>, CassetteError> {
    let mut pending = Vec::new();
    for path in files {
        let cassette = cassette_path(&path, cassette_dir);
        let accepted = super::folder::counted(|| read_body(&cassette))?;
        let samples = samples_of(read_body(&path)?)
            .into_iter()
            .map(|(id, calls)| PendingSample {
                old: accepted
                    .entries
                    .iter()
                    .filter(|e| id.owns(e))
                    .cloned()
                    .collect(),
                old_verdict: accepted.verdicts.iter().find(|v| id.judged_by(v)).cloned(),
                new: calls.entries,
                new_verdict: calls.verdict,
                id,
            })
            .collect();
        pending.push(PendingFile {
            cassette,
            pending: path,
            samples,
        });
    }
    Ok(pending)
}

/// What accepting or rejecting did to one cassette.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Settled {
    /// The samples settled.
    pub samples: Vec<SampleId>,
    /// Entries written into the cassette (accept) or dropped (reject).
    pub entries: usize,
}

/// Accepts the pending samples of `pending` that `chosen` picks into `cassette`: under the cassette's
/// lock, each replaces that sample's recordings and verdict (every other entry stays), then the
/// samples leave the pending file (which is removed when empty).
pub fn accept(
    cassette: &Path,
    pending: &Path,
    chosen: impl Fn(&SampleId) -> bool,
) -> Result<Settled, CassetteError> {
    let picked = picked(pending, &chosen)?;
    if picked.is_empty() {
        return Ok(Settled::default());
    }
    rewrite_locked(cassette, WhenEmpty::Keep, |held| {
        replace_samples(held, &picked)
    })?;
    drop_samples(pending, &picked)
}

/// Rejects the pending samples of `pending` that `chosen` picks: they leave the pending file, and the
/// cassette keeps its recordings.
pub fn reject(
    pending: &Path,
    chosen: impl Fn(&SampleId) -> bool,
) -> Result<Settled, CassetteError> {
    let picked = picked(pending, &chosen)?;
    drop_samples(pending, &picked)
}

/// The pending samples `chosen` picks.
fn picked(
    pending: &Path,
    chosen: &impl Fn(&SampleId) -> bool,
) -> Result<BTreeMap<SampleId, SampleCalls>, CassetteError> {
    let mut samples = samples_of(read_body(pending)?);
    samples.retain(|s, _| chosen(s));
    Ok(samples)
}

/// Removes `samples` from the pending file; the file goes when nothing is left.
fn drop_samples(
    pending: &Path,
    samples: &BTreeMap<SampleId, SampleCalls>,
) -> Result<Settled, CassetteError> {
    rewrite_locked(pending, WhenEmpty::Remove, |held| FileBody {
        version: held.version,
        entries: held
            .entries
            .into_iter()
            .filter(|e| !samples.keys().any(|s| s.owns(e)))
            .collect(),
        verdicts: held
            .verdicts
            .into_iter()
            .filter(|v| !samples.keys().any(|s| s.judged_by(v)))
            .collect(),
    })?;
    Ok(Settled {
        samples: samples.keys().cloned().collect(),
        entries: samples.values().map(|c| c.entries.len()).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::cassette::tests::opened;
    use crate::cassette::{CassetteStore, Exchange, ReplaceInto, now_rfc3339};
    use crate::completion::{CompletionRequest, CompletionResult};
    use crate::test_support::Scratch;

    fn entry(test: &str, run: u32, role: CallRole, key: &str, answer: &str) -> Entry {
        Entry {
            key: key.into(),
            target: None,
            test: test.into(),
            run,
            role,
            provider: "openai".into(),
            model: "m".into(),
            call: Exchange::Completion {
                request: CompletionRequest::new("m", key, 10),
                response: CompletionResult::new(answer, 1, 2),
            },
            latency_ms: 5,
            recorded_at: now_rfc3339(),
        }
    }

    /// A cassette holding sample (t, 1) as a subject and a judge call, and sample (u, 1).
    fn recorded(dir: &Path) -> PathBuf {
        let store = CassetteStore::new(dir);
        let c = store.open("s").unwrap();
        c.record(entry("t", 1, CallRole::Subject, "old", "old answer"))
            .unwrap();
        c.record(entry("t", 1, CallRole::Judge, "judge", "YES"))
            .unwrap();
        c.record(entry("u", 1, CallRole::Subject, "other", "kept"))
            .unwrap();
        c.flush().unwrap();
        c.path().to_path_buf()
    }

    fn keys(path: &Path) -> Vec<String> {
        let mut keys: Vec<String> = read_body(path)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.key)
            .collect();
        keys.sort();
        keys
    }

    /// A new run of sample (t, 1): its judge call replays, its subject call is new.
    fn rerun(store: CassetteStore, into: ReplaceInto) -> PathBuf {
        let c = store.open("s").unwrap();
        assert_eq!(c.sample_recordings(&c.sample("t", 1)), 2);
        assert!(c.lookup("judge").unwrap().is_some());
        c.record_replacing(entry("t", 1, CallRole::Subject, "new", "new answer"), into)
            .unwrap();
        c.flush().unwrap();
        c.pending_path().to_path_buf()
    }

    /// A cassette `recorded` in a new scratch folder, then `rerun` into a cassette or pending file.
    struct Rerun {
        /// The folder: bind it (as `_scratch` if unused) for it to outlive the test's checks.
        scratch: Scratch,
        /// The cassette's path, and its bytes before the rerun.
        cassette: PathBuf,
        before: Vec<u8>,
        /// The pending file's path.
        pending: PathBuf,
    }

    fn recorded_and_rerun(scratch: &str, into: ReplaceInto) -> Rerun {
        let scratch = Scratch::new(scratch);
        let cassette = recorded(scratch.path());
        let before = fs::read(&cassette).unwrap();
        let pending = rerun(CassetteStore::new(scratch.path()), into);
        Rerun {
            scratch,
            cassette,
            before,
            pending,
        }
    }

    #[test]
    fn a_sample_recorded_by_its_numbered_trial_is_the_aggregate_trials_sample() {
        // Run 2 recorded by `t::run_2` (`--exact t::run_2`) is run 2 of `t`: a new call of either
        // trial's run 2 is stale, and replaces those recordings, instead of being a first recording.
        let (scratch, c) = opened("pending-numbered", "s");
        let dir = scratch.path();
        c.record(entry("t::run_2", 2, CallRole::Subject, "old", "old"))
            .unwrap();
        c.flush().unwrap();
        let c = CassetteStore::new(dir).open("s").unwrap();
        assert_eq!(c.sample_recordings(&c.sample("t", 2)), 1);
        assert_eq!(c.sample_recordings(&c.sample("t::run_2", 2)), 1);
        assert_eq!(c.sample("t::run_2", 2), c.sample("t", 2));
        assert_eq!(c.sample_recordings(&c.sample("t", 1)), 0);
        c.record_replacing(
            entry("t", 2, CallRole::Subject, "new", "new"),
            ReplaceInto::Cassette,
        )
        .unwrap();
        c.flush().unwrap();
        assert_eq!(keys(c.path()), ["new"]);
    }

    #[test]
    fn a_replacing_sample_goes_pending_whole_and_the_cassette_stays_byte_identical() {
        let Rerun {
            scratch,
            cassette,
            before,
            pending,
        } = recorded_and_rerun("pending-whole", ReplaceInto::Pending);
        assert_eq!(pending, scratch.path().join("s.pending.json"));
        assert_eq!(fs::read(&cassette).unwrap(), before);
        // The sample as a whole: the new subject call and the judge call it replayed.
        assert_eq!(keys(&pending), ["judge", "new"]);
        let settled = accept(&cassette, &pending, |_| true).unwrap();
        let settled: Vec<(&str, u32)> = settled
            .samples
            .iter()
            .map(|s| (s.test.as_str(), s.run))
            .collect();
        assert_eq!(settled, [("t", 1)]);
        // The old subject call is gone, the other sample untouched, the pending file removed.
        assert_eq!(keys(&cassette), ["judge", "new", "other"]);
        assert!(!pending.exists());
    }

    #[test]
    fn rejecting_keeps_the_accepted_recordings_and_removes_the_pending_file() {
        let Rerun {
            scratch: _scratch,
            cassette,
            before,
            pending,
        } = recorded_and_rerun("pending-reject", ReplaceInto::Pending);
        let settled = reject(&pending, |s| s.test == "t").unwrap();
        assert_eq!(settled.entries, 2);
        assert_eq!(fs::read(&cassette).unwrap(), before);
        assert!(!pending.exists());
    }

    #[test]
    fn a_later_run_supersedes_an_earlier_pending_answer_of_the_same_sample() {
        let Rerun {
            scratch, pending, ..
        } = recorded_and_rerun("pending-later", ReplaceInto::Pending);
        let again = CassetteStore::new(scratch.path()).open("s").unwrap();
        again
            .record_replacing(
                entry("t", 1, CallRole::Subject, "newer", "newer answer"),
                ReplaceInto::Pending,
            )
            .unwrap();
        again.flush().unwrap();
        // Never old and new calls of one sample mixed: the first pending run's calls are gone.
        assert_eq!(keys(&pending), ["newer"]);
    }

    #[test]
    fn accepted_at_once_a_sample_is_replaced_as_a_whole_in_the_cassette() {
        let Rerun {
            scratch: _scratch,
            cassette,
            pending,
            ..
        } = recorded_and_rerun("pending-accept-now", ReplaceInto::Cassette);
        assert_eq!(keys(&cassette), ["judge", "new", "other"]);
        assert!(!pending.exists());
    }

    #[test]
    fn a_pending_folder_receives_the_pending_file_and_accept_reads_it_back() {
        let scratch = Scratch::new("pending-folder");
        let dir = scratch.path();
        let elsewhere = dir.join("artifacts");
        let cassette = recorded(dir);
        let store = CassetteStore::new(dir).with_pending_dir(Some(elsewhere.clone()));
        let pending = rerun(store, ReplaceInto::Pending);
        assert_eq!(pending, elsewhere.join("s.pending.json"));
        assert!(!dir.join("s.pending.json").exists());
        assert_eq!(cassette_path(&pending, dir), cassette);
        let listed = crate::cassette::folder::Folder::list(&elsewhere).unwrap();
        assert_eq!(
            listed.ending_in(PENDING_SUFFIX).collect::<Vec<_>>(),
            [&pending]
        );
        accept(&cassette, &pending, |_| true).unwrap();
        assert_eq!(keys(&cassette), ["judge", "new", "other"]);
    }

    fn verdict(status: &str, passed: bool) -> RecordedChecks {
        let status = serde_json::from_value(serde_json::json!(status)).unwrap();
        RecordedChecks {
            target: None,
            test: String::new(),
            run: 0,
            status,
            checks: vec![crate::cassette::CheckVerdict {
                check: "judge: Is it kind?".into(),
                passed,
                advisory: false,
                question_type: None,
                judge_key: None,
            }],
            judge_settings: None,
        }
    }

    #[test]
    fn a_sample_s_verdict_is_kept_with_its_calls_and_accepted_with_them() {
        let (scratch, c) = opened("pending-verdicts", "s");
        let dir = scratch.path();
        let sample = c.sample("t", 1);
        c.record(entry("t", 1, CallRole::Subject, "old", "old answer"))
            .unwrap();
        let named = |mut v: RecordedChecks| {
            v.target = sample.target.clone();
            v.test = "t".into();
            v.run = 1;
            v
        };
        c.note_verdict(&sample, named(verdict("passed", true)))
            .unwrap();
        // A sample that only replayed keeps what it has: nothing to note for (u, 1).
        c.note_verdict(&c.sample("u", 1), named(verdict("failed", false)))
            .unwrap();
        c.flush().unwrap();
        let cassette = c.path().to_path_buf();
        let kept = read_body(&cassette).unwrap().verdicts;
        assert_eq!(kept, [named(verdict("passed", true))]);

        let again = CassetteStore::new(dir).open("s").unwrap();
        again
            .record_replacing(
                entry("t", 1, CallRole::Subject, "new", "new answer"),
                crate::cassette::ReplaceInto::Pending,
            )
            .unwrap();
        again
            .note_verdict(&sample, named(verdict("failed", false)))
            .unwrap();
        again.flush().unwrap();
        let pending = again.pending_path().to_path_buf();
        let waiting = samples_of(read_body(&pending).unwrap());
        assert_eq!(
            waiting[&sample].verdict,
            Some(named(verdict("failed", false))),
            "the new verdict waits with the new calls"
        );
        assert_eq!(
            read_body(&cassette).unwrap().verdicts,
            kept,
            "the accepted one stays"
        );
        accept(&cassette, &pending, |_| true).unwrap();
        assert_eq!(
            read_body(&cassette).unwrap().verdicts,
            [named(verdict("failed", false))],
            "accepted with its calls"
        );
    }

    #[test]
    fn a_write_that_fails_keeps_the_verdicts_and_replacements_it_had_taken() {
        let (scratch, c) = opened("pending-failed-write", "s");
        let sample = c.sample("t", 1);
        let named = |mut v: RecordedChecks| {
            v.target = sample.target.clone();
            v.test = "t".into();
            v.run = 1;
            v
        };
        // A directory where a file goes: writing it fails (as root too), until it is moved away.
        let blocked = |path: &Path, run: &dyn Fn()| {
            let aside = path.with_extension("aside");
            let moved = std::fs::rename(path, &aside).is_ok();
            std::fs::create_dir(path).unwrap();
            run();
            std::fs::remove_dir(path).unwrap();
            if moved {
                std::fs::rename(&aside, path).unwrap();
            }
        };
        c.record(entry("t", 1, CallRole::Subject, "old", "old answer"))
            .unwrap();
        let cassette = c.path().to_path_buf();
        blocked(&cassette, &|| {
            c.note_verdict(&sample, named(verdict("passed", true)))
                .unwrap_or_default();
            assert!(c.flush().is_err(), "the cassette cannot be written");
        });
        c.flush().unwrap();
        assert_eq!(
            read_body(&cassette).unwrap().verdicts,
            [named(verdict("passed", true))],
            "the verdict is written by the next flush"
        );

        let again = CassetteStore::new(scratch.path()).open("s").unwrap();
        let pending = again.pending_path().to_path_buf();
        blocked(&pending, &|| {
            again
                .record_replacing(
                    entry("t", 1, CallRole::Subject, "new", "new answer"),
                    crate::cassette::ReplaceInto::Pending,
                )
                .unwrap_or_default();
            again
                .note_verdict(&sample, named(verdict("failed", false)))
                .unwrap_or_default();
            assert!(again.flush().is_err(), "the pending file cannot be written");
        });
        again.flush().unwrap();
        let waiting = samples_of(read_body(&pending).unwrap());
        assert_eq!(
            waiting[&sample].verdict,
            Some(named(verdict("failed", false)))
        );
        assert_eq!(waiting[&sample].entries.len(), 1, "{:?}", waiting[&sample]);
    }
}
