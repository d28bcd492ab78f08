//! [`PromptRun`]: one sample of a prompt test, what the test body asserts on.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod app;
mod error;
mod follow_up;
mod similarity;
mod tools;

pub use app::AppRun;
pub use error::RunError;
pub(crate) use follow_up::Continue;
pub(crate) use tools::Expect;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::completion::{CompletionResult, MediaPart, Message, ToolCall};
use crate::engine::{RunScope, SampleIdentity};

/// One sample of a prompt test: the rendered prompt, the model's answer and its accounting.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct PromptRun {
    /// The rendered prompt.
    pub prompt: String,
    /// The values the template was rendered with.
    pub target_prompt_vars: BTreeMap<String, String>,
    /// The media values the prompt placed (`target_prompt_vars(receipt = Media::file(..))`), by name.
    /// Not serialised: their bytes belong to the request, not to what a run says.
    #[serde(skip)]
    pub target_prompt_media: BTreeMap<String, MediaPart>,
    /// The model's answer.
    pub output: String,
    /// The provider's own stop reason.
    pub stop_reason: Option<String>,
    /// The provider blocked the prompt or the answer.
    pub safety_filtered: bool,
    /// The model the test asked for.
    pub model: String,
    /// The provider the test asked for.
    pub provider: String,
    /// The model that answered, as the provider reports it.
    pub model_used: Option<String>,
    /// The model version the provider reports.
    pub model_version: Option<String>,
    /// The provider's request id.
    pub request_id: Option<String>,
    /// Every prompt token processed (cache reads and writes included).
    pub input_tokens: u64,
    /// Every output token (thinking included).
    pub output_tokens: u64,
    /// Prompt tokens read from cache (subset of `input_tokens`).
    pub cached_input_tokens: u64,
    /// Prompt tokens written to cache (subset of `input_tokens`).
    pub cache_creation_tokens: u64,
    /// Thinking tokens (subset of `output_tokens`).
    pub thoughts_tokens: u64,
    /// Cost of the subject call(s) in USD; `None` when the model's price is unknown.
    pub cost_usd: Option<f64>,
    /// Wall time of the subject call(s); the recorded latency when replayed.
    #[serde(serialize_with = "serialize_secs")]
    pub latency: Duration,
    /// Which sample this is, 1-based.
    pub run_index: u32,
    /// How many samples the test takes.
    pub runs: u32,
    /// Whether the answer was replayed from a cassette.
    pub replayed: bool,
    /// Tool calls the model made (all turns).
    pub tool_calls: Vec<ToolCall>,
    /// The whole conversation up to this answer: the messages sent before it (the prompt, and for a
    /// follow-up or a scripted turn the earlier turns and replies; an agent loop's tool rounds) and the
    /// answer.
    pub transcript: Vec<Message>,
    #[serde(skip)]
    pub(crate) scope: Arc<RunScope>,
    /// How the conversation goes on (`follow_up`).
    #[serde(skip)]
    pub(crate) continues: Continue,
    /// The run of the turn before this one, when this one is a follow-up or a scripted turn.
    #[serde(skip)]
    pub(crate) previous: Option<Arc<PromptRun>>,
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What a run asked for: the rendered prompt, its inputs, and where it was sent.
#[derive(Debug, Clone)]
pub(crate) struct RunRequest {
    /// The rendered prompt.
    pub prompt: String,
    /// The values it was rendered with.
    pub vars: BTreeMap<String, String>,
    /// The media values it placed.
    pub media: BTreeMap<String, MediaPart>,
    /// The provider name.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// How the conversation goes on after the answer.
    pub continues: Continue,
    /// The run of the turn before, for a follow-up.
    pub previous: Option<Arc<PromptRun>>,
}

impl PromptRun {
    pub(crate) fn from_result(
        scope: Arc<RunScope>,
        request: RunRequest,
        completed: crate::engine::Completed,
        transcript: Vec<Message>,
    ) -> Self {
        let RunRequest {
            prompt,
            vars,
            media,
            provider,
            model,
            continues,
            previous,
        } = request;
        let crate::engine::Completed {
            result,
            latency,
            replayed,
        } = completed;
        Self {
            prompt,
            target_prompt_vars: vars,
            target_prompt_media: media,
            output: result.text,
            stop_reason: result.stop_reason,
            safety_filtered: result.safety_filtered,
            model,
            provider,
            model_used: result.model_used,
            model_version: result.model_version,
            request_id: result.request_id,
            input_tokens: result.input_tokens,
            output_tokens: result.output_tokens,
            cached_input_tokens: result.cached_input_tokens,
            cache_creation_tokens: result.cache_creation_tokens,
            thoughts_tokens: result.thoughts_tokens,
            cost_usd: result.cost_usd,
            latency,
            run_index: scope.identity().run_index,
            runs: scope.identity().runs,
            replayed,
            tool_calls: result.tool_calls,
            transcript,
            scope,
            continues,
            previous,
        }
    }

    /// A run of `test` whose prompt was `prompt` and whose answer was `output`, in a fresh scope of
    /// `engine` (run 1 of 1, no cassette of its own beyond the test's name): tests of code that takes a
    /// `PromptRun` (the judge) build one without a subject call.
    pub(crate) fn given(
        engine: Arc<crate::engine::Engine>,
        test: &str,
        prompt: &str,
        output: &str,
        cache_judge: bool,
    ) -> Self {
        let scope = Arc::new(RunScope::new(
            engine,
            SampleIdentity {
                cache_judge,
                ..SampleIdentity::new(test, test, test, 1, 1)
            },
        ));
        let request = RunRequest {
            prompt: prompt.to_string(),
            vars: BTreeMap::new(),
            media: BTreeMap::new(),
            provider: "test".to_string(),
            model: "test".to_string(),
            continues: Continue::Not("a given answer"),
            previous: None,
        };
        let completed = crate::engine::Completed {
            result: CompletionResult::new(output, 0, 0),
            latency: Duration::ZERO,
            replayed: false,
        };
        Self::from_result(
            scope,
            request,
            completed,
            vec![Message::user(prompt), Message::assistant(output)],
        )
    }

    /// The calls this run made so far, subject and judge apart. Not a stable API (for tests).
    #[doc(hidden)]
    pub fn __usage(&self) -> crate::usage::Usage {
        self.scope.state().usage()
    }

    /// The trial this run belongs to.
    pub fn test_name(&self) -> &str {
        &self.scope.identity().test
    }

    /// The URL standing in for `provider`'s base URL for this run's sample, for calls the test body
    /// makes after the run with the application's own client (a second stage fed `run.output`): they
    /// are recorded and replayed under the same sample. The same as
    /// [`SampleContext::base_url`](crate::SampleContext::base_url).
    #[cfg(feature = "endpoint")]
    pub fn base_url(&self, provider: &str) -> Result<String, crate::config::ConfigError> {
        crate::endpoint::base_url(&self.scope, provider)
    }
}
