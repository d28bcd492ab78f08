//! One sample's scope: the engine it calls through, who the sample is ([`SampleIdentity`], set once)
//! and its state while it runs (`state.rs`).

use std::sync::Arc;

use super::Engine;
use super::state::SampleState;
use crate::budget::Budget;
use crate::role::JudgeUse;

/// Who one sample is: its test, cassette, run, and what its test's settings say of its calls. Set
/// once, before the sample starts.
#[derive(Clone)]
pub struct SampleIdentity {
    test: String,
    cassette: String,
    filter: String,
    run_index: u32,
    runs: u32,
    cache_judge: bool,
    live_only: bool,
    budget: Option<Arc<Budget>>,
    judge_samples: Option<u32>,
    judge: JudgeUse,
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

    /// With its judge's system prompts marked for provider caching, or not.
    pub fn with_cache_judge(mut self, cache_judge: bool) -> Self {
        self.cache_judge = cache_judge;
        self
    }

    /// Run only live, or not (`live_only = true`).
    pub fn with_live_only(mut self, live_only: bool) -> Self {
        self.live_only = live_only;
        self
    }

    /// With the test's own budget (its `budget` key), shared by its samples.
    pub fn with_budget(mut self, budget: Option<Arc<Budget>>) -> Self {
        self.budget = budget;
        self
    }

    /// With its `judge_samples`, over `[judge]`'s.
    pub fn with_judge_samples(mut self, judge_samples: Option<u32>) -> Self {
        self.judge_samples = judge_samples;
        self
    }

    /// With whether the tests its record command re-runs may call the judge.
    pub fn with_judge(mut self, judge: JudgeUse) -> Self {
        self.judge = judge;
        self
    }

    /// The trial name.
    pub fn test(&self) -> &str {
        &self.test
    }

    /// The cassette's name (the test, or the suite for suite cases).
    pub fn cassette(&self) -> &str {
        &self.cassette
    }

    /// The name filter that re-runs this test (for the commands printed in messages).
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// This sample's index, 1-based.
    pub fn run_index(&self) -> u32 {
        self.run_index
    }

    /// How many samples the test takes.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Whether judge system prompts are marked for provider caching.
    pub fn cache_judge(&self) -> bool {
        self.cache_judge
    }

    /// Whether the test runs only live: without a recording it is ignored.
    pub fn live_only(&self) -> bool {
        self.live_only
    }

    /// The test's own budget, if it has one.
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_deref()
    }

    /// Its `judge_samples`, if its test sets one.
    pub fn judge_samples(&self) -> Option<u32> {
        self.judge_samples
    }

    /// Whether the tests its record command re-runs may call the judge.
    pub fn judge(&self) -> JudgeUse {
        self.judge
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
