//! How a sample ends (passed, failed, errored, unavailable) and what the samples of a trial decide.
//! Pure functions: `harness::trial::execute` runs the samples and reports what these decide.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::{Deserialize, Serialize};

use crate::cassette::decision::{Ignore, Unavailable};
use crate::checks::{AssertionRecord, JudgeAnswer, SampleStatus};
use crate::engine::state::Ended;
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole};
use crate::plan::SamplePlan;
use crate::stats::sprt::{Sprt, SprtVerdict};

/// How one sample ended: its status, and why when it did not pass. A sample's record keeps it whole;
/// the reports write its status and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleOutcome {
    status: SampleStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// Why an unavailable sample's trial is ignored: `decide` reads it; the message says it to people.
    #[serde(skip)]
    ignore: Option<Ignore>,
}

impl SampleOutcome {
    /// Every check held.
    pub const PASSED: Self = Self {
        status: SampleStatus::Passed,
        message: None,
        ignore: None,
    };

    /// An assertion failed or the judge said no, as `message` says.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::not_passed(SampleStatus::Failed, message.into())
    }

    /// Nothing was learnt about the output, as `message` says.
    pub fn errored(message: impl Into<String>) -> Self {
        Self::not_passed(SampleStatus::Errored, message.into())
    }

    /// The call was neither made nor replayed: the trial is ignored for `reason`.
    pub fn unavailable(reason: Unavailable) -> Self {
        Self {
            status: SampleStatus::Unavailable,
            message: Some(reason.message),
            ignore: Some(reason.why),
        }
    }

    fn not_passed(status: SampleStatus, message: String) -> Self {
        Self {
            status,
            message: Some(message),
            ignore: None,
        }
    }

    /// How it ended.
    pub fn status(&self) -> SampleStatus {
        self.status
    }

    /// The message of a sample that did not pass.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Passed.
    Passed,
    /// Failed: an assertion failed or the judge said no.
    Failed,
    /// Errored: a sample ended without a verdict on its output (see [`SampleOutcome`]).
    Errored,
    /// Ignored at run time (no key and no recording, or a skipped case).
    Ignored,
    /// A `live_only` test without a recording: ignored, and listed apart ("live only, not run").
    #[serde(rename = "live_only")]
    LiveOnly,
}

/// The outcome of a test body's result, before its state is read: `Ok` passes, an error or a panic
/// fails (`ensure!`, `bail!`, the body's own errors, a failed call's error returned with `?`);
/// [`classify`] then errors it where a call failed or a verdict that errors the sample failed it.
pub fn of_body(result: anyhow::Result<()>) -> SampleOutcome {
    match result {
        Ok(()) => SampleOutcome::PASSED,
        Err(e) => SampleOutcome::failed(format!("{e:#}")),
    }
}

/// How a sample ends, from its state once its body returned (`ended`: how its model calls ended, the
/// verdicts that error it) and what its body or assertions decided (`body`): a call that was not made
/// nor replayed makes it unavailable (the trial ignored); a call that failed errors it, whatever the
/// body did with the error (returned it with `?`, unwrapped it, turned it into its own, matched it
/// away or dropped it); only when every call ended well does the body decide between passed and
/// failed, except that a body failed by a required verdict that errors the sample (an advisory "no"
/// under `[judge] advisory = "error"`) errors it.
pub(crate) fn classify(ended: &Ended, body: SampleOutcome) -> SampleOutcome {
    let calls = &ended.calls;
    if let Some(reason) = calls.iter().find_map(|(_, ending)| match ending {
        CallEnding::Unavailable(reason) => Some(reason),
        _ => None,
    }) {
        return SampleOutcome::unavailable(reason.clone());
    }
    let Some((role, failed)) = calls.iter().find_map(|(role, ending)| match ending {
        CallEnding::Failed(e) => Some((*role, e)),
        _ => None,
    }) else {
        return match body.message {
            Some(m)
                if body.status == SampleStatus::Failed
                    && ended
                        .erroring_verdicts
                        .iter()
                        .any(|v| m.contains(v.as_str())) =>
            {
                SampleOutcome::errored(m)
            }
            _ => body,
        };
    };
    let said = failed_call(role, failed);
    SampleOutcome::errored(match (body.status, body.message) {
        // The body's error is the call's (with `?`, or with its context): its text says it all.
        (SampleStatus::Failed | SampleStatus::Errored, Some(m))
            if m.contains(&failed.to_string()) =>
        {
            m
        }
        (SampleStatus::Failed | SampleStatus::Errored, Some(m)) => format!("{said}; then: {m}"),
        (SampleStatus::Passed, _) => format!("{said} (the test went on without its answer)"),
        (SampleStatus::Failed | SampleStatus::Errored | SampleStatus::Unavailable, _) => said,
    })
}

/// A failed call as a sample's message says it: by who made it, and why it failed.
fn failed_call(role: CallRole, e: &CallError) -> String {
    match (e.kind(), role) {
        (CallErrorKind::NoVerdict | CallErrorKind::Config | CallErrorKind::RunFn, _) => {
            e.to_string()
        }
        (_, CallRole::Subject) => format!("model call failed: {e}"),
        (_, CallRole::Judge) => format!("judge call failed: {e}"),
        (_, CallRole::Embedding) => format!("embeddings call failed: {e}"),
    }
}

/// What a sample's checks decided, as its cassette keeps it beside the calls (the engine names the
/// sample), with the settings of the `judge` that answered its judge questions, if it asked any.
pub fn verdict_of(
    outcome: &SampleOutcome,
    assertions: &[AssertionRecord],
    answers: &[JudgeAnswer],
    judge: Option<crate::checks::JudgeSettings>,
) -> crate::cassette::RecordedChecks {
    use crate::cassette::CheckVerdict;
    // A cassette's verdict is passed, failed or errored: an unavailable call learnt nothing either.
    let status = match outcome.status {
        SampleStatus::Unavailable => SampleStatus::Errored,
        status => status,
    };
    let assertions = assertions
        .iter()
        .map(|a| CheckVerdict::new(format!("{} ({})", a.kind, a.at), a.passed));
    let judged = answers.iter().map(|j| CheckVerdict {
        advisory: j.advisory.is_some(),
        question_type: j.question_type.clone(),
        judge_key: Some(j.judge_key.clone()).filter(|k| !k.is_empty()),
        ..CheckVerdict::new(format!("judge: {}", j.question), j.passed)
    });
    crate::cassette::RecordedChecks {
        target: None,
        test: String::new(),
        run: 0,
        status,
        checks: assertions.chain(judged).collect(),
        judge_settings: judge.filter(|_| !answers.is_empty()),
    }
}

/// What the samples of a trial decide.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Passed, failed, or errored (when any sample errored).
    pub status: Status,
    /// Samples that passed.
    pub passed: u32,
    /// Samples that errored.
    pub errored: u32,
    /// The failure message, when the trial did not pass.
    pub message: Option<String>,
}

/// How many samples to launch next, given the outcomes of those taken so far (none in flight), or 0
/// when the plan is decided. A wave is at most `concurrency` samples (all of them for
/// [`SamplePlan::All`]), and never more than could still change the verdict:
/// - early stop: as many as must still pass, so that a passing test takes exactly the samples it needs
///   (`runs = 5, pass_threshold = 0.8`: four start; the fifth is sent only if one of them failed);
/// - adaptive: the fewest that could reach a boundary of the SPRT, so a wave never overshoots it.
///
/// Under early stop and adaptive sampling an errored or unavailable sample decides the trial (errored,
/// or ignored) whatever the others would say.
pub fn next_wave(plan: &SamplePlan, taken: &[&SampleOutcome], concurrency: u32) -> u32 {
    let ended = taken
        .iter()
        .any(|o| matches!(o.status, SampleStatus::Errored | SampleStatus::Unavailable));
    let passed = taken
        .iter()
        .filter(|o| o.status == SampleStatus::Passed)
        .count() as u32;
    let failed = taken.len() as u32 - passed;
    let wave = match plan {
        // A fixed plan takes every sample, whatever the first ones said (the rest after a priming one).
        SamplePlan::All(t) => return t.runs.saturating_sub(taken.len() as u32),
        _ if ended => return 0,
        SamplePlan::EarlyStop(t) => {
            let need = t.required();
            if passed >= need || failed > t.runs - need {
                return 0;
            }
            need - passed
        }
        SamplePlan::Adaptive(sprt) => match sprt.verdict(passed, failed) {
            SprtVerdict::Continue(fewest) => fewest,
            _ => return 0,
        },
    };
    wave.min(concurrency).max(1)
}

/// Decides a trial from its samples, `(run index, outcome)` in run order, under `plan`. An errored
/// sample fails the trial whatever the threshold: it hides what the output would have been.
pub fn decide(samples: &[(u32, &SampleOutcome)], plan: &SamplePlan) -> Decision {
    let runs = plan.max_runs();
    let count =
        |status: SampleStatus| samples.iter().filter(|(_, o)| o.status == status).count() as u32;
    let (passed, errored) = (count(SampleStatus::Passed), count(SampleStatus::Errored));
    let failed = samples.len() as u32 - passed - errored;
    let sprt = match plan {
        SamplePlan::Adaptive(sprt) => Some((sprt, sprt.verdict(passed, failed))),
        _ => None,
    };
    let need = plan.required(failed);
    let unavailable = samples
        .iter()
        .map(|(_, o)| o)
        .find(|o| o.status == SampleStatus::Unavailable);
    let status = if let Some(u) = unavailable {
        match u.ignore {
            Some(Ignore::LiveOnly) => Status::LiveOnly,
            Some(Ignore::NoKey { .. }) | None => Status::Ignored,
        }
    } else if errored > 0 {
        Status::Errored
    } else if let Some((_, verdict)) = sprt {
        if verdict == SprtVerdict::Pass {
            Status::Passed
        } else {
            Status::Failed
        }
    } else if passed >= need {
        Status::Passed
    } else {
        Status::Failed
    };
    let message = match (status.clone(), samples) {
        (Status::Passed, _) => None,
        _ if let Some(u) = unavailable => u.message.clone(),
        (_, [(_, only)]) => only.message().map(str::to_string),
        _ => {
            let mut lines: Vec<String> = samples
                .iter()
                .filter_map(|(i, o)| {
                    let label = match o.status {
                        SampleStatus::Passed | SampleStatus::Unavailable => return None,
                        SampleStatus::Failed => "FAILED",
                        SampleStatus::Errored => "ERROR",
                    };
                    let text = o.message().unwrap_or_default().replace('\n', "\n    ");
                    Some(format!("[run {i}/{runs}] {label}: {text}"))
                })
                .collect();
            let total = samples.len() as u32;
            let errors = if errored > 0 {
                format!(", {errored} errored")
            } else {
                String::new()
            };
            let why = if errored > 0 && (passed >= need || sprt.is_some()) {
                ": an errored sample fails the trial"
            } else {
                ""
            };
            // The rate and its interval: "3/5" alone reads as a fact, not an estimate.
            let rate = crate::stats::Counts::new(passed, total)
                .rate_with_interval()
                .map_or_else(String::new, |r| format!("{r}; "));
            let count = format!("{passed}/{total} samples passed{errors}");
            lines.push(match (plan, sprt) {
                // An error decided it, not the samples: no word on the pass rate.
                (_, Some(_)) if errored > 0 => format!("{count}{why}"),
                (_, Some((sprt, verdict))) => {
                    format!("{count}{why}{}", adaptive_words(sprt, verdict, total))
                }
                (SamplePlan::EarlyStop(t), _) if total < t.runs => format!(
                    "{count} ({rate}need {need} of {runs}, pass threshold {}){why}; early stop: the other {} samples were not needed",
                    percent(t.pass_threshold),
                    t.runs - total
                ),
                _ => format!(
                    "{count} ({rate}need {need}, pass threshold {}){why}",
                    percent(plan.pass_threshold())
                ),
            });
            Some(lines.join("\n"))
        }
    };
    Decision {
        status,
        passed,
        errored,
        message,
    }
}

/// What an adaptive test's samples showed, after the count: why it did not pass.
fn adaptive_words(sprt: &Sprt, verdict: SprtVerdict, taken: u32) -> String {
    let (p0, p1) = sprt.hypotheses();
    let rate = percent(sprt.pass_rate);
    let confidence = percent(sprt.confidence);
    match verdict {
        SprtVerdict::Fail => format!(
            "; adaptive sampling (SPRT): the pass rate is below {rate} (at most {} rather than at least {}, \
             {confidence} confidence)",
            percent(p0),
            percent(p1)
        ),
        SprtVerdict::Inconclusive | SprtVerdict::Continue(_) => format!(
            "; adaptive sampling (SPRT): inconclusive after {taken} of at most {} samples: the pass rate cannot yet be \
             told above {} or below {} at {confidence} confidence (raise `max_runs`, or widen `indifference`)",
            sprt.max_runs,
            percent(p1),
            percent(p0)
        ),
        SprtVerdict::Pass => String::new(),
    }
}

pub use crate::stats::percent;

#[cfg(test)]
mod tests;
