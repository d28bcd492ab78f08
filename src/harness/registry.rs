//! What `#[prompt_test]` registers: one [`RustTest`] per annotated function, collected by inventory.

use std::future::Future;
use std::pin::Pin;

use crate::case::Written;
use crate::completion::{CompletionRequest, CompletionResult, Turn};
use crate::config::SamplingKeys;
use crate::endpoint::SampleContext;
use crate::model::{ModelId, Provider};
use crate::run::{AppRun, PromptRun};

/// The future a test body returns, boxed.
pub type BodyFuture = Pin<Box<dyn Future<Output = anyhow::Result<()>>>>;

pub use crate::case::RunFnFuture;

/// Where the prompt template comes from.
#[derive(Debug, Clone, Copy)]
pub enum PromptSource {
    /// `target_prompt = "..."`.
    Inline(&'static str),
    /// `target_prompt_file = "..."`, read at compile time (`include_str!`).
    File {
        /// The path as written, relative to the crate root.
        path: &'static str,
        /// The file's text.
        text: &'static str,
    },
}

impl PromptSource {
    /// The template text.
    pub fn text(&self) -> &'static str {
        match self {
            PromptSource::Inline(text) | PromptSource::File { text, .. } => text,
        }
    }
}

/// The parameters of one `#[prompt_test]`, built at run time (values may be any expression).
pub struct TestSpec {
    /// The prompt template.
    pub target_prompt: PromptSource,
    /// Values for the template's placeholders: text, or media placed as parts.
    pub target_prompt_vars: Vec<(String, PromptVar)>,
    /// The request as the attribute writes it (`subject_provider`, `subject_model`, `system`,
    /// `max_tokens`, `temperature`, `tools`); `[defaults]` fill what it leaves out.
    pub request: Written,
    /// How many samples and what decides them (`runs`, `pass_threshold`, `early_stop`, `pass_rate`,
    /// `confidence`, `max_runs`, `indifference`); `[defaults]` fill what it leaves out.
    pub sampling: SamplingKeys,
    /// `judge_prompt_cache`: prime the provider's prompt cache with the first sample, then run the
    /// others (judge calls marked).
    pub judge_prompt_cache: bool,
    /// `judge_samples`: each judge question asked this many times (odd), over `[judge]`'s.
    pub judge_samples: Option<u32>,
    /// A custom executor replacing the provider call.
    pub run_fn: Option<crate::case::RunFn>,
    /// Tools with handlers (and MCP servers): the subject call becomes an agent loop.
    pub toolbox: Option<crate::tools::Toolbox>,
    /// Meant only for live runs: without a recording it is ignored ("live only, not run"), in CI too.
    pub live_only: bool,
    /// `subject_models`: `provider/model` entries, one trial each (checked when the trials are built).
    pub subject_models: Option<Vec<String>>,
}

impl Default for TestSpec {
    fn default() -> Self {
        Self {
            target_prompt: PromptSource::Inline(""),
            target_prompt_vars: Vec::new(),
            request: Written::default(),
            sampling: SamplingKeys::default(),
            judge_prompt_cache: false,
            judge_samples: None,
            run_fn: None,
            toolbox: None,
            live_only: false,
            subject_models: None,
        }
    }
}

/// A value of `target_prompt_vars`: text (anything `Display`), or media placed as a part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptVar {
    /// The value as text.
    Text(String),
    /// An image, a document or audio.
    Media(crate::completion::Media),
}

impl PromptVar {
    /// Its text, when it is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            PromptVar::Text(text) => Some(text),
            PromptVar::Media(_) => None,
        }
    }
}

/// What `target_prompt_vars` takes: a `Display` value as its text, a [`Media`](crate::completion::Media)
/// as a part of the prompt.
#[diagnostic::on_unimplemented(
    message = "a `target_prompt_vars` value cannot be `{Self}`",
    label = "neither text nor media",
    note = "a value is anything `Display` (a string, a number), or `Media::file(path)` / `Media::bytes(name, bytes)`"
)]
pub trait IntoPromptVar {
    /// The value, as the prompt takes it.
    fn prompt_var(&self) -> PromptVar;
}

impl<T: std::fmt::Display + ?Sized> IntoPromptVar for T {
    fn prompt_var(&self) -> PromptVar {
        PromptVar::Text(self.to_string())
    }
}

impl IntoPromptVar for crate::completion::Media {
    fn prompt_var(&self) -> PromptVar {
        PromptVar::Media(self.clone())
    }
}

/// `run_fn = f` with `async fn f(prompt: &str, model: &str, max_tokens: u32)` (the form that came first).
pub struct PromptModelMaxTokens;

/// `run_fn = f` with `async fn f(request: CompletionRequest)`: the whole request.
pub struct WholeRequest;

/// `run_fn = f` with `async fn f(sample: SampleContext)`: the sample, whose `base_url` the application's
/// own client calls.
pub struct WholeSample;

/// The three forms `run_fn` takes, told apart by the function's arguments (`Form` is
/// [`PromptModelMaxTokens`], [`WholeRequest`] or [`WholeSample`], inferred): `(prompt, model,
/// max_tokens)`, the whole [`CompletionRequest`] (model, system prompt, the conversation ending with the
/// prompt, tools), or the [`SampleContext`] (the request, the prompt's inputs, and the recording
/// endpoint's URL for the application's own client).
#[diagnostic::on_unimplemented(
    message = "`run_fn` cannot be `{Self}`",
    label = "not a `run_fn`",
    note = "`run_fn` takes `async fn(prompt: &str, model: &str, max_tokens: u32) -> anyhow::Result<CompletionResult>`, `async fn(request: CompletionRequest) -> anyhow::Result<CompletionResult>` or `async fn(sample: SampleContext) -> anyhow::Result<CompletionResult>`"
)]
pub trait RunFnForm<Form> {
    /// Calls the function with what its form takes of `sample`.
    fn call(self, sample: SampleContext) -> impl Future<Output = anyhow::Result<CompletionResult>>;
}

impl<F> RunFnForm<PromptModelMaxTokens> for F
where
    F: AsyncFn(&str, &str, u32) -> anyhow::Result<CompletionResult>,
{
    async fn call(self, sample: SampleContext) -> anyhow::Result<CompletionResult> {
        let request = sample.into_request();
        // The prompt is the last turn, the user's.
        let prompt = request
            .messages
            .last()
            .map(crate::completion::Message::text)
            .unwrap_or_default();
        self(&prompt, &request.model, request.max_tokens).await
    }
}

impl<F> RunFnForm<WholeRequest> for F
where
    F: AsyncFn(CompletionRequest) -> anyhow::Result<CompletionResult>,
{
    async fn call(self, sample: SampleContext) -> anyhow::Result<CompletionResult> {
        self(sample.into_request()).await
    }
}

impl<F> RunFnForm<WholeSample> for F
where
    F: AsyncFn(SampleContext) -> anyhow::Result<CompletionResult>,
{
    async fn call(self, sample: SampleContext) -> anyhow::Result<CompletionResult> {
        self(sample.taken_whole()).await
    }
}

/// `messages = [...]`: any list of turns.
pub fn turn_list(turns: impl IntoIterator<Item = Turn>) -> Vec<Turn> {
    turns.into_iter().collect()
}

/// One registered `#[prompt_test]` function.
pub struct RustTest {
    /// The function's name.
    pub name: &'static str,
    /// `module_path!()` where it is defined (the crate name first).
    pub module_path: &'static str,
    /// The crate root of the crate that defines it.
    pub manifest_dir: &'static str,
    /// Source file and line, for messages.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
    /// Builds the parameters.
    pub spec: fn() -> TestSpec,
    /// Runs the body on one sample.
    pub body: Body,
}

/// A test body, by the sample it takes: the form of the test.
#[derive(Clone, Copy)]
pub enum Body {
    /// A prompt test: the harness calls the model with the test's prompt, the body checks the run.
    Prompt(fn(PromptRun) -> BodyFuture),
    /// An application test: the body calls the application itself, through the recording endpoint.
    App(fn(AppRun) -> BodyFuture),
    /// An application test whose client reads its base URL from the environment (`app_env`).
    AppEnv(fn(AppRun) -> BodyFuture),
}

impl Body {
    /// Whether it is an application test.
    pub fn is_app(&self) -> bool {
        matches!(self, Body::App(_) | Body::AppEnv(_))
    }
}

inventory::collect!(RustTest);

impl RustTest {
    /// The trial name: the module path without the crate name, then the function name.
    pub fn trial_name(&self) -> String {
        match self.module_path.split_once("::") {
            Some((_, rest)) => format!("{rest}::{}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// What a test body may return: `()` or a `Result<(), E>`.
#[diagnostic::on_unimplemented(
    message = "a #[prompt_test] function cannot return `{Self}`",
    label = "this return type",
    note = "return `()`, `anyhow::Result<()>`, or `Result<(), E>` where `E: Into<anyhow::Error>` (any `std::error::Error + Send + Sync + 'static`)"
)]
pub trait IntoTestResult {
    /// Converts into the harness's result.
    fn into_test_result(self) -> anyhow::Result<()>;
}

impl IntoTestResult for () {
    fn into_test_result(self) -> anyhow::Result<()> {
        Ok(())
    }
}

impl<E: Into<anyhow::Error>> IntoTestResult for Result<(), E> {
    fn into_test_result(self) -> anyhow::Result<()> {
        self.map_err(Into::into)
    }
}

/// `subject_model = Model::X` or `"string"`.
pub fn model_id(model: impl Into<ModelId>) -> String {
    model.into().0
}

/// `subject_models = [...]`: any list of texts.
pub fn subject_list<S: AsRef<str>>(models: impl IntoIterator<Item = S>) -> Vec<String> {
    models.into_iter().map(|m| m.as_ref().to_string()).collect()
}

/// `subject_provider = Provider::X` or `"string"`.
pub fn provider_name(provider: impl Into<Provider>) -> String {
    provider.into().name().to_string()
}
