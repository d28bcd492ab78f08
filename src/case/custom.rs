//! A custom executor's sample (`run_fn`): the user's function called with the sample's context; its
//! answer counted as the subject's, unless its calls went through the recording endpoint, which counted
//! each of them already.

use std::sync::Arc;
use std::time::Instant;

use super::{AppBody, RequestTemplate, RunFn, SampleRecord, with_transcript};
use crate::completion::{CompletionRequest, CompletionResult, Message};
use crate::endpoint::SampleContext;
use crate::engine::{CallError, CallErrorKind, CallRole, Completed, RunScope};
use crate::outcome::SampleOutcome;
use crate::trajectory::NotedCall;

/// Runs `run_fn` on `scope`'s sample of `template`, which would send `request` to `subject`
/// (provider, model).
pub(super) async fn run(
    run_fn: RunFn,
    scope: &Arc<RunScope>,
    template: &RequestTemplate,
    (provider, model): (&str, &str),
    request: CompletionRequest,
) -> Result<(Completed, Vec<Message>), SampleOutcome> {
    let started = Instant::now();
    let messages = request.messages.clone();
    let sent = request.clone();
    let sample = SampleContext::new(
        request,
        template.prompt.clone(),
        (template.vars.clone(), template.media.clone()),
        scope.clone(),
    );
    let returned = run_fn(sample).await;
    // A stream its client stopped reading at its last event may still be being recorded and counted.
    scope.state().settled().await;
    let called = match (returned, scope.state().refusal()) {
        // A call through the recording endpoint was refused (and noted): the sample ends by it; the
        // error the client made of the refusal says no more.
        (_, Some(refused)) => Err(refused),
        (Ok(result), None) if scope.state().app_calls() > 0 => Ok(seen(scope, result, started)),
        (Ok(result), None) => {
            let latency = started.elapsed();
            scope.state().note_model_call(NotedCall::of_request(
                provider, &sent, &result, latency, false,
            ));
            Ok(scope
                .engine()
                .account_external(scope, provider, model, result, latency))
        }
        (Err(e), None) => {
            let mut message = format!("run_fn failed: {e:#}");
            // Decided by what the endpoint received, not by reading the client's error.
            if scope.state().went_around() {
                message.push_str(&format!(
                    "\n{}",
                    went_around(&scope.identity().test, provider)
                ));
            }
            let failed = CallError::new(CallErrorKind::RunFn, message);
            scope.state().note_call(CallRole::Subject, failed.ending());
            Err(failed)
        }
    };
    match called {
        // The application's own conversation, as the endpoint saw it, not the request it was handed.
        Ok(completed) if scope.state().app_calls() > 0 => {
            let transcript = scope.state().trajectory().transcript(scope.state().task());
            Ok((completed, transcript))
        }
        called => with_transcript(called, messages),
    }
}

/// An application test's sample (`AppRun`): its body run once, then its requests through the endpoint
/// waited for. A call refused ends it as it ends a `run_fn`'s sample; one that made no call through
/// the endpoint fails, naming `run.base_url(..)`. Its output is the last text it asked the judge
/// about, else the last answer the endpoint relayed.
/// With `env` (`app_env`), the base-URL variables stand for this sample while it runs.
pub(super) async fn app(body: &AppBody, env: bool, scope: &Arc<RunScope>) -> SampleRecord {
    let started = Instant::now();
    let run_index = scope.identity().run_index;
    let _holding = match env {
        true => match hold(scope).await {
            Ok(holding) => holding,
            Err(message) => {
                return SampleRecord::unanswered(run_index, SampleOutcome::errored(message));
            }
        },
        false => None,
    };
    let mut outcome = body(crate::run::AppRun::new(scope.clone())).await;
    // A stream its client stopped reading at its last event may still be being recorded and counted.
    scope.state().settled().await;
    // The variables stand for the next sample only once this one's calls have ended.
    #[cfg(feature = "endpoint")]
    drop(_holding);
    let state = scope.state();
    if let Some(refused) = state.refusal() {
        outcome = match refused.as_unavailable() {
            Some(reason) => SampleOutcome::unavailable(reason),
            None => SampleOutcome::errored(format!("model call failed: {refused}")),
        };
    } else if state.app_calls() == 0 && outcome.status() != crate::checks::SampleStatus::Errored {
        let provider = state.provider().unwrap_or_else(|| "openai".to_string());
        let mut message = match env {
            true => no_app_env_call(&scope.identity().test),
            false => no_app_call(&scope.identity().test, &provider),
        };
        if let Some(said) = outcome.message() {
            message.push_str(&format!("\n(the test body said: {said})"));
        }
        outcome = SampleOutcome::failed(message);
    }
    let (checks, _) = state.take_findings();
    let usage = state.usage().subject;
    SampleRecord {
        run: run_index,
        outcome,
        output: state.app_output(),
        assertions: checks.assertions,
        judge: checks.judge,
        observations: checks.observations,
        tool_calls: Vec::new(),
        transcript: Vec::new(),
        steps: Vec::new(),
        latency: Some(started.elapsed()),
        replayed: usage.calls > 0 && usage.replayed == usage.calls,
    }
}

/// What is said of `test`, an application test whose sample made no model call through the recording
/// endpoint (`provider`: the one it asked a URL for, else `openai`).
pub(crate) fn no_app_call(test: &str, provider: &str) -> String {
    format!(
        "test {test}: the test made no model call through the recording endpoint: build the \
         application's client with `run.base_url(\"{provider}\")` (async-openai: \
         `OpenAIConfig::new().with_api_base(run.base_url(\"{provider}\")?)`), so that its calls are \
         recorded, replayed and counted"
    )
}

/// What is said of `test`, an `app_env` test whose sample made no model call through the endpoint.
fn no_app_env_call(test: &str) -> String {
    #[cfg(feature = "endpoint")]
    let names = crate::endpoint::app_env::names();
    #[cfg(not(feature = "endpoint"))]
    let names = "the base-URL variables";
    format!(
        "test {test}: the test made no model call through the recording endpoint: with `app_env`, \
         build the application's client from {names} (async-openai: `OpenAIConfig::new()` reads \
         `OPENAI_BASE_URL`), so that its calls are recorded, replayed and counted"
    )
}

/// The base-URL variables held for `scope`'s sample (`app_env`).
#[cfg(feature = "endpoint")]
async fn hold(scope: &Arc<RunScope>) -> Result<Option<crate::endpoint::app_env::Holding>, String> {
    crate::endpoint::app_env::hold(scope).await.map(Some)
}

#[cfg(not(feature = "endpoint"))]
async fn hold(_: &Arc<RunScope>) -> Result<Option<()>, String> {
    Ok(None)
}

/// The answer `run_fn` returned, with the tokens and cost of the calls the endpoint saw instead of its
/// own counts (already in the sample's usage: not added twice), and the tools its calls requested
/// when it returned none; replayed when every call was.
fn seen(scope: &RunScope, mut result: CompletionResult, started: Instant) -> Completed {
    let subject = scope.state().usage().subject;
    if result.tool_calls.is_empty() {
        result.tool_calls = scope.state().trajectory().tool_calls();
    }
    result.input_tokens = subject.tokens.input;
    result.output_tokens = subject.tokens.output;
    result.cached_input_tokens = subject.tokens.cached_input;
    result.cache_creation_tokens = subject.tokens.cache_creation;
    result.thoughts_tokens = subject.tokens.thoughts;
    result.cost_usd = subject.cost.known();
    Completed {
        result,
        latency: started.elapsed(),
        replayed: subject.replayed == subject.calls,
    }
}

/// What is said of `test`, whose `run_fn` took the sample and sent the recording endpoint no request:
/// its client may have gone around the endpoint, and how to point it there (`provider`, the test's).
pub(crate) fn went_around(test: &str, provider: &str) -> String {
    format!(
        "test {test}: its run_fn takes the sample (SampleContext) but the recording endpoint received \
         no request of it: its client may have gone around the endpoint (to the provider's own URL, \
         such as OPENAI_BASE_URL's), so nothing of its calls is recorded, replayed or counted; give \
         the client the sample's URL, `sample.base_url(\"{provider}\")` (async-openai: \
         `OpenAIConfig::new().with_api_base(sample.base_url(\"{provider}\")?)`)"
    )
}
