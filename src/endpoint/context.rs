//! [`SampleContext`]: what a `run_fn` of the third form is given for one sample.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::completion::{CompletionRequest, MediaPart};
use crate::engine::RunScope;

/// One sample, as a `run_fn` of the form `async fn(sample: SampleContext) ->
/// anyhow::Result<CompletionResult>` sees it: the rendered prompt and its inputs, the model and its
/// output limit, the whole request the harness would send, and (the `endpoint` feature)
/// [`SampleContext::base_url`], the URL the application's own client calls instead of the provider's,
/// so that its calls are recorded and replayed under this sample.
pub struct SampleContext {
    request: CompletionRequest,
    prompt: String,
    vars: BTreeMap<String, String>,
    media: BTreeMap<String, MediaPart>,
    scope: Arc<RunScope>,
}

impl std::fmt::Debug for SampleContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleContext")
            .field("test", &self.scope.identity().test)
            .field("run", &self.scope.identity().run_index)
            .field("model", &self.request.model)
            .finish_non_exhaustive()
    }
}

impl SampleContext {
    /// The context of `scope`'s sample, which would send `request` (its prompt `prompt`, rendered
    /// from `vars`).
    pub(crate) fn new(
        request: CompletionRequest,
        prompt: String,
        (vars, media): (BTreeMap<String, String>, BTreeMap<String, MediaPart>),
        scope: Arc<RunScope>,
    ) -> Self {
        Self {
            request,
            prompt,
            vars,
            media,
            scope,
        }
    }

    /// The prompt, rendered.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The values of the prompt's placeholders (`target_prompt_vars`).
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// The media values the prompt places (`target_prompt_vars(receipt = Media::file(..))`), by
    /// name; the request carries them as parts.
    pub fn media(&self) -> &BTreeMap<String, MediaPart> {
        &self.media
    }

    /// The model the test names.
    pub fn model(&self) -> &str {
        &self.request.model
    }

    /// The most output tokens the test allows (`max_tokens`).
    pub fn max_tokens(&self) -> u32 {
        self.request.max_tokens
    }

    /// This sample's index, 1-based.
    pub fn run(&self) -> u32 {
        self.scope.identity().run_index
    }

    /// The request the harness would send: the model, the system prompt, the conversation ending with
    /// the prompt, the tools.
    pub fn request(&self) -> &CompletionRequest {
        &self.request
    }

    /// The sample, as a `run_fn` of the third form takes it: its calls are expected through the
    /// endpoint (a sample that sends none is said to have gone around it).
    pub(crate) fn taken_whole(self) -> Self {
        self.scope.state().take_whole();
        self
    }

    /// The request, taken.
    pub fn into_request(self) -> CompletionRequest {
        self.request
    }

    /// The URL that stands in for `provider`'s base URL for this sample (`openai`, `anthropic`,
    /// `google`, or a `[providers.NAME]` of `prompt-tester.toml`), in the shape its clients expect: an
    /// OpenAI-compatible one ends in `/v1`, Anthropic's and Gemini's are the host's root. Calls to it
    /// are recorded and replayed like the harness's own (see the guide's chapter on testing your
    /// application's own calls). The error names the closest known provider.
    #[cfg(feature = "endpoint")]
    pub fn base_url(&self, provider: &str) -> Result<String, crate::config::ConfigError> {
        super::base_url(&self.scope, provider)
    }
}
