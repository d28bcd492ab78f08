//! Plans for `#[prompt_test]` functions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::registry::{RustTest, TestSpec};
use super::trial::{Plan, Sample, SampleFn};
use crate::completion::{CompletionRequest, Message};
use crate::agent;
use crate::config::Config;
use crate::engine::{CallError, CallRole, Completed, RunScope, engine};
use crate::render::render;
use crate::run::PromptRun;

/// Default `max_tokens` when neither the test nor `[defaults]` says.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;

/// The plan for `test`, or for its single run `only_run`.
pub fn plan(test: &'static RustTest, name: &str, only_run: Option<u32>, config: &Config) -> Plan {
    let spec = Arc::new((test.spec)());
    let rendered = render(spec.target_prompt.text(), &spec.target_prompt_vars);
    let warnings = rendered
        .missing
        .iter()
        .map(|p| {
            format!(
                "test `{name}`: placeholder {{{p}}} has no value in target_prompt_vars; it is sent as written \
                 (add `target_prompt_vars({p} = ...)`)"
            )
        })
        .collect();
    let subject = resolve_subject(&spec, name, config);
    let max_tokens = spec.max_tokens.or(config.defaults.max_tokens).unwrap_or(DEFAULT_MAX_TOKENS);
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
                Err(message) => return Sample::failed(message),
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
            if let Some(toolbox) = &spec.toolbox {
                let outcome = match agent::run_in_scope(&scope, &provider, toolbox, request).await {
                    Ok(outcome) => outcome,
                    Err(message) => return Sample::failed(message),
                };
                let output = outcome.result.text.clone();
                let run = PromptRun::from_result(
                    scope, prompt, vars, provider, model, outcome.result, outcome.latency, outcome.replayed,
                    outcome.transcript,
                );
                let result = (body)(run).await;
                return Sample { result: result.map_err(|e| format!("{e:#}")), output: Some(output) };
            }
            let transcript_start = request.messages.clone();
            let completed = match spec.run_fn {
                Some(run_fn) => {
                    let started = Instant::now();
                    match run_fn(prompt.clone(), model.clone(), max_tokens).await {
                        Ok(result) => Ok(engine().account_external(&scope, &provider, &model, result, started.elapsed())),
                        Err(e) => Err(CallError::Failed(format!("run_fn failed: {e:#}"))),
                    }
                }
                None => engine().complete(&scope, CallRole::Subject, &provider, request).await,
            };
            let Completed { result, latency, replayed } = match completed {
                Ok(c) => c,
                Err(CallError::Unavailable(reason)) => return Sample::failed(reason),
                Err(CallError::Failed(message)) => return Sample::failed(format!("model call failed: {message}")),
            };
            let output = result.text.clone();
            let mut transcript = transcript_start;
            transcript.push(agent::assistant_message(&result));
            let run = PromptRun::from_result(
                scope, prompt, vars, provider, model, result, latency, replayed, transcript,
            );
            let outcome = (body)(run).await;
            Sample { result: outcome.map_err(|e| format!("{e:#}")), output: Some(output) }
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
        warnings,
        case: None,
        sample,
    }
}

fn resolve_subject(spec: &TestSpec, name: &str, config: &Config) -> Result<(String, String), String> {
    let provider = spec.subject_provider.clone().or_else(|| config.defaults.provider.clone());
    let model = spec.subject_model.clone().or_else(|| config.defaults.model.clone());
    match (provider, model) {
        (Some(p), Some(m)) => Ok((p, m)),
        (p, m) => {
            let missing = match (p, m) {
                (None, None) => "subject_provider and subject_model",
                (None, _) => "subject_provider",
                _ => "subject_model",
            };
            Err(format!(
                "test `{name}` names no {missing}: add `{missing} = ...` to #[prompt_test] or set [defaults] in \
                 prompt-tester.toml"
            ))
        }
    }
}
