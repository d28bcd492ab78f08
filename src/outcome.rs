//! How a sample ends (passed, failed, errored, unavailable) and what the samples of a trial decide.
//! Pure functions: `harness::trial::execute` runs the samples and reports what these decide.

use std::error::Error;

use serde::{Deserialize, Serialize};

use crate::cassette::CassetteError;
use crate::cassette::decision::{Ignore, Unavailable};
use crate::engine::CallError;
use crate::judge::JudgeError;
use crate::plan::SamplePlan;
use crate::provider::ProviderError;
use crate::run::FollowUpError;
use crate::stats::sprt::{Sprt, SprtVerdict};

/// How one sample ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleOutcome {
    /// Every check held.
    Passed,
    /// An assertion failed or the judge said no: the output is wrong.
    Failed(String),
    /// Nothing was learnt about the output: the provider failed after its retries, the judge gave no
    /// verdict, a cassette problem, a configuration problem, a panic outside the test body.
    Errored(String),
    /// The call was neither made nor replayed (no recording, and no key or `live_only`): the trial is
    /// ignored with this reason.
    Unavailable(Unavailable),
}

impl SampleOutcome {
    /// The message of a sample that did not pass.
    pub fn message(&self) -> Option<&str> {
        match self {
            SampleOutcome::Passed => None,
            SampleOutcome::Failed(m) | SampleOutcome::Errored(m) => Some(m),
            SampleOutcome::Unavailable(u) => Some(&u.message),
        }
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

/// Whether `error` is one of the library's own errors that say nothing about the output (a provider,
/// judge, cassette or MCP failure). An agent loop that ran out of turns is the model's doing: a failure.
fn is_library_error(error: &(dyn Error + 'static)) -> bool {
    error.is::<JudgeError>()
        || error
            .downcast_ref::<crate::judge::JudgeFailed>()
            .is_some_and(crate::judge::JudgeFailed::errors)
        || error.is::<ProviderError>()
        || error.is::<CallError>()
        || error.is::<CassetteError>()
        || error
            .downcast_ref::<FollowUpError>()
            .is_some_and(FollowUpError::is_library_error)
        || crate::mcp::is_mcp_error(error)
        || is_agent_mcp_error(error)
}

/// Whether `error` is the agent loop's `AgentError::Mcp`: transparent, its source is the MCP error's
/// source, not the MCP error.
#[cfg(feature = "mcp")]
fn is_agent_mcp_error(error: &(dyn Error + 'static)) -> bool {
    matches!(
        error.downcast_ref::<crate::agent::AgentError>(),
        Some(crate::agent::AgentError::Mcp(_))
    )
}

/// Without the `mcp` feature the agent loop has no MCP error.
#[cfg(not(feature = "mcp"))]
fn is_agent_mcp_error(_error: &(dyn Error + 'static)) -> bool {
    false
}

/// The reason a call was not made, when `error` is one (directly, or as the judge's).
fn unavailable<'e>(error: &'e (dyn Error + 'static)) -> Option<&'e Unavailable> {
    match (
        error.downcast_ref(),
        error.downcast_ref(),
        error.downcast_ref(),
    ) {
        (Some(CallError::Unavailable(u)), _, _)
        | (_, Some(JudgeError::Unavailable(u)), _)
        | (_, _, Some(FollowUpError::Unavailable(u))) => Some(u),
        _ => None,
    }
}

/// The outcome of a `#[prompt_test]` body's result: an error whose chain holds one of the library's
/// errors (`run.ask(..).await?`, with or without `.context(..)`) is an error; anything else the body
/// returns (`ensure!`, `bail!`, its own errors) is a failure.
pub fn classify(result: anyhow::Result<()>) -> SampleOutcome {
    let Err(e) = result else {
        return SampleOutcome::Passed;
    };
    if let Some(reason) = e.chain().find_map(unavailable) {
        return SampleOutcome::Unavailable(reason.clone());
    }
    if e.chain().any(is_library_error) {
        SampleOutcome::Errored(format!("{e:#}"))
    } else {
        SampleOutcome::Failed(format!("{e:#}"))
    }
}

/// How a scripted turn that got no reply ends the sample (`turn` of `of`, counted from 1): like the
/// first call's, an unavailable call ignores the trial and a failed one errors it.
pub fn turn_failure(e: FollowUpError, turn: usize, of: usize) -> SampleOutcome {
    match e {
        FollowUpError::Unavailable(reason) => SampleOutcome::Unavailable(reason),
        e if !e.is_library_error() => SampleOutcome::Failed(format!("turn {turn} of {of}: {e}")),
        e => SampleOutcome::Errored(format!("turn {turn} of {of}: {e}")),
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
        .any(|o| matches!(o, SampleOutcome::Errored(_) | SampleOutcome::Unavailable(_)));
    let passed = taken
        .iter()
        .filter(|o| ***o == SampleOutcome::Passed)
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
    let passed = samples
        .iter()
        .filter(|(_, o)| **o == SampleOutcome::Passed)
        .count() as u32;
    let errored = samples
        .iter()
        .filter(|(_, o)| matches!(o, SampleOutcome::Errored(_)))
        .count() as u32;
    let failed = samples.len() as u32 - passed - errored;
    let sprt = match plan {
        SamplePlan::Adaptive(sprt) => Some((sprt, sprt.verdict(passed, failed))),
        _ => None,
    };
    let need = plan.required(failed);
    let unavailable = samples.iter().find_map(|(_, o)| match o {
        SampleOutcome::Unavailable(u) => Some(u),
        _ => None,
    });
    let status = if let Some(u) = unavailable {
        match u.why {
            Ignore::LiveOnly => Status::LiveOnly,
            Ignore::NoKey { .. } => Status::Ignored,
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
        _ if let Some(u) = unavailable => Some(u.message.clone()),
        (_, [(_, only)]) => only.message().map(str::to_string),
        _ => {
            let mut lines: Vec<String> = samples
                .iter()
                .filter_map(|(i, o)| {
                    let label = match o {
                        SampleOutcome::Passed | SampleOutcome::Unavailable(_) => return None,
                        SampleOutcome::Failed(_) => "FAILED",
                        SampleOutcome::Errored(_) => "ERROR",
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

/// A share as a percentage: `80%`, `33.3%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{}%", p.round())
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentError;
    use crate::plan::Threshold;
    use anyhow::Context;

    fn failed(m: &str) -> SampleOutcome {
        SampleOutcome::Failed(m.into())
    }

    fn threshold(runs: u32, pass_threshold: f64) -> Threshold {
        Threshold {
            runs,
            pass_threshold,
        }
    }

    fn all(runs: u32, pass_threshold: f64) -> SamplePlan {
        SamplePlan::All(threshold(runs, pass_threshold))
    }

    fn early(runs: u32, pass_threshold: f64) -> SamplePlan {
        SamplePlan::EarlyStop(threshold(runs, pass_threshold))
    }

    fn adaptive() -> SamplePlan {
        SamplePlan::Adaptive(Sprt::new(0.8, 0.05, 0.95, 40).unwrap())
    }

    /// Runs `plan` wave by wave on the outcomes `source` gives for each run index (1-based): the
    /// waves launched (their sizes) and the decision, as `harness::trial::execute` does.
    fn run_waves(
        plan: &SamplePlan,
        concurrency: u32,
        source: impl Fn(u32) -> SampleOutcome,
    ) -> (Vec<u32>, Decision) {
        let mut taken: Vec<SampleOutcome> = Vec::new();
        let mut waves = Vec::new();
        loop {
            let refs: Vec<&SampleOutcome> = taken.iter().collect();
            let wave = next_wave(plan, &refs, concurrency);
            if wave == 0 {
                break;
            }
            waves.push(wave);
            let first = taken.len() as u32 + 1;
            taken.extend((first..first + wave).map(&source));
        }
        let samples: Vec<(u32, &SampleOutcome)> = (1..).zip(&taken).collect();
        (waves, decide(&samples, plan))
    }

    #[test]
    fn early_stop_launches_the_passes_still_needed_and_stops_once_decided() {
        let ok = |_| SampleOutcome::Passed;
        // The example: runs = 5 at 0.8 needs 4; four start, all pass, the fifth is never sent.
        let (waves, d) = run_waves(&early(5, 0.8), 16, ok);
        assert_eq!((waves, d.status, d.passed), (vec![4], Status::Passed, 4));
        // One of the four fails: the fifth is sent, and decides.
        let one_bad = |i| {
            if i == 2 {
                failed("no")
            } else {
                SampleOutcome::Passed
            }
        };
        let (waves, d) = run_waves(&early(5, 0.8), 16, one_bad);
        assert_eq!((waves, d.status), (vec![4, 1], Status::Passed));
        // Two fail among the four: decided the other way without the fifth, and it says so.
        let two_bad = |i| {
            if i <= 2 {
                failed("no")
            } else {
                SampleOutcome::Passed
            }
        };
        let (waves, d) = run_waves(&early(5, 0.8), 16, two_bad);
        assert_eq!((waves, d.status.clone()), (vec![4], Status::Failed));
        assert_eq!(
            d.message.unwrap().lines().last().unwrap(),
            "2/4 samples passed (50%, 95% CI 15–85%; need 4 of 5, pass threshold 80%); early stop: the other 1 samples were not needed"
        );
        // The concurrency caps a wave.
        let (waves, _) = run_waves(&early(10, 1.0), 4, ok);
        assert_eq!(waves, vec![4, 4, 2]);
        // An error decides at once; a fixed plan launches everything in one wave.
        let (waves, d) = run_waves(&early(5, 0.8), 16, |_| errored("HTTP 503"));
        assert_eq!((waves, d.status), (vec![4], Status::Errored));
        let (waves, _) = run_waves(&all(5, 0.8), 2, ok);
        assert_eq!(waves, vec![5]);
        // ...and takes every sample after an error, to list them all.
        let (waves, d) = run_waves(&all(5, 0.8), 2, |_| errored("HTTP 503"));
        assert_eq!((waves, d.errored), (vec![5], 5));
    }

    /// Early stop reaches the verdict running every sample reaches, for every pattern of passes and
    /// failures of 6 runs at every threshold.
    #[test]
    fn early_stop_decides_as_running_every_sample_would() {
        for runs in 1..=6u32 {
            for k in 1..=runs {
                let pass_threshold = f64::from(k) / f64::from(runs);
                for pattern in 0..(1u32 << runs) {
                    let source = |i: u32| {
                        if pattern & (1 << (i - 1)) != 0 {
                            SampleOutcome::Passed
                        } else {
                            failed("no")
                        }
                    };
                    let every: Vec<SampleOutcome> = (1..=runs).map(source).collect();
                    let every: Vec<(u32, &SampleOutcome)> = (1..).zip(&every).collect();
                    let full = decide(&every, &all(runs, pass_threshold));
                    for concurrency in [1, 2, 16] {
                        let (waves, early) =
                            run_waves(&early(runs, pass_threshold), concurrency, source);
                        assert_eq!(early.status, full.status, "{runs} {k} {pattern:b}");
                        assert!(waves.iter().sum::<u32>() <= runs);
                    }
                }
            }
        }
    }

    #[test]
    fn adaptive_sampling_stops_at_a_boundary_and_says_why_it_failed() {
        let ok = |_| SampleOutcome::Passed;
        // 24 passes in a row pass; the first wave is the 6 failures that could fail it, at most 4 here.
        let (waves, d) = run_waves(&adaptive(), 4, ok);
        assert_eq!(waves.iter().sum::<u32>(), 24);
        assert_eq!(waves[0], 4);
        assert_eq!((d.status, d.message), (Status::Passed, None));
        // Every sample failing stops after six.
        let (waves, d) = run_waves(&adaptive(), 16, |_| failed("no"));
        assert_eq!((waves, d.status), (vec![6], Status::Failed));
        let message = d.message.unwrap();
        assert!(
            message.ends_with(
                "0/6 samples passed; adaptive sampling (SPRT): the pass rate is below 80% (at most 75% rather than \
                 at least 85%, 95% confidence)"
            ),
            "{message}"
        );
        // Alternating passes and failures at 50%... and four in five at 80%: inconclusive at 40.
        let (waves, d) = run_waves(&adaptive(), 16, |i| {
            if i % 5 == 0 {
                failed("no")
            } else {
                SampleOutcome::Passed
            }
        });
        assert_eq!(d.status, Status::Failed);
        assert!(waves.iter().sum::<u32>() <= 40);
        let message = d.message.unwrap();
        assert!(
            message.contains("adaptive sampling (SPRT): inconclusive after"),
            "{message}"
        );
    }

    fn errored(m: &str) -> SampleOutcome {
        SampleOutcome::Errored(m.into())
    }

    #[test]
    fn library_errors_are_errors_and_everything_else_is_a_failure() {
        let judge = || JudgeError::NoVerdict("prose".into());
        #[allow(unused_mut)] // without the `mcp` feature
        let mut errors: Vec<anyhow::Error> = vec![
            judge().into(),
            anyhow::Error::from(judge()).context("asking about tone"),
            Err::<(), _>(judge()).context("while judging").unwrap_err(),
            JudgeError::MissingVerdicts(vec![(2, "B?".into())]).into(),
            CallError::Failed("HTTP 503".into()).into(),
            CassetteError::Invalid {
                path: "x.json".into(),
                line: 1,
                conflict: false,
                message: "bad".into(),
                rerecord: None,
            }
            .into(),
        ];
        #[cfg(feature = "mcp")]
        errors.push(
            AgentError::Mcp(crate::mcp::McpError::Spawn {
                server: "s".into(),
                message: "gone".into(),
            })
            .into(),
        );
        for e in errors {
            let shown = format!("{e:#}");
            assert_eq!(classify(Err(e)), SampleOutcome::Errored(shown));
        }
        assert_eq!(
            classify(Err(anyhow::anyhow!("no ALICE in the output"))),
            failed("no ALICE in the output")
        );
        let ensured = (|| -> anyhow::Result<()> {
            anyhow::ensure!(1 + 1 == 3, "arithmetic");
            Ok(())
        })();
        assert_eq!(classify(ensured), failed("arithmetic"));
        assert_eq!(
            classify(Err(crate::tools::ToolCallMismatch("no call".into()).into())),
            failed("no call")
        );
        let turns = AgentError::MaxTurns {
            max_turns: 2,
            last_calls: Vec::new(),
        };
        assert!(matches!(
            classify(Err(turns.into())),
            SampleOutcome::Failed(_)
        ));
        // A judge error formatted into a new error is the body's own message: a failure.
        assert!(matches!(
            classify(Err(anyhow::anyhow!("{}", judge()))),
            SampleOutcome::Failed(_)
        ));
        assert_eq!(classify(Ok(())), SampleOutcome::Passed);
    }

    /// The decision `decide` should reach: its status, counts and message.
    fn decision(status: Status, passed: u32, errored: u32, message: Option<&str>) -> Decision {
        Decision {
            status,
            passed,
            errored,
            message: message.map(str::to_string),
        }
    }

    /// `decide` on five runs that need four (80%): each row holds runs 1 to 5 and the decision.
    fn five_runs(rows: [([&SampleOutcome; 5], Decision); 2]) {
        for (outcomes, want) in rows {
            let samples: Vec<(u32, &SampleOutcome)> = (1..).zip(outcomes).collect();
            assert_eq!(decide(&samples, &all(5, 0.8)), want, "{outcomes:?}");
        }
    }

    #[test]
    fn a_met_threshold_passes_and_a_missed_one_lists_the_failed_runs() {
        let (ok, bad) = (SampleOutcome::Passed, failed("no Alice"));
        five_runs([
            (
                [&ok, &bad, &ok, &ok, &ok],
                decision(Status::Passed, 4, 0, None),
            ),
            (
                [&ok, &bad, &ok, &ok, &bad],
                decision(
                    Status::Failed,
                    3,
                    0,
                    Some(
                        "[run 2/5] FAILED: no Alice\n[run 5/5] FAILED: no Alice\n3/5 samples passed (60%, 95% \
                         CI 23–88%; need 4, pass threshold 80%)",
                    ),
                ),
            ),
        ]);
    }

    #[test]
    fn an_errored_run_fails_the_trial_whatever_the_threshold() {
        let ok = SampleOutcome::Passed;
        let (bad, outage) = (failed("no\nAlice"), errored("model call failed: HTTP 503"));
        five_runs([
            (
                [&ok, &ok, &outage, &ok, &ok],
                decision(
                    Status::Errored,
                    4,
                    1,
                    Some(
                        "[run 3/5] ERROR: model call failed: HTTP 503\n4/5 samples passed, 1 errored (80%, 95% \
                         CI 38–96%; need 4, pass threshold 80%): an errored sample fails the trial",
                    ),
                ),
            ),
            (
                [&ok, &bad, &outage, &ok, &ok],
                decision(
                    Status::Errored,
                    3,
                    1,
                    Some(
                        "[run 2/5] FAILED: no\n    Alice\n[run 3/5] ERROR: model call failed: HTTP 503\n3/5 samples \
                         passed, 1 errored (60%, 95% CI 23–88%; need 4, pass threshold 80%)",
                    ),
                ),
            ),
        ]);
        // Even a threshold any single run meets.
        let one_error = [(1, &ok), (2, &ok), (3, &outage), (4, &ok), (5, &ok)];
        assert_eq!(decide(&one_error, &all(5, 0.01)).status, Status::Errored);
    }

    #[test]
    fn a_single_sample_is_reported_as_its_own_message() {
        let outage = errored("model call failed: HTTP 503");
        assert_eq!(
            decide(&[(3, &outage)], &all(5, 0.8)),
            decision(Status::Errored, 0, 1, Some("model call failed: HTTP 503"))
        );
        let bad = failed("no Alice");
        assert_eq!(
            decide(&[(1, &bad)], &all(1, 1.0)),
            decision(Status::Failed, 0, 0, Some("no Alice"))
        );
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(0.8), "80%");
        assert_eq!(percent(0.333), "33.3%");
    }

    #[test]
    fn an_unavailable_call_ignores_the_trial_with_its_reason() {
        let reason = |why| Unavailable {
            why,
            message: "no recording; record it with: ...".into(),
        };
        let judge = JudgeError::Unavailable(reason(Ignore::LiveOnly));
        let body: anyhow::Result<()> = Err(anyhow::Error::from(judge).context("asking the judge"));
        let outcome = classify(body);
        assert_eq!(
            outcome,
            SampleOutcome::Unavailable(reason(Ignore::LiveOnly))
        );
        let no_key = SampleOutcome::Unavailable(reason(Ignore::NoKey { var: "K".into() }));
        let d = decide(&[(1, &SampleOutcome::Passed), (2, &no_key)], &all(2, 1.0));
        assert_eq!(d.status, Status::Ignored);
        assert_eq!(
            d.message.as_deref(),
            Some("no recording; record it with: ...")
        );
        let d = decide(&[(1, &outcome)], &all(1, 1.0));
        assert_eq!(d.status, Status::LiveOnly);
    }
}
