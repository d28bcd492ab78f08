//! What the project's own tests and benchmark reach beyond the public API: the cassette store, the
//! price table, rendering, the statistics, the sampling rule, the report writers, and an engine to run
//! the judge on without a harness. Not a public API: it changes without notice.

use std::future::Future;
use std::sync::Arc;

use crate::cassette::CassetteMode;
use crate::config::Config;
use crate::engine::Engine;
use crate::run::PromptRun;

pub use crate::case::{CaseInfo, SampleRecord, SampleStatus, SuiteInfo};
pub use crate::checks::{AssertionRecord, JudgeAnswer};
pub use crate::harness::html::{Extras, RunInfo, Table, write_html};
pub use crate::harness::record::{Status, TrialRecord};

/// The built-in suite assertion kinds, for the project's tests of the documentation's examples.
pub use crate::suite::assert::BUILT_IN as BUILT_IN_ASSERTIONS;

/// Cassette files and entries, for tests that write recordings by hand.
pub mod cassette {
    pub use crate::cassette::{
        CassetteStore, Entry, Exchange, embedding_key, entry_key, now_rfc3339,
    };
    pub use crate::role::CallRole;
}

/// The wire formats: each provider's request body, and its answer and error bodies read.
pub mod wire {
    pub use crate::provider::wire::{parse_error_body, parse_response, request_body};
}

/// The price table.
pub mod pricing {
    pub use crate::pricing::*;
}

/// `{placeholder}` rendering.
pub mod render {
    pub use crate::render::{Rendered, render, shorten};
}

/// The statistics.
pub mod stats {
    pub use crate::stats::*;
}

/// The sampling plans and the rule that sizes each wave of samples, for the benchmark's simulation.
pub mod sampling {
    pub use crate::outcome::{SampleOutcome, next_wave};
    pub use crate::plan::{SamplePlan, Threshold};
    pub use crate::stats::sprt::Sprt;
}

/// An engine outside a harness: judge calls and embeddings of hand-made runs go through it.
#[derive(Debug, Clone)]
pub struct TestEngine(Arc<Engine>);

impl TestEngine {
    /// An engine on `config`, with cassettes used as `mode` says.
    pub fn new(config: Config, mode: CassetteMode) -> Self {
        let policy = crate::cassette::Policy {
            mode,
            ci: crate::config::is_ci(),
            ..Default::default()
        };
        Self(Engine::new(config, policy, Arc::new(())))
    }

    /// Runs `future` on the engine's runtime, where its HTTP client lives.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    /// A run of `test` whose prompt was `prompt` and whose answer was `output` (run 1 of 1), as if a
    /// subject call had answered it.
    pub fn prompt_run(
        &self,
        test: &str,
        prompt: &str,
        output: &str,
        cache_judge: bool,
    ) -> PromptRun {
        PromptRun::given(self.0.clone(), test, prompt, output, cache_judge)
    }
}
