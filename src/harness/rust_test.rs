//! Plans for `#[prompt_test]` functions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::registry::{RustTest, TestSpec};
use futures::FutureExt;

use super::outcome::classify;
use super::registry::BodyFuture;
use super::trial::{Plan, Sample, SampleFn, panic_message};
use crate::agent;
use crate::completion::{CompletionRequest, Message};
use crate::config::Config;
use crate::engine::{CallError, CallRole, Completed, RunScope, engine};
use crate::render::render;
use crate::run::{PromptRun, RunRequest};

/// The plan for `test`, or for its single run `only_run`.
pub fn plan(test: &'static RustTest, name: &str, only_run: Option<u32>, config: &Config) -> Plan {
    let spec = Arc::new((test.spec)());
    let rendered = render(spec.target_prompt.text(), &spec.target_prompt_vars);
    let warnings = rendered
        .missing
        .iter()
        .map(|p| {
            format!(
                "test `{}`: placeholder {{{p}}} has no value in target_prompt_vars; it is sent as written \
                 (add `target_prompt_vars({p} = ...)`)",
                // The test, not the trial: its numbered runs share the warning.
                test.trial_name()
            )
        })
        .collect();
    let subject = resolve_subject(&spec, name, config);
    let max_tokens = spec
        .max_tokens
        .or(config.defaults.max_tokens)
        .unwrap_or(crate::defaults::SUBJECT_MAX_TOKENS);
    let temperature = spec.temperature.or(config.defaults.temperature);
    let prompt = rendered.text;
    let body = test.body;
    let spec_for_sample = spec.clone();
    let sample: SampleFn = Arc::new(move |scope: Arc<RunScope>| {
        let spec = spec_for_sample.clone();
        let subject = subject.clone();
        let prompt = prompt.clone();
        Box::pin(async move {
            let (provider, model) = match subject {
                Ok(pm) => pm,
                Err(message) => return Sample::errored(message),
            };
            let vars: BTreeMap<String, String> = spec.target_prompt_vars.iter().cloned().collect();
            let request = CompletionRequest {
                model: model.clone(),
                system: spec.system.clone(),
                messages: vec![Message::user(prompt.clone())],
                max_tokens,
                temperature,
                tools: spec.tools.clone(),
                response_schema: None,
                cache_system: false,
            };
            // An agent test: the loop makes every model call; the run sees the sums and the whole transcript.
            if let Some(toolbox) = &spec.toolbox {
                let (completed, transcript) =
                    match agent::run_in_scope(&scope, &provider, toolbox, request).await {
                        Ok(outcome) => outcome.into_completed(),
                        Err(outcome) => {
                            return Sample {
                                outcome,
                                output: None,
                            };
                        }
                    };
                let request = RunRequest {
                    prompt,
                    vars,
                    provider,
                    model,
                };
                let run = PromptRun::from_result(scope, request, completed, transcript);
                let output = run.output.clone();
                return Sample {
                    outcome: run_body(body(run)).await,
                    output: Some(output),
                };
            }
            let transcript_start = request.messages.clone();
            let completed = match spec.run_fn {
                Some(run_fn) => {
                    let started = Instant::now();
                    match run_fn(prompt.clone(), model.clone(), max_tokens).await {
                        Ok(result) => Ok(engine().account_external(
                            &scope,
                            &provider,
                            &model,
                            result,
                            started.elapsed(),
                        )),
                        Err(e) => Err(CallError::Failed(format!("run_fn failed: {e:#}"))),
                    }
                }
                None => {
                    engine()
                        .complete(&scope, CallRole::Subject, &provider, request)
                        .await
                }
            };
            let run = match prompt_run(
                completed,
                scope,
                prompt,
                vars,
                provider,
                model,
                transcript_start,
            ) {
                Ok(run) => run,
                Err(failed) => return failed,
            };
            let output = run.output.clone();
            Sample {
                outcome: run_body(body(run)).await,
                output: Some(output),
            }
        })
    });
    Plan {
        name: name.to_string(),
        cassette: test.trial_name(),
        filter: test.trial_name(),
        runs: spec.runs,
        threshold: spec.pass_threshold,
        only_run,
        prime_first: spec.enable_cache,
        cache_judge: spec.enable_cache,
        live_only: spec.live_only,
        warnings,
        case: None,
        sample,
    }
}

/// Runs a test body: a panic in it fails the sample like a failed assertion (libtest's `assert!`);
/// what it returns is classified by [`classify`].
async fn run_body(body: BodyFuture) -> super::outcome::SampleOutcome {
    match std::panic::AssertUnwindSafe(body).catch_unwind().await {
        Ok(result) => classify(result),
        Err(payload) => super::outcome::SampleOutcome::Failed(panic_message(payload)),
    }
}

fn resolve_subject(
    spec: &TestSpec,
    name: &str,
    config: &Config,
) -> Result<(String, String), String> {
    subject_or_defaults(spec.subject_provider.clone(), spec.subject_model.clone(), config).map_err(|missing| {
        let missing = missing.iter().map(|m| format!("subject_{m}")).collect::<Vec<_>>().join(" and ");
        format!(
            "test `{name}` names no {missing}: add `{missing} = ...` to #[prompt_test] or set [defaults] in \
             prompt-tester.toml"
        )
    })
}

/// The subject's provider and model, each falling back to `[defaults]`; `Err` names the missing ones
/// (`"provider"`, `"model"`). Shared by `#[prompt_test]` functions and suite cases.
pub(crate) fn subject_or_defaults(
    provider: Option<String>,
    model: Option<String>,
    config: &Config,
) -> Result<(String, String), Vec<&'static str>> {
    let provider = provider.or_else(|| config.defaults.provider.clone());
    let model = model.or_else(|| config.defaults.model.clone());
    match (provider, model) {
        (Some(p), Some(m)) => Ok((p, m)),
        (p, m) => Err([
            p.is_none().then_some("provider"),
            m.is_none().then_some("model"),
        ]
        .into_iter()
        .flatten()
        .collect()),
    }
}

/// Turns the subject call of one sample into the [`PromptRun`] the assertions see, or into the errored
/// sample (an unavailable call also marks the scope, which ignores the trial). `messages` is the
/// request's conversation; the answer is appended to make the transcript. Shared with suite cases.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prompt_run(
    completed: Result<Completed, CallError>,
    scope: Arc<RunScope>,
    prompt: String,
    vars: BTreeMap<String, String>,
    provider: String,
    model: String,
    messages: Vec<Message>,
) -> Result<PromptRun, Sample> {
    let completed = match completed {
        Ok(c) => c,
        Err(CallError::Unavailable(reason)) => return Err(Sample::errored(reason.message)),
        Err(CallError::Failed(message)) => {
            return Err(Sample::errored(format!("model call failed: {message}")));
        }
    };
    let mut transcript = messages;
    transcript.push(agent::assistant_message(&completed.result));
    let request = RunRequest {
        prompt,
        vars,
        provider,
        model,
    };
    Ok(PromptRun::from_result(
        scope, request, completed, transcript,
    ))
}
