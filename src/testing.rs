//! What the project's own tests and benchmark reach beyond the public API: the cassette store, the
//! price table, rendering, the statistics, the sampling rule, the report writers, and an engine to run
//! the judge on without a harness. Not a public API: it changes without notice.

use std::future::Future;
use std::sync::Arc;

use crate::cassette::CassetteMode;
use crate::config::Config;
use crate::engine::Engine;
use crate::run::PromptRun;

pub use crate::budget::BudgetReport;
pub use crate::case::{CaseInfo, SampleRecord, SuiteInfo};
pub use crate::checks::{AssertionRecord, JudgeAnswer, SampleStatus};
pub use crate::outcome::SampleOutcome;
pub use crate::record::{Status, TrialRecord};
pub use crate::report::html::{Extras, RunInfo, Table, read_data as read_html_data, write_html};
pub use crate::report::pending::COLUMNS as PENDING_COLUMNS;

/// The built-in suite assertion kinds, for the project's tests of the documentation's examples.
pub use crate::suite::assert::BUILT_IN as BUILT_IN_ASSERTIONS;

/// Cassette files and entries, for tests that write recordings by hand.
pub mod cassette {
    pub use crate::cassette::folder::{Reads, reads};
    pub use crate::cassette::media::{MediaStore, parse_reference, reference};
    pub use crate::cassette::{
        CassetteStore, Entry, Exchange, FORMAT_VERSION, embedding_key, entry_key, now_rfc3339,
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
    pub use crate::render::{RenderedTemplate, render, shorten};
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

    /// Sample 1 of 1 of `test`, as a `run_fn` receives it, sending `request` (its prompt the last
    /// message's text, no inputs).
    pub fn sample(&self, test: &str, request: crate::CompletionRequest) -> crate::SampleContext {
        let scope = crate::engine::RunScope::new(
            self.0.clone(),
            crate::engine::SampleIdentity::new(test, test, test, 1, 1),
        );
        let prompt = request
            .messages
            .last()
            .map(crate::completion::Message::text)
            .unwrap_or_default();
        crate::SampleContext::new(request, prompt, Default::default(), Arc::new(scope))
    }
}

/// Every reader of what comes from a file or the network, as the property tests drive it: each returns
/// what the reader accepted, or its error as the user sees it.
pub mod readers {
    use std::path::Path;

    use serde_json::Value;

    use crate::completion::CompletionResult;
    use crate::config::{Config, WireFormat};
    use crate::embedding::Embedding;

    /// The problems a run at `root` lists (see `harness::listed_problems`): its `.env`, its
    /// `prompt-tester.toml`, its suites, datasets and calibration sets.
    pub fn listing(root: &Path) -> Result<Vec<String>, String> {
        crate::harness::listed_problems(root)
    }

    /// The calibration results under `root`, read as the end of a run reads them: the calibration
    /// section of the JSON report and of the summary (with one judged suite, corrected by them), and
    /// the run's errors.
    pub fn calibration_results(root: &Path) -> Result<(String, Vec<String>), String> {
        use crate::calibration::after_run::{after_run, render};
        let config = Config::load(root).map_err(|e| e.to_string())?;
        let cassettes = crate::cassette::CassetteStore::new(&config.cassette_dir);
        let after = after_run(
            &config,
            &[],
            &crate::commands::Commands::default(),
            &cassettes,
            &crate::suite::Walked::of(&config),
        );
        let shown = match after.report {
            Some(report) => format!(
                "{}\n{}",
                serde_json::to_string(&report).map_err(|e| e.to_string())?,
                render(&report, &[("suite".to_string(), 3, 5)])
            ),
            None => String::new(),
        };
        Ok((shown, after.errors))
    }

    /// The baseline at `path`, compared with itself as `--baseline` compares it: the comparison's text.
    pub fn baseline(path: &Path) -> Result<String, String> {
        use crate::report::baseline;
        let figures = baseline::load(path, &crate::commands::Commands::default())
            .map_err(|e| e.to_string())?;
        Ok(baseline::compare(&figures, &figures, 0.05).render(path))
    }

    /// The names the `.env` file at `path` sets (`None`: there is none); nothing is loaded.
    pub fn dotenv(path: &Path) -> Result<Option<Vec<String>>, String> {
        crate::harness::dotenv::read(path).map_err(|e| e.to_string())
    }

    /// The embeddings answer `body` of `wire`, read as the client reads it.
    pub fn embedding(wire: WireFormat, body: &[u8]) -> Result<Embedding, String> {
        let json: Value = crate::provider::wire::parse_json(body)?;
        crate::provider::embeddings::parse(wire, &json)
    }

    /// The verdict of a judge reply to one question, and the verdicts of the same reply read as the
    /// answer to `n` questions.
    pub fn judge_reply(
        result: &CompletionResult,
        n: usize,
    ) -> (Result<bool, String>, Result<usize, String>) {
        let one = crate::judge::parse::single(result).map(|p| p.yes);
        let several = crate::judge::parse::several(result, n).map(|v| v.iter().flatten().count());
        (one, several)
    }
}
