//! One sample's scope: the engine it calls through, what its calls cost, how each ended, and what its
//! checks found.

use std::sync::{Arc, Mutex};

use super::{CallEnding, CallRole, Engine, Usage};
use crate::budget::Budget;

/// One sample of one trial: where its calls are recorded and what they cost.
pub struct RunScope {
    /// The engine of the run this sample belongs to: its calls, judge and embeddings go through it.
    pub engine: Arc<Engine>,
    /// The trial name.
    pub test: String,
    /// The cassette's name (the test, or the suite for suite cases).
    pub cassette: String,
    /// The name filter that re-runs this test (for the commands printed in messages).
    pub filter: String,
    /// This sample's index, 1-based.
    pub run_index: u32,
    /// How many samples the test takes.
    pub runs: u32,
    /// Mark judge system prompts for provider caching.
    pub cache_judge: bool,
    /// What the calls of this run cost.
    pub usage: Mutex<Usage>,
    /// The test runs only live: without a recording it is ignored (`live_only = true`).
    pub live_only: bool,
    /// What this sample's checks found (assertions, judge answers), for the reports.
    pub checks: Mutex<crate::checks::Checks>,
    /// The conversation the test body's follow-ups reached, for the reports (empty without any).
    pub(crate) conversation: Mutex<Vec<crate::completion::Message>>,
    /// The test's own budget (its `budget` key), shared by its samples.
    pub budget: Option<Arc<Budget>>,
    /// How each model call of this sample ended, in the order they ended: what its outcome is read from.
    pub(crate) calls: Mutex<Vec<(CallRole, CallEnding)>>,
    /// Its calls through the recording endpoint.
    pub(crate) relay: super::app_calls::SampleRelay,
    /// Its `judge_samples`, over `[judge]`'s.
    pub judge_samples: Option<u32>,
    /// Whether the tests its record command re-runs may call the judge.
    pub judge: crate::role::JudgeUse,
}

impl RunScope {
    /// A scope for run `run_index` of `runs` of `test`.
    pub fn new(
        engine: Arc<Engine>,
        test: &str,
        cassette: &str,
        filter: &str,
        run_index: u32,
        runs: u32,
        cache_judge: bool,
    ) -> Self {
        Self {
            engine,
            test: test.to_string(),
            cassette: cassette.to_string(),
            filter: filter.to_string(),
            run_index,
            runs,
            cache_judge,
            usage: Mutex::new(Usage::default()),
            live_only: false,
            checks: Mutex::default(),
            conversation: Mutex::default(),
            budget: None,
            calls: Mutex::default(),
            relay: Default::default(),
            judge_samples: None,
            judge: crate::role::JudgeUse::default(),
        }
    }

    /// Notes how one model call of this sample ended (the engine notes each of its calls; the judge
    /// notes a reply that held no verdict).
    pub(crate) fn note_call(&self, role: CallRole, ending: CallEnding) {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((role, ending));
    }

    /// How the calls of this sample ended so far, in order.
    pub(crate) fn calls(&self) -> Vec<(CallRole, CallEnding)> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A copy of the usage so far.
    pub fn usage(&self) -> Usage {
        self.usage.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Counts a call in this sample's usage.
    pub(super) fn account(&self, count: impl FnOnce(&mut Usage)) {
        count(&mut self.usage.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Notes what a check found, for the reports.
    pub(crate) fn note(&self, edit: impl FnOnce(&mut crate::checks::Checks)) {
        edit(&mut self.checks.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Notes the conversation a follow-up reached; the longest is kept (a body may branch from one run).
    pub(crate) fn note_conversation(&self, transcript: &[crate::completion::Message]) {
        let mut kept = self.conversation.lock().unwrap_or_else(|e| e.into_inner());
        if transcript.len() >= kept.len() {
            *kept = transcript.to_vec();
        }
    }

    /// The conversation the follow-ups reached, taken out (empty without any).
    pub(crate) fn take_conversation(&self) -> Vec<crate::completion::Message> {
        std::mem::take(&mut self.conversation.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// What the checks found, taken out.
    pub(crate) fn take_checks(&self) -> crate::checks::Checks {
        std::mem::take(&mut self.checks.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl std::fmt::Debug for RunScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunScope")
            .field("test", &self.test)
            .field("run_index", &self.run_index)
            .field("runs", &self.runs)
            .finish_non_exhaustive()
    }
}
