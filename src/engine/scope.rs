//! One sample's scope: the engine it calls through, who the sample is ([`SampleIdentity`], set once)
//! and its state while it runs (`state.rs`).

use std::sync::Arc;

use super::Engine;
use super::state::SampleState;
use crate::budget::Budget;
use crate::role::JudgeUse;

/// Who one sample is: its test, cassette, run, and what its test's settings say of its calls. Set
/// once, before the sample starts; its holders get it by `&` only ([`RunScope::identity`]).
#[derive(Clone)]
pub struct SampleIdentity {
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
    /// Whether judge system prompts are marked for provider caching.
    pub cache_judge: bool,
    /// Whether the test runs only live: without a recording it is ignored.
    pub live_only: bool,
    /// The test's own budget (its `budget` key), shared by its samples.
    pub budget: Option<Arc<Budget>>,
    /// Its `judge_samples`, over `[judge]`'s.
    pub judge_samples: Option<u32>,
    /// Whether the tests its record command re-runs may call the judge.
    pub judge: JudgeUse,
}

impl SampleIdentity {
    /// Run `run_index` of `runs` of `test`, recorded in `cassette`, re-run by the name filter
    /// `filter`; its judge prompts not cached, not live only, no budget of its own, `judge_samples`
    /// from `[judge]`, the judge used if the body asks.
    pub fn new(test: &str, cassette: &str, filter: &str, run_index: u32, runs: u32) -> Self {
        Self {
            test: test.to_string(),
            cassette: cassette.to_string(),
            filter: filter.to_string(),
            run_index,
            runs,
            cache_judge: false,
            live_only: false,
            budget: None,
            judge_samples: None,
            judge: JudgeUse::default(),
        }
    }
}

/// One sample of one trial: the engine its calls go through, who it is, and its state.
pub struct RunScope {
    engine: Arc<Engine>,
    identity: SampleIdentity,
    state: SampleState,
}

impl RunScope {
    /// The scope of sample `identity`, calling through `engine`.
    pub fn new(engine: Arc<Engine>, identity: SampleIdentity) -> Self {
        Self {
            engine,
            identity,
            state: SampleState::default(),
        }
    }

    /// The engine of the run this sample belongs to: its calls, judge and embeddings go through it.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Who the sample is.
    pub fn identity(&self) -> &SampleIdentity {
        &self.identity
    }

    /// What the sample's parts noted so far.
    pub(crate) fn state(&self) -> &SampleState {
        &self.state
    }
}

impl std::fmt::Debug for RunScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunScope")
            .field("test", &self.identity.test)
            .field("run_index", &self.identity.run_index)
            .field("runs", &self.identity.runs)
            .finish_non_exhaustive()
    }
}
