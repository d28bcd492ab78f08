//! Writing a cassette's new recordings: what is unwritten is taken from its state under the state's
//! lock, written with that lock released (the calls that record and replay go on meanwhile), and
//! given back if the write fails, so that the next flush writes it and nothing is lost.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::MutexGuard;
use std::time::Instant;

use super::pending::{self, SampleCalls, SampleId};
use super::{
    Cassette, CassetteError, Edit, Entry, RecordedChecks, ReplaceInto, State, WRITE_INTERVAL,
};

/// What one flush writes.
struct Batch {
    /// First recordings.
    new: Vec<Entry>,
    /// Verdicts of first-recorded samples.
    verdicts: Vec<RecordedChecks>,
    /// Replacements accepted at once, written into the cassette.
    into_cassette: BTreeMap<SampleId, SampleCalls>,
    /// Replacements for review, written into the pending file.
    pending: BTreeMap<SampleId, SampleCalls>,
}

/// The part of a batch a failed write did not write.
enum Unwritten {
    /// Nothing was written.
    All,
    /// The cassette was written, the pending file not.
    Pending,
}

impl Cassette {
    /// Held while the file is written; taken before the state's lock, never after.
    pub(super) fn write_turn(&self) -> MutexGuard<'_, ()> {
        self.writing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the recordings not written yet, when the last write is a [`WRITE_INTERVAL`] ago;
    /// `state` is released first.
    pub(super) fn flush_if_due(&self, state: MutexGuard<'_, State>) -> Result<(), CassetteError> {
        let due = state
            .last_write
            .is_none_or(|t| t.elapsed() >= WRITE_INTERVAL);
        drop(state);
        if due { self.flush() } else { Ok(()) }
    }

    /// Writes the recordings not written yet.
    pub fn flush(&self) -> Result<(), CassetteError> {
        let _turn = self.write_turn();
        let Some(batch) = take(&mut self.state()) else {
            return Ok(());
        };
        self.write(&batch).map_err(|(error, unwritten)| {
            give_back(&mut self.state(), batch, unwritten);
            error
        })
    }

    /// [`Cassette::flush`] with the state's lock held (and the write turn taken by the caller): for
    /// the prune, which rewrites the file next.
    pub(super) fn flush_locked(&self, state: &mut State) -> Result<(), CassetteError> {
        let Some(batch) = take(state) else {
            return Ok(());
        };
        self.write(&batch).map_err(|(error, unwritten)| {
            give_back(state, batch, unwritten);
            error
        })
    }

    /// Writes `batch`: the cassette's part, then the pending file's.
    fn write(&self, batch: &Batch) -> Result<(), (CassetteError, Unwritten)> {
        if !batch.new.is_empty() || !batch.into_cassette.is_empty() || !batch.verdicts.is_empty() {
            self.write_merged(Edit {
                new: &batch.new,
                replaced: batch.into_cassette.clone(),
                verdicts: batch.verdicts.clone(),
                ..Edit::default()
            })
            .map_err(|e| (e, Unwritten::All))?;
        }
        if !batch.pending.is_empty() {
            pending::write_samples(&self.pending_path, &batch.pending)
                .map_err(|e| (e, Unwritten::Pending))?;
        }
        Ok(())
    }
}

/// Takes what is unwritten out of `state` (none when nothing is), and counts it as the last write.
fn take(state: &mut State) -> Option<Batch> {
    if state.unwritten.is_empty()
        && state.replacing_unwritten.is_empty()
        && state.verdicts_unwritten.is_empty()
    {
        return None;
    }
    let mut into_cassette = BTreeMap::new();
    let mut pending = BTreeMap::new();
    for sample in std::mem::take(&mut state.replacing_unwritten) {
        if let Some(replacement) = state.replacing.get(&sample) {
            let target = match replacement.to {
                ReplaceInto::Cassette => &mut into_cassette,
                ReplaceInto::Pending => &mut pending,
            };
            let calls = SampleCalls {
                entries: replacement.entries.clone(),
                verdict: replacement.verdict.clone(),
            };
            target.insert(sample, calls);
        }
    }
    state.last_write = Some(Instant::now());
    Some(Batch {
        new: std::mem::take(&mut state.unwritten),
        verdicts: std::mem::take(&mut state.verdicts_unwritten),
        into_cassette,
        pending,
    })
}

/// Gives back to `state` what a failed write left `unwritten` of `batch`, ahead of what was recorded
/// since: a replacement is rewritten whole from the state, so its sample is marked again.
fn give_back(state: &mut State, batch: Batch, unwritten: Unwritten) {
    let mut samples: BTreeSet<SampleId> = batch.pending.into_keys().collect();
    if let Unwritten::All = unwritten {
        samples.extend(batch.into_cassette.into_keys());
        let later = std::mem::replace(&mut state.unwritten, batch.new);
        state.unwritten.extend(later);
        let later = std::mem::replace(&mut state.verdicts_unwritten, batch.verdicts);
        state.verdicts_unwritten.extend(later);
    }
    state.replacing_unwritten.extend(samples);
}
