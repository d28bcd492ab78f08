//! The LLM judge: yes/no verdicts about a run's output, with reasoning and a verbatim snippet.
//!
//! How a question is judged:
//! - The judge model and provider come from the configuration (`[judge]`); every call goes through
//!   the engine as a judge call, so it is recorded in and replayed from the test's cassette like the
//!   subject's calls, and its tokens and cost are accounted apart from the subject's.
//! - The judge's instructions ([`JUDGE_INSTRUCTIONS`]) are the system prompt, the same for every
//!   call, so that with `judge_prompt_cache` a provider can cache them. The user message carries the
//!   rendered prompt (as context only: content found only there does not count), the response, and the
//!   questions. Prompt and response are fenced between marker lines whose tag is derived from their
//!   hash, so text inside them cannot close the fence, and the instructions treat them as data.
//! - The reply is structured output the provider enforces (a forced tool call for Anthropic, a
//!   response schema for Gemini and OpenAI-compatible servers). A server that ignores the schema is read
//!   tolerantly (see `parse`); a reply with no verdict is retried once with a reminder, and then is a
//!   [`RunError::NoVerdict`], never a silent "no".
//! - `passed` is `answer == "yes"`: the judge answers "yes" when the requirement holds, which for
//!   avoidance questions means the forbidden content is absent.
//! - The snippet is kept only when it occurs in the output (whitespace, letter case and typographic
//!   quotes may differ; the excerpt returned is the output's own text). A quote the output does not
//!   contain is dropped and the reasoning says so, so a report never shows invented evidence.
//! - `ask_all` never fills in a verdict: questions the reply has no verdict for (or two verdicts
//!   numbered alike) are asked again once, alone, and the answers merged; a question still without a
//!   verdict is a [`RunError::MissingVerdicts`] naming it.
//! - Tokens and cost: a verdict carries the judge calls that produced it (the retry included). The
//!   verdicts of one `ask_all` each carry the full tokens and cost of its calls (not a share: one call
//!   cannot be split honestly), so sum them per `ask_all`, not per verdict; the per-test judge cost in
//!   the summary counts each call once.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod app;
pub(crate) mod parse;
mod prompt;
mod trust;

pub use crate::stats::trust::{Advisory, Measurement, Rate, Votes};
pub use prompt::{JUDGE_INSTRUCTIONS, QUESTION_TYPES};
pub use trust::JudgeFailed;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::checks::JudgeAnswer;
use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::{AdvisoryPolicy, JudgeConfig};
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole, RunScope};
use crate::run::{PromptRun, RunError};
use crate::usage::Tally;
use parse::Parsed;

/// The judge's answer to one question about a run's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JudgeVerdict {
    /// The question asked.
    pub question: String,
    /// `"yes"` or `"no"`.
    pub answer: String,
    /// Whether the requirement holds (for avoidance questions, "yes" means the forbidden content is absent).
    pub passed: bool,
    /// A verbatim excerpt of the output that supports the verdict, if any.
    pub snippet: Option<String>,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
    /// The judge model.
    pub judge_model: String,
    /// The judge provider.
    pub judge_provider: String,
    /// Input tokens of the judge call (shared by every verdict of an `ask_all`).
    pub judge_input_tokens: u64,
    /// Output tokens of the judge call.
    pub judge_output_tokens: u64,
    /// Cost of the judge call in USD; `None` when the judge model's price is unknown.
    pub judge_cost_usd: Option<f64>,
    /// The question's type as the judge classified it (one of [`QUESTION_TYPES`]), if it gave one.
    #[serde(default)]
    pub question_type: Option<String>,
    /// The judge's measurement on that type of question, from the calibration results of the judge in
    /// use (the guide's calibration chapter), or `None` when none applies.
    #[serde(default)]
    pub measurement: Option<Measurement>,
    /// Why the verdict is advisory (its judge is not measured on such questions, or measured too low for
    /// `[judge] min_accuracy`), or `None` when the measurement backs it.
    #[serde(default)]
    pub advisory: Option<Advisory>,
    /// With `[judge] judge_samples = k` (k > 1): how the k answers split; the verdict is the majority's.
    #[serde(default)]
    pub votes: Option<Votes>,
    /// What a failing advisory verdict does in [`JudgeVerdict::require`] and a suite's `judge`
    /// assertion (`[judge] advisory`). A body that reads `passed` itself decides for itself.
    #[serde(default)]
    pub on_advisory: AdvisoryPolicy,
}

impl JudgeVerdict {
    /// The answer as the sample's checks keep it, with the cassette key of the judge call behind it.
    fn answer(&self, judge_key: &str) -> JudgeAnswer {
        JudgeAnswer {
            question: self.question.clone(),
            answer: self.answer.clone(),
            passed: self.passed,
            reasoning: self.reasoning.clone(),
            snippet: self.snippet.clone(),
            question_type: self.question_type.clone(),
            measurement: self.measurement.clone(),
            advisory: self.advisory.clone(),
            votes: self.votes,
            judge_key: judge_key.to_string(),
        }
    }
}

impl PromptRun {
    /// This run's output and prompt, as the judge sees them.
    fn judged(&self) -> Judged<'_> {
        Judged {
            scope: &self.scope,
            prompt: &self.prompt,
            output: &self.output,
            steps: None,
            inputs: None,
        }
    }

    /// [`PromptRun::ask`], the judge also sent the media the prompt placed (its images, documents
    /// and audio, as the model was sent them), for a question the output alone cannot settle:
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// run.ask_with_inputs("Is the total the reply gives the receipt's total?").await?.require()?;
    /// # Ok(()) }
    /// ```
    ///
    /// Without media it asks as [`PromptRun::ask`] does. A judge provider whose format cannot take a
    /// part (audio to Anthropic) fails the question before any call, as the subject's call would.
    pub async fn ask_with_inputs(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        self.with_inputs().ask(question).await
    }

    /// [`PromptRun::ask_with_inputs`] for several questions in one judge call (a suite's `judge`
    /// assertions with `judge_inputs = true`), as [`PromptRun::ask_all`] asks them.
    pub(crate) async fn ask_all_with_inputs(
        &self,
        questions: &[&str],
    ) -> Result<Vec<JudgeVerdict>, RunError> {
        self.with_inputs().ask_all(questions).await
    }

    /// This run as the judge sees it with the prompt's media.
    fn with_inputs(&self) -> Judged<'_> {
        Judged {
            inputs: Some(&self.target_prompt_media),
            ..self.judged()
        }
    }

    /// Asks the judge one yes/no question about this sample's trajectory: it reads the rendered prompt
    /// (of the conversation's first turn) as the task, each step of [`PromptRun::trajectory`] (the model call, the tools it requested
    /// with their arguments, what went back) and the output as the final answer, and quotes a step.
    /// The same judge, options, recording and reports as [`PromptRun::ask`]:
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// run.ask_trajectory("Did the agent look the order up before answering?").await?.require()?;
    /// # Ok(()) }
    /// ```
    pub async fn ask_trajectory(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        let steps = self.trajectory().steps().join("\n");
        self.trajectory_judged(&steps).ask(question).await
    }

    /// The trajectory whose `steps` are given, as the judge sees it: the conversation's first prompt
    /// as the task (a follow-up's own is only its last turn), this run's output as the final answer.
    fn trajectory_judged<'a>(&'a self, steps: &'a str) -> Judged<'a> {
        let first = self.turns()[0];
        Judged {
            prompt: &first.prompt,
            steps: Some(steps),
            ..self.judged()
        }
    }

    /// [`PromptRun::ask_trajectory`] for several questions in one judge call (a suite's
    /// `judge_trajectory` assertions), as [`PromptRun::ask_all`] asks them.
    pub(crate) async fn ask_trajectory_all(
        &self,
        questions: &[&str],
    ) -> Result<Vec<JudgeVerdict>, RunError> {
        let steps = self.trajectory().steps().join("\n");
        self.trajectory_judged(&steps).ask_all(questions).await
    }

    /// Asks the judge one yes/no question about this run's output. [`JudgeVerdict::require`] makes the
    /// common case one line, its failure showing the verdict and how far the judge is measured:
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// run.ask("Does the response avoid mentioning prices?").await?.require()?;
    /// # Ok(()) }
    /// ```
    pub async fn ask(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        self.judged().ask(question).await
    }

    /// [`PromptRun::ask`] for a calibration item: a reply with no verdict is the judge getting the item
    /// wrong, so it is not noted as a failed call.
    pub(crate) async fn ask_item(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        self.judged().configured()?.ask(question).await
    }

    /// Asks every question in one judge call; verdicts come back in question order. Questions the
    /// reply has no verdict for are asked again once, in one more call; a question still without one
    /// is a [`RunError::MissingVerdicts`] (never a filled-in "no"). Each verdict carries the tokens
    /// and cost of every call made. An empty list makes no call.
    pub async fn ask_all(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, RunError> {
        self.judged().ask_all(questions).await
    }

    /// Asks each question in its own judge call, concurrently; verdicts come back in question order.
    /// When any call fails, the others still complete, then one [`RunError::Several`] lists every
    /// failure. An empty list makes no call.
    pub async fn ask_parallel(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, RunError> {
        self.judged().ask_parallel(questions).await
    }

    /// The judge `config` (rather than the configured one) for this run. Not a stable API: tests use
    /// it to judge with several providers in one process.
    #[doc(hidden)]
    pub fn __judge_with<'a>(&'a self, config: &'a JudgeConfig) -> Judge<'a> {
        Judge {
            judged: self.judged(),
            config,
        }
    }
}

/// A judge model bound to one run. Not a stable API (see [`PromptRun::__judge_with`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    judged: Judged<'a>,
    config: &'a JudgeConfig,
}

/// What the judge is asked about: the sample (its state notes the verdicts), the task or prompt it is
/// told as context, and the output it judges, or with `steps` the trajectory ending in that output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judged<'a> {
    pub scope: &'a Arc<RunScope>,
    pub prompt: &'a str,
    pub output: &'a str,
    /// The trajectory's steps, one per line, when the judge reads the trajectory; its snippet must
    /// come from them.
    pub steps: Option<&'a str>,
    /// The media sent with the output, when asked (`ask_with_inputs`); `None` sends the text alone.
    pub inputs: Option<&'a std::collections::BTreeMap<String, crate::completion::MediaPart>>,
}

impl<'a> Judged<'a> {
    /// The configured judge on this text, or (noted as a failed judge call: the sample errors) why
    /// there is none.
    pub(crate) fn configured(self) -> Result<Judge<'a>, RunError> {
        let config = self.scope.engine().config.judge.as_ref().ok_or_else(|| {
            let message = crate::config::judge_not_configured();
            // A question no judge can answer: the sample errors, as for a call that failed.
            self.scope.state().note_call(
                CallRole::Judge,
                CallEnding::Failed(CallError::new(CallErrorKind::Config, message.clone())),
            );
            RunError::NotConfigured(message)
        })?;
        Ok(Judge {
            judged: self,
            config,
        })
    }

    /// [`PromptRun::ask`] on this text.
    pub(crate) async fn ask(self, question: &str) -> Result<JudgeVerdict, RunError> {
        let asked = match self.configured() {
            Ok(judge) => judge.ask(question).await,
            Err(e) => Err(e),
        };
        self.noted(asked)
    }

    /// [`PromptRun::ask_all`] on this text.
    pub(crate) async fn ask_all(self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, RunError> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let asked = match self.configured() {
            Ok(judge) => judge.ask_all(questions).await,
            Err(e) => Err(e),
        };
        self.noted(asked)
    }

    /// [`PromptRun::ask_parallel`] on this text.
    pub(crate) async fn ask_parallel(
        self,
        questions: &[&str],
    ) -> Result<Vec<JudgeVerdict>, RunError> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let asked = match self.configured() {
            Ok(judge) => judge.ask_parallel(questions).await,
            Err(e) => Err(e),
        };
        self.noted(asked)
    }

    /// `asked`, a reply with no verdict noted first.
    fn noted<T>(self, asked: Result<T, RunError>) -> Result<T, RunError> {
        if let Err(e) = &asked {
            note_no_verdict(self.scope, e);
        }
        asked
    }
}

/// Notes a reply that held no verdict (after its retry) as a failed judge call: the sample errors,
/// whatever the body does with the error. (The engine noted the calls that failed.)
fn note_no_verdict(scope: &RunScope, e: &RunError) {
    match e {
        RunError::NoVerdict(_) | RunError::MissingVerdicts(_) => scope.state().note_call(
            CallRole::Judge,
            CallEnding::Failed(CallError::new(CallErrorKind::NoVerdict, e.to_string())),
        ),
        RunError::Several(failures) => {
            failures.iter().for_each(|(_, e)| note_no_verdict(scope, e));
        }
        // The engine noted a failed call, and the rest are not the judge's answers.
        _ => {}
    }
}

/// Tokens and cost of the judge calls behind a verdict (the retry included).
type Spent = Tally;

impl Judge<'_> {
    /// Asks one question (see [`PromptRun::ask`]); with `judge_samples = k`, k times, the majority's
    /// answer the verdict.
    pub async fn ask(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        let request = self.request(&[question], false);
        let key = self.key_of(&request);
        let asks =
            (0..self.samples()).map(|nth| self.call_parsed(request.clone(), parse::single, nth));
        let answers = futures::future::try_join_all(asks).await?;
        let (parsed, spent): (Vec<Parsed>, Vec<Spent>) = answers.into_iter().unzip();
        let (parsed, votes) = majority(parsed);
        Ok(self.verdict(question, parsed, &total(spent), votes, &key))
    }

    /// The cassette key of the first ask of `request` in this sample: what a label of its answers
    /// records, so that it judges only these answers (a new answer or another judge is another key).
    fn key_of(&self, request: &CompletionRequest) -> String {
        crate::cassette::entry_key_nth(
            &self.config.provider,
            request,
            self.judged.scope.identity().run_index,
            0,
        )
    }

    /// Asks every question in one call (see [`PromptRun::ask_all`]); with `judge_samples = k`, k
    /// times, each question's verdict the majority's.
    pub async fn ask_all(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, RunError> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let request = self.request(questions, true);
        let key = self.key_of(&request);
        let asks = (0..self.samples()).map(|nth| self.answers_all(&request, questions, nth));
        let rounds = futures::future::try_join_all(asks).await?;
        let spent = total(rounds.iter().map(|(_, spent)| *spent).collect());
        let mut by_question: Vec<Vec<Parsed>> = questions.iter().map(|_| Vec::new()).collect();
        for (answers, _) in rounds {
            for (i, parsed) in answers.into_iter().enumerate() {
                by_question[i].push(parsed);
            }
        }
        Ok(questions
            .iter()
            .zip(by_question)
            .map(|(question, answers)| {
                let (parsed, votes) = majority(answers);
                self.verdict(question, parsed, &spent, votes, &key)
            })
            .collect())
    }

    /// How many times each question is asked: the test's `judge_samples`, else `[judge]`'s.
    fn samples(&self) -> u32 {
        self.judged
            .scope
            .identity()
            .judge_samples
            .unwrap_or(self.config.samples)
            .max(1)
    }

    /// One round of [`Judge::ask_all`] (the `nth`) of `request`, which asks `questions`: every
    /// question's answer, in question order.
    async fn answers_all(
        &self,
        request: &CompletionRequest,
        questions: &[&str],
        nth: u32,
    ) -> Result<(Vec<Parsed>, Spent), RunError> {
        let n = questions.len();
        let (mut slots, mut spent) = self
            .call_parsed(request.clone(), |result| parse::several(result, n), nth)
            .await?;
        let missing: Vec<usize> = (0..n).filter(|&i| slots[i].is_none()).collect();
        if !missing.is_empty() {
            // Once, with only the unanswered questions, numbered afresh.
            let again: Vec<&str> = missing.iter().map(|&i| questions[i]).collect();
            let result = self.call(self.request(&again, true), nth).await?;
            spent.add_call(&result, false);
            if let Ok(answers) = parse::several(&result, again.len()) {
                for (&i, answer) in missing.iter().zip(answers) {
                    slots[i] = answer;
                }
            }
        }
        let still: Vec<(usize, String)> = (0..n)
            .filter(|&i| slots[i].is_none())
            .map(|i| (i + 1, questions[i].to_string()))
            .collect();
        if !still.is_empty() {
            return Err(RunError::MissingVerdicts(still));
        }
        Ok((slots.into_iter().flatten().collect(), spent))
    }

    /// Asks each question in its own call, concurrently (see [`PromptRun::ask_parallel`]).
    pub async fn ask_parallel(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, RunError> {
        // join_all polls every call to completion even when one fails early.
        let outcomes = futures::future::join_all(questions.iter().map(|q| self.ask(q))).await;
        let mut verdicts = Vec::with_capacity(questions.len());
        let mut failures = Vec::new();
        for (question, outcome) in questions.iter().zip(outcomes) {
            match outcome {
                Ok(verdict) => verdicts.push(verdict),
                Err(e) => failures.push((question.to_string(), e)),
            }
        }
        if failures.is_empty() {
            Ok(verdicts)
        } else {
            Err(RunError::Several(failures))
        }
    }

    fn request(&self, questions: &[&str], several: bool) -> CompletionRequest {
        let request = prompt::request(
            self.config,
            self.judged.prompt,
            self.judged.output,
            self.judged.steps,
            questions,
            several,
            self.judged.scope.identity().cache_judge,
        );
        match self.judged.inputs {
            Some(media) if !media.is_empty() => prompt::with_media(request, media.values()),
            _ => request,
        }
    }

    /// Makes the call and parses the reply; when the reply holds no verdict, retries once with a
    /// reminder, then gives up with [`RunError::NoVerdict`] quoting the last reply.
    async fn call_parsed<T>(
        &self,
        request: CompletionRequest,
        parse: impl Fn(&CompletionResult) -> Result<T, String>,
        nth: u32,
    ) -> Result<(T, Spent), RunError> {
        let mut spent = Spent::default();
        let first = self.call(request.clone(), nth).await?;
        spent.add_call(&first, false);
        if let Ok(parsed) = parse(&first) {
            return Ok((parsed, spent));
        }
        tracing::debug!("the judge's reply holds no verdict: asking again with a reminder");
        let second = self.call(prompt::retry_request(&request), nth).await?;
        spent.add_call(&second, false);
        match parse(&second) {
            Ok(parsed) => Ok((parsed, spent)),
            Err(why) => Err(RunError::NoVerdict(format!("{why} (after one retry)"))),
        }
    }

    /// The `nth` ask of `request` in this sample (each recorded under its own key).
    async fn call(
        &self,
        request: CompletionRequest,
        nth: u32,
    ) -> Result<CompletionResult, RunError> {
        match self
            .judged
            .scope
            .engine()
            .complete_nth(
                self.judged.scope,
                CallRole::Judge,
                &self.config.provider,
                request,
                nth,
            )
            .await
        {
            Ok(completed) => Ok(completed.result),
            Err(e) => Err(RunError::Call {
                call: "judge",
                error: e,
            }),
        }
    }

    fn verdict(
        &self,
        question: &str,
        parsed: Parsed,
        spent: &Spent,
        votes: Option<Votes>,
        key: &str,
    ) -> JudgeVerdict {
        let Parsed {
            reasoning,
            snippet,
            yes,
            question_type,
            ..
        } = parsed;
        let (snippet, reasoning) = match snippet {
            None => (None, reasoning),
            Some(quoted) => match parse::verify_snippet(self.quotable(), &quoted) {
                Some(verbatim) => (Some(verbatim), reasoning),
                None => {
                    let note = format!(
                        "[the judge's snippet {:?} does not occur in the {} and was dropped]",
                        parse::shorten(&quoted),
                        if self.judged.steps.is_some() {
                            "steps"
                        } else {
                            "response"
                        }
                    );
                    (
                        None,
                        Some(reasoning.map_or(note.clone(), |r| format!("{r} {note}"))),
                    )
                }
            },
        };
        let mut verdict = self.make(question, yes, snippet, reasoning, spent);
        verdict.votes = votes;
        self.weigh(&mut verdict, question_type);
        tracing::debug!(
            test = %self.judged.scope.identity().test,
            run = self.judged.scope.identity().run_index,
            question = %crate::redact::redact(question),
            answer = %verdict.answer,
            "judge verdict"
        );
        let answer = verdict.answer(key);
        let state = self.judged.scope.state();
        state.note(|c| c.judge.push(answer));
        if !verdict.passed && verdict.errors_when_required() {
            let failed = JudgeFailed {
                verdict: Box::new(verdict.clone()),
            };
            state.note_erroring_verdict(failed.to_string());
        }
        verdict
    }

    /// The text a snippet must come from: the trajectory's steps, else the output.
    fn quotable(&self) -> &str {
        self.judged.steps.unwrap_or(self.judged.output)
    }

    fn make(
        &self,
        question: &str,
        yes: bool,
        snippet: Option<String>,
        reasoning: Option<String>,
        spent: &Spent,
    ) -> JudgeVerdict {
        JudgeVerdict {
            question: question.to_string(),
            answer: if yes { "yes" } else { "no" }.to_string(),
            passed: yes,
            snippet,
            reasoning,
            judge_model: self.config.model.clone(),
            judge_provider: self.config.provider.clone(),
            judge_input_tokens: spent.tokens.input,
            judge_output_tokens: spent.tokens.output,
            judge_cost_usd: spent.cost.known(),
            question_type: None,
            measurement: None,
            advisory: None,
            votes: None,
            on_advisory: self.config.advisory,
        }
    }

    /// Puts the judge's measurement on `question_type` into `verdict`, and whether that leaves it
    /// advisory. The measurement applies only to the configured judge: one asked through
    /// [`PromptRun::__judge_with`] with another is unmeasured.
    fn weigh(&self, verdict: &mut JudgeVerdict, question_type: Option<String>) {
        let engine = &self.judged.scope.engine();
        let configured = engine.config.judge.as_ref() == Some(self.config);
        let measurement = question_type
            .as_deref()
            .filter(|_| configured)
            .and_then(|kind| {
                let measured = engine.judge_measured.get()?.get(kind)?;
                Measurement::of(kind, measured)
            });
        verdict.advisory = Advisory::of(
            question_type.as_deref(),
            measurement.as_ref(),
            self.config.min_accuracy,
        )
        .or_else(|| {
            let votes = verdict.votes?;
            Advisory::of_votes(votes, self.config.min_agreement)
        });
        verdict.measurement = measurement;
        verdict.question_type = question_type;
    }
}

/// The majority of the answers to one question (one answer: itself, no votes) and how they split; the
/// verdict keeps the reasoning and snippet of the first answer that agrees with it.
fn majority(answers: Vec<Parsed>) -> (Parsed, Option<Votes>) {
    let said: Vec<bool> = answers.iter().map(|p| p.yes).collect();
    let (yes, votes) = Votes::of(&said);
    let mut answers = answers.into_iter();
    if said.len() == 1 {
        return (answers.next().expect("one answer"), None);
    }
    let chosen = answers
        .find(|p| p.yes == yes)
        .expect("the majority answered");
    (chosen, Some(votes))
}

/// The judge calls of several asks, summed.
fn total(spent: Vec<Spent>) -> Spent {
    spent.into_iter().fold(Spent::default(), |mut all, s| {
        all += s;
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> JudgeConfig {
        JudgeConfig {
            max_tokens: 512,
            ..JudgeConfig::new("openai", "gpt-judge")
        }
    }

    fn run(output: &str) -> PromptRun {
        PromptRun::given(
            crate::engine::Engine::for_unit_tests(),
            "judge_unit",
            "Summarise the memo.",
            output,
            false,
        )
    }

    fn spent(input: u64, output: u64, cost: Option<f64>) -> Spent {
        let mut spent = Spent::default();
        let mut result = CompletionResult::new("", input, output);
        result.cost_usd = cost;
        spent.add_call(&result, false);
        spent
    }

    #[test]
    fn empty_lists_make_no_call() {
        let run = run("anything");
        let all = futures::executor::block_on(run.ask_all(&[])).unwrap();
        let parallel = futures::executor::block_on(run.ask_parallel(&[])).unwrap();
        assert!(all.is_empty() && parallel.is_empty());
        let usage = run.__usage();
        assert_eq!(usage.judge.calls + usage.subject.calls, 0);
        let config = config();
        let judge = run.__judge_with(&config);
        assert!(
            futures::executor::block_on(judge.ask_all(&[]))
                .unwrap()
                .is_empty()
        );
        assert!(
            futures::executor::block_on(judge.ask_parallel(&[]))
                .unwrap()
                .is_empty()
        );
        assert_eq!(run.__usage().judge.calls, 0);
    }

    /// A judge's reply: its answer, reasoning and quoted snippet.
    fn reply(yes: bool, reasoning: &str, snippet: &str) -> Parsed {
        Parsed {
            index: None,
            question_type: None,
            reasoning: Some(reasoning.into()),
            snippet: Some(snippet.into()),
            yes,
        }
    }

    /// The verdict `reply` gives on `question` about a run whose output is `output`.
    fn verdict_on(output: &str, question: &str, reply: Parsed, spent: &Spent) -> JudgeVerdict {
        run(output)
            .__judge_with(&config())
            .verdict(question, reply, spent, None, "key")
    }

    /// Under `[judge] advisory = "error"` an advisory "no" is noted in the sample's state: the body
    /// that fails by requiring it errors the sample; one that fails otherwise still fails.
    #[test]
    fn a_required_advisory_no_under_error_errors_the_sample_through_its_state() {
        let run = run("Tea costs $4.");
        let erroring = JudgeConfig {
            advisory: AdvisoryPolicy::Error,
            ..config()
        };
        let parsed = Parsed {
            question_type: Some("avoidance".into()),
            ..reply(false, "A price is named.", "$4")
        };
        let verdict = run.__judge_with(&erroring).verdict(
            "Does it avoid prices?",
            parsed,
            &Spent::default(),
            None,
            "key",
        );
        assert!(verdict.advisory.is_some());
        let ended = run.scope.state().ended();
        assert_eq!(ended.erroring_verdicts.len(), 1);
        let required: anyhow::Result<()> = verdict.require().map(|_| ()).map_err(Into::into);
        let body = crate::outcome::of_body(anyhow::Context::context(required, "checking prices"));
        let outcome = crate::outcome::classify(&ended, body);
        assert_eq!(
            outcome.status(),
            crate::checks::SampleStatus::Errored,
            "{outcome:?}"
        );
        let other = crate::outcome::of_body(Err(anyhow::anyhow!("too long")));
        let outcome = crate::outcome::classify(&ended, other);
        assert_eq!(outcome.status(), crate::checks::SampleStatus::Failed);
        // The same "no" under the default policy fails the body's sample and notes nothing.
        let run = self::run("Tea costs $4.");
        let parsed = Parsed {
            question_type: Some("avoidance".into()),
            ..reply(false, "A price is named.", "$4")
        };
        let _ = run.__judge_with(&config()).verdict(
            "Does it avoid prices?",
            parsed,
            &Spent::default(),
            None,
            "key",
        );
        assert!(run.scope.state().ended().erroring_verdicts.is_empty());
    }

    #[test]
    fn verdict_keeps_a_verbatim_snippet_and_fills_judge_fields() {
        let parsed = Parsed {
            question_type: Some("factual_presence".into()),
            ..reply(true, "Alice is named.", "Alice leads Project Phoenix")
        };
        let v = verdict_on(
            "Alice leads Project\nPhoenix.",
            "Is Alice named?",
            parsed,
            &spent(120, 30, Some(0.002)),
        );
        assert_eq!(
            v,
            JudgeVerdict {
                question: "Is Alice named?".into(),
                answer: "yes".into(),
                passed: true,
                snippet: Some("Alice leads Project\nPhoenix".into()),
                reasoning: Some("Alice is named.".into()),
                judge_model: "gpt-judge".into(),
                judge_provider: "openai".into(),
                judge_input_tokens: 120,
                judge_output_tokens: 30,
                judge_cost_usd: Some(0.002),
                question_type: Some("factual_presence".into()),
                measurement: None,
                advisory: Some(Advisory::Unmeasured {
                    question_type: Some("factual_presence".into())
                }),
                votes: None,
                on_advisory: AdvisoryPolicy::Fail,
            }
        );
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["answer"], "yes");
        assert_eq!(serde_json::from_value::<JudgeVerdict>(json).unwrap(), v);
    }

    #[test]
    fn a_trajectory_verdict_keeps_a_quoted_step_and_drops_a_quote_from_elsewhere() {
        let run = run("It shipped on Monday.");
        let config = config();
        let steps =
            "1. openai/m requested lookup({\"id\":42})\n2. openai/m answered \"It shipped.\"";
        let judge = Judge {
            judged: Judged {
                steps: Some(steps),
                ..run.judged()
            },
            config: &config,
        };
        let spent = Spent::default();
        let quoted = reply(
            true,
            "It looked the order up.",
            "requested lookup({\"id\":42})",
        );
        let v = judge.verdict("Did it look up the order?", quoted, &spent, None, "key");
        assert_eq!(v.snippet.as_deref(), Some("requested lookup({\"id\":42})"));
        let elsewhere = reply(true, "It answered.", "on Monday");
        let v = judge.verdict("Did it answer?", elsewhere, &spent, None, "key");
        assert_eq!(v.snippet, None);
        let reasoning = v.reasoning.unwrap();
        assert!(
            reasoning.ends_with(
                "[the judge's snippet \"on Monday\" does not occur in the steps and was dropped]"
            ),
            "{reasoning}"
        );
        // Both verdicts are the sample's, as an output's are.
        assert_eq!(run.scope.state().take_findings().0.judge.len(), 2);
    }

    #[test]
    fn a_follow_ups_trajectory_is_told_the_conversations_first_prompt_as_the_task() {
        let scope = crate::test_support::scope("judge_unit", "judge_unit");
        let first = crate::test_support::answered(&scope, "Book Paris.", "Which dates?", None);
        let last = crate::test_support::answered(&scope, "May 2 to 4.", "Booked.", Some(first));
        let config = config();
        let judge = Judge {
            judged: last.trajectory_judged("1. fake/m answered \"Booked.\""),
            config: &config,
        };
        let request = judge.request(&["Did it book?"], false);
        let crate::completion::ContentBlock::Text { text } = &request.messages[0].content[0] else {
            panic!("{request:?}");
        };
        crate::test_support::assert_contains(
            text,
            &[
                "the task the agent was given",
                "\nBook Paris.\n",
                "STEPS:\n1. fake/m answered \"Booked.\"\nFINAL ANSWER:\nBooked.\n",
            ],
        );
        assert!(!text.contains("May 2 to 4."), "{text}");
    }

    #[test]
    fn an_invented_snippet_is_dropped_and_the_reasoning_says_so() {
        let v = verdict_on(
            "Alice leads the project.",
            "Is Bob named?",
            reply(false, "Bob is named.", "Bob leads"),
            &spent(1, 1, None),
        );
        assert_eq!(v.snippet, None);
        assert_eq!(v.answer, "no");
        assert!(!v.passed);
        let reasoning = v.reasoning.unwrap();
        assert!(
            reasoning
                .starts_with("Bob is named. [the judge's snippet \"Bob leads\" does not occur"),
            "{reasoning}"
        );
        assert_eq!(v.judge_cost_usd, None);
    }

    #[test]
    fn spent_sums_attempts_and_an_unpriced_call_makes_the_cost_unknown() {
        let mut s = spent(100, 10, Some(0.5));
        let mut second = CompletionResult::new("", 50, 5);
        second.cost_usd = Some(0.25);
        s.add_call(&second, false);
        assert_eq!(
            (s.tokens.input, s.tokens.output, s.cost.known()),
            (150, 15, Some(0.75))
        );
        s.add_call(&CompletionResult::new("", 1, 1), false);
        assert_eq!(s.cost.known(), None);
    }

    #[test]
    fn missing_verdicts_name_the_questions() {
        let err = RunError::MissingVerdicts(vec![(2, "Is Bob named?".into()), (4, "Q4?".into())]);
        assert_eq!(
            err.to_string(),
            "judge returned no verdict for question 2 \"Is Bob named?\", question 4 \"Q4?\", even when asked again"
        );
    }

    #[test]
    fn several_errors_list_every_failure() {
        let err = RunError::Several(vec![
            (
                "A?".into(),
                RunError::Call {
                    call: "judge",
                    error: CallError::new(
                        CallErrorKind::Provider {
                            status: Some(500),
                            attempts: 1,
                        },
                        "openai: HTTP 500",
                    ),
                },
            ),
            ("B?".into(), RunError::NoVerdict("an empty reply".into())),
        ]);
        assert_eq!(
            err.to_string(),
            "2 judge question(s) failed:\n- \"A?\": judge call failed: openai: HTTP 500\n- \"B?\": judge returned no verdict: an empty reply"
        );
    }
}
