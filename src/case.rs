//! One shape for a prompt test, whichever front end wrote it.
//!
//! A `#[prompt_test]` function (`harness::rust_test`) and a TOML suite case (`suite`) both resolve into
//! a [`Case`]: the request to send (a template with the defaults applied), the sampling plan, how the
//! subject is called and how a sample's run is judged. A [`Plan`] is one trial of a case (the case, or
//! one numbered run), which `harness::trial::execute` runs.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::{self, AgentError, LoopError};
use crate::checks::{AssertionRecord, JudgeAnswer, Observation, SampleStatus};
use crate::completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, ToolCall, ToolSpec, Turn,
};
use crate::config::run_seed;
use crate::config::{Config, Defaults, WireFormat};
use crate::defaults;
use crate::engine::{CallError, CallRole, Completed, RunScope};
use crate::model::Subject;
use crate::outcome::SampleOutcome;
use crate::plan::SamplePlan;
use crate::run::{Continue, PromptRun, RunRequest};
use crate::tools::Toolbox;
use crate::trajectory::ModelCall;

mod column;
mod custom;
mod no_subject;
pub use column::{Cell, Column};
pub(crate) use custom::went_around;
pub use no_subject::NoSubject;

/// The future a custom executor (`run_fn`) returns, boxed.
pub type RunFnFuture = Pin<Box<dyn Future<Output = anyhow::Result<CompletionResult>>>>;

/// A custom executor: a sample (the request it would send: its model, system prompt, conversation
/// ending with the rendered prompt, tools; and the recording endpoint's URL) to the model's answer.
/// The attribute's `run_fn` may take the sample, the request or `(prompt, model, max_tokens)`
/// (`harness::registry::RunFnForm`).
pub type RunFn = fn(crate::endpoint::SampleContext) -> RunFnFuture;

/// An application test's body on one sample (its panics caught, its result read): no prompt of the
/// harness's, the application's calls through the recording endpoint.
pub type AppBody = Arc<dyn Fn(crate::run::AppRun) -> OutcomeFuture + Send + Sync>;

/// The future that judges one sample's run.
pub type OutcomeFuture = Pin<Box<dyn Future<Output = SampleOutcome>>>;

/// Judges one sample's run: a test body, or a suite case's assertions.
pub type Evaluator = Arc<dyn Fn(PromptRun) -> OutcomeFuture + Send + Sync>;

/// A suite as the reports name it: its name and file, and the prompt and dataset it tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// The suite's name (file stem without `.evals`).
    #[serde(rename = "suite")]
    pub name: String,
    /// The suite file, relative to the crate root.
    pub file: String,
    /// The prompt id (suite `prompt_id`, else the prompt file or the suite name).
    pub prompt_id: String,
    /// The prompt version (suite `prompt_version`), if given.
    pub prompt_version: Option<String>,
    /// The dataset version (suite `dataset_version`), if given.
    pub dataset_version: Option<String>,
}

/// Where a suite case came from, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseInfo {
    /// Its suite.
    #[serde(flatten)]
    pub suite: SuiteInfo,
    /// The case's name.
    pub case: String,
    /// The case's category, if any.
    pub category: Option<String>,
}

/// What a front end wrote about the request, before `[defaults]` fill the gaps: the part a
/// `#[prompt_test]` attribute, a suite and a suite's case share.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    /// Provider, model, `max_tokens` and temperature: the keys `[defaults]` sets too.
    pub call: Defaults,
    /// The system prompt.
    pub system: Option<String>,
    /// The turns sent before the prompt, placeholders filled (a case's replace its suite's).
    pub messages: Option<Vec<Turn>>,
    /// Tools the model may call (`Some(vec![])` declares none, overriding a suite's).
    pub tools: Option<Vec<ToolSpec>>,
}

crate::config::layered_fieldwise!(pub Written {
    call,
    system,
    messages,
    tools
});

/// The request every sample of a case sends.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// The provider and model the samples call, or why no sample can be made (a provider or model
    /// set nowhere, a provider no endpoint has, a placeholder without a value), said with where to fix
    /// it: the trial fails with it once, before anything is sent.
    pub subject: Result<Subject, NoSubject>,
    /// The system prompt (the `system` key's, or the first turn of `messages`).
    pub system: Option<String>,
    /// The turns of `messages` sent before the prompt (its system turn is `system`).
    pub history: Vec<Message>,
    /// The rendered prompt: the last user turn (a suite case's first turn, when it has `turns`).
    pub prompt: String,
    /// The user turns sent after `prompt`, each with the conversation so far (a suite case's `turns`
    /// after the first); empty for a single prompt.
    pub turns: Vec<String>,
    /// The values it was rendered with.
    pub vars: BTreeMap<String, String>,
    /// The media values it places, by name.
    pub media: BTreeMap<String, crate::completion::MediaPart>,
    /// The prompt as parts, text and media in order, when it places media (else empty: the prompt is
    /// sent as one text).
    pub prompt_content: Vec<ContentBlock>,
    /// The most tokens to generate.
    pub max_tokens: u32,
    /// The sampling temperature.
    pub temperature: Option<f32>,
    /// The seed of the first sample (sample k sends `seed + k − 1`).
    pub seed: Option<u32>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The most USD the test may spend on provider calls (`budget`), across its samples.
    pub budget: Option<f64>,
}

impl RequestTemplate {
    /// The template for `written`, with `[defaults]` applied. `missing` words the error when the
    /// provider or the model (the names it gets, `"provider"` / `"model"`) is set nowhere.
    pub fn resolve(
        config: &Config,
        written: Written,
        prompt: String,
        vars: BTreeMap<String, String>,
        missing: impl FnOnce(&[&str]) -> String,
    ) -> Self {
        let mut call = written.call.over(&config.defaults);
        // `--subject` retargets every test, whatever it names.
        if let Some(s) = &config.subject {
            (call.provider, call.model) = (Some(s.provider.clone()), Some(s.model.clone()));
        }
        let subject = match (call.provider, call.model) {
            (Some(provider), Some(model)) => Ok(Subject { provider, model }),
            (p, m) => {
                let names = [
                    p.is_none().then_some("provider"),
                    m.is_none().then_some("model"),
                ];
                Err(NoSubject::Unset(missing(
                    &names.into_iter().flatten().collect::<Vec<_>>(),
                )))
            }
        };
        let (system, history) =
            crate::conversation::split(written.system, written.messages.unwrap_or_default());
        Self {
            subject,
            system,
            history,
            prompt,
            turns: Vec::new(),
            vars,
            media: BTreeMap::new(),
            prompt_content: Vec::new(),
            max_tokens: call.max_tokens.unwrap_or(defaults::SUBJECT_MAX_TOKENS),
            temperature: call.temperature,
            seed: call.seed,
            tools: written.tools.unwrap_or_default(),
            budget: call.budget,
        }
    }

    /// The same template, failing its samples when the provider it calls is no endpoint's: said once,
    /// with `at` (the test and where it is), the closest name and the ways out. Not for a `run_fn`,
    /// whose provider is only a name.
    pub fn calling_a_known_provider(mut self, config: &Config, at: &str) -> Self {
        if let Ok(subject) = &self.subject
            && let Err(problem) = config.endpoint(&subject.provider)
        {
            self.subject = Err(NoSubject::UnknownProvider {
                at: at.to_string(),
                problem,
            });
        }
        self
    }

    /// The warning for a seed the provider cannot take (Anthropic's Messages API has none), worded
    /// without the test's name so that it is printed once however many tests set one.
    pub fn seed_warning(&self, config: &Config) -> Option<String> {
        let provider = self.provider()?;
        self.seed?;
        let endpoint = config.endpoint(provider).ok()?;
        (endpoint.wire == WireFormat::Anthropic).then(|| {
            format!(
                "`seed` is not supported by provider `{provider}` (the Anthropic Messages API takes no seed): its \
                 samples are sent without one"
            )
        })
    }

    /// The provider the samples call, when it is known.
    pub fn provider(&self) -> Option<&str> {
        self.subject.as_ref().ok().map(|s| s.provider.as_str())
    }
}

/// How many samples a case takes and how they run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// How many samples, and what they must show.
    pub plan: SamplePlan,
    /// Run the first sample alone (to prime a provider cache), then the others.
    pub prime_first: bool,
    /// Mark judge calls for provider caching.
    pub cache_judge: bool,
    /// Without a recording, ignore the trial rather than call (`live_only = true`).
    pub live_only: bool,
    /// A suite's or a case's `judge_samples`, over `[judge]`'s.
    pub judge_samples: Option<u32>,
}

/// How a sample's subject answer is obtained.
#[derive(Clone)]
pub enum Executor {
    /// One call through the engine (replayed, or made and recorded).
    Call,
    /// An agent loop: every turn through the engine, the tools run here.
    Agent(Toolbox),
    /// A custom executor (`run_fn`) instead of the provider call; its answer counts as the subject's.
    Custom(RunFn),
    /// No subject call: sample `i` judges the `i`-th given answer (a calibration set's items).
    Given(Arc<[Given]>),
    /// An application test: no subject or prompt; the body is the sample, its calls through the
    /// recording endpoint.
    App {
        /// The test's body.
        body: AppBody,
        /// Whether its client finds the endpoint in the base-URL variables (`app_env`).
        env: bool,
    },
}

/// An answer written down rather than asked for: a calibration item's response and its prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Given {
    /// The prompt it answers (context for the judge; may be empty).
    pub prompt: String,
    /// The response to judge.
    pub response: String,
}

/// A prompt test, resolved: what to send, how often, how to call and how to judge.
#[derive(Clone)]
pub struct Case {
    /// The trial name (`module::test`, or `suite::case`).
    pub name: String,
    /// The cassette it records into (the test, or the suite).
    pub cassette: String,
    /// The name filter that re-runs (and so records) it.
    pub filter: String,
    /// The request.
    pub request: RequestTemplate,
    /// The sampling plan.
    pub sampling: Sampling,
    /// How the subject is called.
    pub executor: Executor,
    /// How a run is judged.
    pub evaluator: Evaluator,
    /// The calls besides the subject's that its samples are known, before they run, to make (a suite's
    /// `judge` and `similar` assertions; a test body's are not known): the nextest pre-check looks at
    /// their keys too.
    pub other_calls: Vec<CallRole>,
    /// Whether the tests its `filter` re-runs may call the judge.
    pub judge: crate::role::JudgeUse,
    /// Warnings to print once, after the trials.
    pub warnings: Vec<String>,
    /// The suite case, if it is one.
    pub info: Option<CaseInfo>,
    /// Where it sits in a model or prompt matrix, if it does.
    pub cell: Option<Cell>,
}

/// One sample, from how it ended to what the reports show of it (`TrialRecord::samples`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// Which sample, 1-based.
    pub run: u32,
    /// How it ended, and why when it did not pass (`status`, `message`).
    #[serde(flatten)]
    pub outcome: SampleOutcome,
    /// The model's output; none when the sample ended before it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Each suite assertion and how it went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<AssertionRecord>,
    /// Each judge answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<JudgeAnswer>,
    /// Calibration items' verdicts: the trial hands them to the result files, not the reports.
    #[serde(skip)]
    pub observations: Vec<Observation>,
    /// Tool calls the model made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The conversation of an agent loop (empty for a single call: prompt and output say it all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<Message>,
    /// The sample's model calls in causal order (its trajectory), when it made more than one or any
    /// tool was requested or sent back: a single plain call is said by the prompt and output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<ModelCall>,
    /// Wall time of the subject call(s), the recorded latency when replayed; written in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "secs")]
    pub latency: Option<Duration>,
    /// Whether the answer was replayed from a cassette.
    pub replayed: bool,
}

impl SampleRecord {
    /// Sample `run`, ended before the model answered.
    pub fn unanswered(run: u32, outcome: SampleOutcome) -> Self {
        Self {
            run,
            outcome,
            output: None,
            assertions: Vec::new(),
            judge: Vec::new(),
            observations: Vec::new(),
            tool_calls: Vec::new(),
            transcript: Vec::new(),
            steps: Vec::new(),
            latency: None,
            replayed: false,
        }
    }

    /// Sample `run`, ended without a verdict on its output (provider, judge, cassette, configuration).
    pub fn errored(run: u32, message: impl Into<String>) -> Self {
        Self::unanswered(run, SampleOutcome::errored(message))
    }

    /// How it ended.
    pub fn status(&self) -> SampleStatus {
        self.outcome.status()
    }
}

/// A latency as the reports write it: seconds, as a float.
mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|secs| Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// One trial of a case: the case itself, or one of its numbered runs.
pub struct Plan {
    /// The trial name.
    pub trial: String,
    /// Run only this sample, strictly (the `::run_N` trials).
    pub only_run: Option<u32>,
    /// The case.
    pub case: Arc<Case>,
}

impl Case {
    /// The subject's first request of sample `run`, as [`Case::sample`] sends it.
    pub fn subject_request(&self, model: &str, run: u32) -> CompletionRequest {
        let t = &self.request;
        CompletionRequest {
            model: model.to_string(),
            system: t.system.clone(),
            messages: t
                .history
                .iter()
                .cloned()
                .chain([self.prompt_message()])
                .collect(),
            max_tokens: t.max_tokens,
            temperature: t.temperature,
            seed: t.seed.map(|seed| run_seed(seed, run)),
            tools: t.tools.clone(),
            response_schema: None,
            cache_system: false,
        }
    }

    /// The prompt's user message: its parts when it places media, else its text.
    fn prompt_message(&self) -> Message {
        let t = &self.request;
        match t.prompt_content.is_empty() {
            true => Message::user(t.prompt.clone()),
            false => Message {
                role: crate::completion::Role::User,
                content: t.prompt_content.clone(),
            },
        }
    }

    /// Whether its samples need a subject (every case but an application test's).
    pub fn needs_subject(&self) -> bool {
        !matches!(self.executor, Executor::App { .. })
    }

    /// Whether a Rust body judges its samples: the calls it makes are not known before it runs.
    pub fn has_body(&self) -> bool {
        self.info.is_none() && !matches!(self.executor, Executor::Given(_))
    }

    /// One sample: the subject call (or loop, or custom executor), then the evaluator on its run; how
    /// it ends is read from its calls' record first (`outcome::classify`).
    pub async fn sample(&self, scope: Arc<RunScope>) -> SampleRecord {
        let mut sample = self.evaluated(scope.clone()).await;
        sample.outcome = crate::outcome::classify(&scope.state().ended(), sample.outcome);
        // Every kind of sample (an ended one too: its steps say how far it got) from its one trajectory.
        let trajectory = scope.state().trajectory();
        if crate::trajectory::shows_steps(&trajectory) {
            sample.steps = trajectory.calls().to_vec();
        }
        if sample.output.is_some() {
            let judge = scope.engine().config.judge.as_ref();
            let verdict = crate::outcome::verdict_of(
                &sample.outcome,
                &sample.assertions,
                &sample.judge,
                judge.map(crate::checks::JudgeSettings::of),
            );
            scope.engine().note_verdict(&scope, verdict).await;
        }
        sample
    }

    /// [`Case::sample`], before its calls' record is read.
    async fn evaluated(&self, scope: Arc<RunScope>) -> SampleRecord {
        let t = &self.request;
        let run_index = scope.identity().run_index;
        if let Executor::App { body, env } = &self.executor {
            return custom::app(body, *env, &scope).await;
        }
        let Subject { provider, model } = match &t.subject {
            Ok(subject) => subject.clone(),
            Err(no_subject) => return SampleRecord::errored(run_index, no_subject.to_string()),
        };
        let request = self.subject_request(&model, run_index);
        let mut prompt = t.prompt.clone();
        let continues = match &self.executor {
            Executor::Call => Continue::Model {
                request: Arc::new(request.clone()),
                agent: None,
            },
            Executor::Agent(toolbox) => Continue::Model {
                request: Arc::new(request.clone()),
                agent: Some(toolbox.clone()),
            },
            Executor::Custom(_) => Continue::Not("run_fn"),
            Executor::Given(_) => Continue::Not("a given answer"),
            Executor::App { .. } => Continue::Not("an application test"),
        };
        let answered = match &self.executor {
            Executor::Given(given) => {
                let Some(g) = given.get(scope.identity().run_index.saturating_sub(1) as usize)
                else {
                    return SampleRecord::errored(
                        run_index,
                        format!(
                            "no given answer for sample {} of {}",
                            scope.identity().run_index,
                            given.len()
                        ),
                    );
                };
                prompt = g.prompt.clone();
                let completed = Completed {
                    result: CompletionResult::new(&g.response, 0, 0),
                    latency: std::time::Duration::ZERO,
                    replayed: false,
                };
                let transcript = vec![
                    Message::user(g.prompt.clone()),
                    Message::assistant(g.response.clone()),
                ];
                Ok((completed, transcript))
            }
            Executor::Agent(toolbox) => agent::run_in_scope(&scope, &provider, toolbox, request)
                .await
                .map(agent::AgentOutcome::into_completed)
                .map_err(|e| loop_failure(e, self.info.is_some())),
            // Taken above, before the subject.
            Executor::App { body, env } => return custom::app(body, *env, &scope).await,
            Executor::Custom(run_fn) => {
                custom::run(*run_fn, &scope, t, (&provider, &model), request).await
            }
            Executor::Call => {
                let messages = request.messages.clone();
                let called = scope
                    .engine()
                    .complete(&scope, CallRole::Subject, &provider, request)
                    .await;
                with_transcript(called, messages)
            }
        };
        let (completed, transcript) = match answered {
            Ok(answer) => answer,
            Err(outcome) => return SampleRecord::unanswered(run_index, outcome),
        };
        let asked = RunRequest {
            prompt,
            vars: t.vars.clone(),
            media: t.media.clone(),
            provider,
            model,
            continues,
            previous: None,
        };
        let mut run = PromptRun::from_result(scope.clone(), asked, completed, transcript);
        // Scripted turns: each the next user turn of the conversation so far, through the same path as
        // a test body's follow-up; the assertions see the last reply (and the others through it).
        for (i, turn) in t.turns.iter().enumerate() {
            run = match run.follow_up(turn).await {
                Ok(next) => next,
                Err(e) => {
                    let at = format!("turn {} of {}", i + 2, t.turns.len() + 1);
                    return SampleRecord::unanswered(
                        run_index,
                        SampleOutcome::failed(format!("{at}: {e}")),
                    );
                }
            };
        }
        let output = run.output.clone();
        let turns = run.turns();
        // A single call's transcript is the prompt and the output: kept only for agent loops and
        // conversations (scripted turns, follow-ups; noted below).
        let agent = matches!(self.executor, Executor::Agent(_));
        let tool_calls = turns.iter().flat_map(|r| r.tool_calls.clone()).collect();
        let mut transcript = if agent {
            run.transcript.clone()
        } else {
            Vec::new()
        };
        let latency = Some(turns.iter().map(|r| r.latency).sum());
        let replayed = turns.iter().all(|r| r.replayed);
        let outcome = (self.evaluator)(run).await;
        let (checks, conversation) = scope.state().take_findings();
        if conversation.len() > transcript.len() {
            transcript = conversation;
        }
        SampleRecord {
            run: run_index,
            outcome,
            output: Some(output),
            assertions: checks.assertions,
            judge: checks.judge,
            observations: checks.observations,
            tool_calls,
            transcript,
            steps: Vec::new(),
            latency,
            replayed,
        }
    }
}

/// How an agent loop that did not finish ends the sample: running out of turns is the model's failure
/// (said in a suite's key, `max_tool_rounds`, for a suite case); a failed call or MCP server is an error.
fn loop_failure(e: LoopError<CallError>, suite: bool) -> SampleOutcome {
    match e {
        LoopError::Call(_, e) if let Some(reason) = e.as_unavailable() => {
            SampleOutcome::unavailable(reason)
        }
        LoopError::Call(turn, e) => {
            SampleOutcome::errored(format!("model call failed (agent turn {turn}): {e}"))
        }
        LoopError::Agent(AgentError::MaxTurns {
            max_turns,
            last_calls,
        }) if suite => SampleOutcome::failed(format!(
            "the model still called tools after max_tool_rounds = {} round(s) of tool calls; its last calls \
             (not run): {}",
            max_turns - 1,
            agent::list(&last_calls)
        )),
        LoopError::Agent(e @ AgentError::MaxTurns { .. }) => SampleOutcome::failed(e.to_string()),
        LoopError::Agent(e) => SampleOutcome::errored(e.to_string()),
    }
}

/// A single call's answer with the conversation it ends (`messages` and the answer), or how the
/// sample ends without one.
fn with_transcript(
    called: Result<Completed, CallError>,
    messages: Vec<Message>,
) -> Result<(Completed, Vec<Message>), SampleOutcome> {
    match called {
        Ok(completed) => {
            let mut transcript = messages;
            transcript.push(agent::assistant_message(&completed.result));
            Ok((completed, transcript))
        }
        Err(e) => Err(match e.as_unavailable() {
            Some(reason) => SampleOutcome::unavailable(reason),
            None => SampleOutcome::errored(format!("model call failed: {e}")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(provider: Option<&str>, model: Option<&str>) -> Written {
        Written {
            call: Defaults {
                provider: provider.map(str::to_string),
                model: model.map(str::to_string),
                ..Defaults::default()
            },
            ..Written::default()
        }
    }

    fn resolve(config: &Config, w: Written) -> RequestTemplate {
        RequestTemplate::resolve(config, w, "p".into(), BTreeMap::new(), |m| m.join(" and "))
            .calling_a_known_provider(config, "test `t`")
    }

    #[test]
    fn defaults_fill_what_the_test_leaves_out() {
        let mut config = Config::defaults(std::path::Path::new("."));
        let t = resolve(&config, written(None, None));
        assert_eq!(
            t.subject,
            Err(NoSubject::Unset("provider and model".to_string()))
        );
        assert_eq!(
            (t.max_tokens, t.temperature),
            (defaults::SUBJECT_MAX_TOKENS, None)
        );
        assert_eq!(
            resolve(&config, written(Some("openai"), None)).subject,
            Err(NoSubject::Unset("model".into()))
        );
        config.defaults.model = Some("m".into());
        config.defaults.max_tokens = Some(99);
        config.defaults.temperature = Some(0.5);
        let t = resolve(&config, written(Some("openai"), None));
        assert_eq!(t.subject, Ok("openai/m".parse().unwrap()));
        assert_eq!((t.max_tokens, t.temperature), (99, Some(0.5)));
        let mut mine = written(Some("anthropic"), Some("n"));
        mine.call.max_tokens = Some(7);
        mine.call.temperature = Some(0.0);
        let t = resolve(&config, mine);
        assert_eq!(t.subject, Ok("anthropic/n".parse().unwrap()));
        assert_eq!((t.max_tokens, t.temperature), (7, Some(0.0)));
        config.subject = Some("google/b".parse().unwrap());
        let t = resolve(&config, written(Some("anthropic"), Some("n")));
        assert_eq!(t.subject, Ok("google/b".parse().unwrap()));
    }

    /// A provider no endpoint has fails the case once, naming the test, the closest name and the ways
    /// out.
    #[test]
    fn an_unknown_provider_names_the_test_and_the_closest_provider() {
        let config = Config::defaults(std::path::Path::new("."));
        let t = resolve(&config, written(Some("antropic"), Some("m")));
        let no_subject = t.subject.unwrap_err();
        let NoSubject::UnknownProvider { at, problem } = &no_subject else {
            panic!("{no_subject:?}")
        };
        assert_eq!(
            (at.as_str(), problem.closest.as_deref()),
            ("test `t`", Some("anthropic"))
        );
        assert_eq!(
            no_subject.to_string(),
            "test `t`: unknown provider \"antropic\" (did you mean \"anthropic\"?): use one of \
             anthropic, google, openai or add [providers.antropic] with a base_url to prompt-tester.toml"
        );
    }

    #[test]
    fn columns_cross_subjects_and_prompt_variants() {
        let subjects: Vec<Subject> = ["fake/a", "fake/b"].map(|s| s.parse().unwrap()).into();
        let prompts = vec!["v1".to_string(), "v2".to_string()];
        let labels = |c: Vec<Column>| c.iter().map(Column::label).collect::<Vec<_>>();
        assert_eq!(
            labels(Column::all(&subjects, &prompts)),
            ["fake/a|v1", "fake/a|v2", "fake/b|v1", "fake/b|v2"]
        );
        assert_eq!(labels(Column::all(&subjects, &[])), ["fake/a", "fake/b"]);
        assert_eq!(labels(Column::all(&[], &prompts)), ["v1", "v2"]);
        let none = Column::all(&[], &[]);
        assert_eq!(none, [Column::default()]);
        assert_eq!(none[0].trial("t"), "t");
        assert_eq!(none[0].cell("t"), None);
        let column = &Column::all(&subjects, &prompts)[1];
        assert_eq!(column.trial("s::c"), "s::c[fake/a|v2]");
        assert_eq!(column.cell("s::c").unwrap().row, "s::c");
    }

    #[test]
    fn a_sample_s_steps_read_back_from_a_results_file_and_a_plain_one_writes_none() {
        let mut sample = SampleRecord::unanswered(1, SampleOutcome::PASSED);
        let plain = serde_json::to_value(&sample).unwrap();
        assert!(plain.get("steps").is_none(), "{plain}");
        sample.steps = serde_json::from_value(serde_json::json!([{
            "provider": "openai", "model": "m", "answer": "",
            "requested": [{"id": "c1", "name": "lookup_order", "arguments": {"order_id": "42"}}],
            "sent_back": [], "input_tokens": 3, "output_tokens": 1, "latency_ms": 9, "replayed": false
        }]))
        .unwrap();
        // The results files of a nextest run are read back into records: the steps come back whole.
        let text = serde_json::to_string(&sample).unwrap();
        let back: SampleRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample);
        assert_eq!(back.steps[0].requested[0].name, "lookup_order");
    }
}
