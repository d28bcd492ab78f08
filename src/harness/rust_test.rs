//! `#[prompt_test]` functions as [`Case`]s.

use std::sync::Arc;

use futures::FutureExt;
use prompt_tester_keys::Key;
use prompt_tester_keys::sampling::EvenJudgeSamples;

use super::registry::{Body, BodyFuture, RustTest, TestSpec};
use super::trial::{in_trial, panic_message};
use crate::case::{Case, Column, Evaluator, Executor, NoSubject, RequestTemplate, Sampling};
use crate::completion::{ContentBlock, MediaError, MediaPart};
use crate::config::Config;
use crate::conversation::render_turns;
use crate::outcome::{SampleOutcome, of_body};
use crate::plan::SamplePlan;
use crate::render::{Piece, render_pieces};

use super::registry::PromptVar;

/// Values by name, in the order given.
type Named<T> = Vec<(String, T)>;

/// `vars` split into text values and media values, each in the order given.
fn split_vars(vars: Named<PromptVar>) -> (Named<String>, Named<crate::completion::Media>) {
    let (mut texts, mut media) = (Vec::new(), Vec::new());
    for (name, value) in vars {
        match value {
            PromptVar::Text(text) => texts.push((name, text)),
            PromptVar::Media(m) => media.push((name, m)),
        }
    }
    (texts, media)
}

/// The prompt with its media placed: its text (each part shown as `[kind name]`), its content
/// parts (none when it places no media) and the media values by name.
#[derive(Default)]
struct Placed {
    prompt: String,
    content: Vec<ContentBlock>,
    media: std::collections::BTreeMap<String, MediaPart>,
}

/// `pieces` with each media value read and checked (the first that cannot be is the error).
fn place_media(
    pieces: &[Piece],
    media: Vec<(String, crate::completion::Media)>,
) -> Result<Placed, MediaError> {
    let mut loaded = std::collections::BTreeMap::new();
    for (name, m) in media {
        loaded.insert(name, m.load()?);
    }
    let (prompt, content) = crate::render::place(pieces, &loaded);
    Ok(Placed {
        prompt,
        content,
        media: loaded,
    })
}

/// The attribute's values of `test`, evaluated: its expressions are the user's code, run when the
/// trials are listed and again when the test runs. One that panics fails this test alone: `Err` is
/// the trial's failure, naming the test, where it is and the panic.
pub fn spec(test: &RustTest) -> Result<TestSpec, String> {
    // Marked as a trial's: the hook keeps the panic's location and prints nothing.
    in_trial(|| std::panic::catch_unwind(test.spec)).map_err(|payload| {
        format!(
            "test `{}` ({}:{}): a value of its #[prompt_test] attribute {}\n\
             (the attribute's expressions run when the trials are listed and when the test runs; \
             fix the one that panics)",
            test.trial_name(),
            test.file,
            test.line,
            panic_message(payload)
        )
    })
}

/// What is wrong with `judge_samples`, when an expression gave it (a literal is checked at compile
/// time with the same words): it must be odd, from 1 to 99.
pub fn judge_samples_problem(spec: &TestSpec) -> Option<String> {
    let k = spec.judge_samples?;
    let key = Key::JudgeSamples;
    if !key
        .row()
        .range
        .is_some_and(|r| r.contains_whole(i128::from(k)))
    {
        return Some(format!("`{key}` {}", key.is_out_of_range(f64::from(k))));
    }
    EvenJudgeSamples::of(u64::from(k)).map(|even| even.to_string())
}

/// The case of `test` in `column` (one of its `subject_models`, or none), as its trial `trial` (the
/// test, or one of its numbered runs) reports it, with its attribute's values `spec` and its sampling
/// plan (checked when the trials were listed).
pub fn case(
    test: &'static RustTest,
    mut spec: TestSpec,
    trial: &str,
    config: &Config,
    column: &Column,
    plan: SamplePlan,
) -> Case {
    let row = test.trial_name();
    let name = column.trial(&row);
    if let Some(s) = &column.subject {
        spec.request.call.provider = Some(s.provider.clone());
        spec.request.call.model = Some(s.model.clone());
    }
    let at = format!("test `{row}` ({}:{})", test.file, test.line);
    let (texts, media) = split_vars(std::mem::take(&mut spec.target_prompt_vars));
    let media_names: Vec<&str> = media.iter().map(|(name, _)| name.as_str()).collect();
    let (pieces, prompt_missing) = render_pieces(spec.target_prompt.text(), &texts, &media_names);
    let mut warnings: Vec<String> = Vec::new();
    // The placeholders without a value, the prompt's then those only `messages` has.
    let mut missing: Vec<String> = prompt_missing.clone();
    let mut media_problem: Option<String> = None;
    let written_turns = spec.request.messages.take();
    if let Some(turns) = &written_turns {
        let (rendered, in_turns) = render_turns(turns, &texts);
        for p in in_turns {
            if !media_names.contains(&p.as_str()) && !missing.contains(&p) {
                missing.push(p);
            }
        }
        spec.request.messages = Some(rendered);
    }
    let placed = match place_media(&pieces, media) {
        Ok(placed) => placed,
        Err(e) => {
            media_problem.get_or_insert(format!("{at}: {e}"));
            Placed::default()
        }
    };
    // A user turn of `messages` takes media parts as the prompt does.
    let turn_parts = match &written_turns {
        None => Vec::new(),
        Some(turns) => match crate::conversation::media_parts(turns, &texts, &placed.media) {
            Ok(parts) => parts,
            Err((i, role, p)) => {
                media_problem.get_or_insert(format!(
                    "{at}: placeholder {{{p}}} of `messages` turn {} ({}) is media; media go in \
                     the prompt (`target_prompt`) or a user turn, so move {{{p}}} there",
                    i + 1,
                    crate::conversation::role_name(role)
                ));
                Vec::new()
            }
        },
    };
    let vars = texts.into_iter().collect();
    let mut request = RequestTemplate::resolve(
        config,
        spec.request,
        placed.prompt,
        vars,
        |missing| {
            let missing = crate::render::and_list(missing, |m| format!("subject_{m}"));
            format!(
                "test `{trial}` names no {missing}: add `{missing} = ...` to #[prompt_test] or set [defaults] in \
             prompt-tester.toml"
            )
        },
    );
    let app = test.body.is_app();
    if spec.run_fn.is_none() && !app {
        request = request.calling_a_known_provider(config, &at);
    }
    // As in a suite, a placeholder without a value is an error, before anything is sent (a literal
    // `target_prompt` is checked at compile time; a file or an expression here).
    if let Some(turns) = &written_turns {
        crate::conversation::with_parts(&mut request.history, turns, turn_parts);
    }
    request.media = placed.media;
    request.prompt_content = placed.content;
    if let Some(problem) = media_problem {
        request.subject = Err(NoSubject::Media(problem));
    }
    if !missing.is_empty() {
        let where_ = match missing.len() > prompt_missing.len() {
            true => "the prompt or `messages`",
            false => "the prompt",
        };
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        let names = crate::render::and_list(&missing, |p| format!("{{{p}}}"));
        let fix: Vec<String> = missing.iter().map(|p| format!("{p} = ...")).collect();
        let fix = fix.join(", ");
        request.subject = Err(NoSubject::MissingPlaceholder(format!(
            "{at}: placeholder {names} of {where_} has no value in target_prompt_vars; add \
             `target_prompt_vars({fix})`"
        )));
    }
    warnings.extend(request.seed_warning(config));
    let (executor, evaluator): (Executor, Evaluator) = match test.body {
        Body::App(body) | Body::AppEnv(body) => (
            Executor::App {
                body: Arc::new(move |run| Box::pin(run_body(body(run)))),
                env: matches!(test.body, Body::AppEnv(_)),
            },
            // The body is the sample (its executor): nothing is left to judge.
            Arc::new(|_| Box::pin(std::future::ready(SampleOutcome::PASSED))),
        ),
        Body::Prompt(body) => {
            let executor = match (spec.toolbox, spec.run_fn) {
                (Some(toolbox), _) => Executor::Agent(toolbox),
                (None, Some(run_fn)) => Executor::Custom(run_fn),
                (None, None) => Executor::Call,
            };
            (executor, Arc::new(move |run| Box::pin(run_body(body(run)))))
        }
    };
    Case {
        // Every column of a test records into the test's one cassette.
        cassette: row.clone(),
        filter: row.clone(),
        cell: column.cell(&row),
        name,
        request,
        sampling: Sampling {
            plan,
            prime_first: spec.judge_prompt_cache,
            cache_judge: spec.judge_prompt_cache,
            live_only: spec.live_only,
            judge_samples: spec.judge_samples,
        },
        executor,
        evaluator,
        other_calls: Vec::new(),
        judge: crate::role::JudgeUse::IfTheBodyAsks,
        warnings,
        info: None,
    }
}

/// Runs a test body: a panic in it fails the sample like a failed assertion (libtest's `assert!`);
/// what it returns is read by [`of_body`] (the calls it made are read after it).
async fn run_body(body: BodyFuture) -> SampleOutcome {
    match std::panic::AssertUnwindSafe(body).catch_unwind().await {
        Ok(result) => of_body(result),
        Err(payload) => SampleOutcome::failed(panic_message(payload)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `judge_samples` expression is checked as a literal is: odd, from 1 to 99.
    #[test]
    fn judge_samples_from_an_expression_is_odd_from_1_to_99() {
        let problem = |k: Option<u32>| {
            judge_samples_problem(&TestSpec {
                judge_samples: k,
                ..TestSpec::default()
            })
        };
        assert_eq!(problem(None), None);
        assert_eq!(problem(Some(1)), None);
        assert_eq!(problem(Some(5)), None);
        assert_eq!(
            problem(Some(4)).as_deref(),
            Some(
                "`judge_samples` is 4, an even number: the answers could split evenly; write an odd number, \
                 e.g. `judge_samples = 5`"
            )
        );
        assert_eq!(
            problem(Some(0)).as_deref(),
            Some("`judge_samples` is 0; it must be an odd whole number from 1 to 99, e.g. 3")
        );
        assert!(problem(Some(101)).is_some_and(|p| p.contains("from 1 to 99")));
    }
}
