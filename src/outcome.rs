//! How a sample ends (passed, failed, errored, unavailable) and what the samples of a trial decide.
//! Pure functions: `harness::trial::execute` runs the samples and reports what these decide.

use serde::{Deserialize, Serialize};

use crate::cassette::decision::{Ignore, Unavailable};
use crate::checks::Checks;
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole};
use crate::plan::SamplePlan;
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

/// The outcome of a test body's result, before its calls are read: `Ok` passes, an error or a panic
/// fails (`ensure!`, `bail!`, the body's own errors, a failed call's error returned with `?`), except a
/// failing advisory verdict whose `[judge] advisory = "error"` errors the sample
/// ([`crate::judge::JudgeFailed::errors`]).
pub fn of_body(result: anyhow::Result<()>) -> SampleOutcome {
    match result {
        Ok(()) => SampleOutcome::Passed,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<crate::judge::JudgeFailed>()
                    .is_some_and(crate::judge::JudgeFailed::errors)
            }) =>
        {
            SampleOutcome::Errored(format!("{e:#}"))
        }
        Err(e) => SampleOutcome::Failed(format!("{e:#}")),
    }
}

/// How a sample ends, from how its model calls ended (`calls`, as its scope noted them) and what its
/// body or assertions decided (`body`): a call that was not made nor replayed makes it unavailable (the
/// trial ignored); a call that failed errors it, whatever the body did with the error (returned it with
/// `?`, unwrapped it, turned it into its own, matched it away or dropped it); only when every call
/// ended well does the body decide between passed and failed.
pub fn classify(calls: &[(CallRole, CallEnding)], body: SampleOutcome) -> SampleOutcome {
    if let Some(reason) = calls.iter().find_map(|(_, ending)| match ending {
        CallEnding::Unavailable(reason) => Some(reason),
        _ => None,
    }) {
        return SampleOutcome::Unavailable(reason.clone());
    }
    let Some((role, failed)) = calls.iter().find_map(|(role, ending)| match ending {
        CallEnding::Failed(e) => Some((*role, e)),
        _ => None,
    }) else {
        return body;
    };
    let said = failed_call(role, failed);
    SampleOutcome::Errored(match body {
        // The body's error is the call's (with `?`, or with its context): its text says it all.
        SampleOutcome::Failed(m) | SampleOutcome::Errored(m) if m.contains(&failed.to_string()) => {
            m
        }
        SampleOutcome::Failed(m) | SampleOutcome::Errored(m) => format!("{said}; then: {m}"),
        SampleOutcome::Passed => format!("{said} (the test went on without its answer)"),
        SampleOutcome::Unavailable(_) => said,
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
    checks: &Checks,
    judge: Option<crate::checks::JudgeSettings>,
) -> crate::cassette::RecordedChecks {
    use crate::cassette::CheckVerdict;
    let status = match outcome {
        SampleOutcome::Passed => "passed",
        SampleOutcome::Failed(_) => "failed",
        SampleOutcome::Errored(_) | SampleOutcome::Unavailable(_) => "errored",
    };
    let assertions = checks
        .assertions
        .iter()
        .map(|a| CheckVerdict::new(format!("{} ({})", a.kind, a.at), a.passed));
    let judged = checks.judge.iter().map(|j| CheckVerdict {
        advisory: j.advisory.is_some(),
        question_type: j.question_type.clone(),
        judge_key: Some(j.judge_key.clone()).filter(|k| !k.is_empty()),
        ..CheckVerdict::new(format!("judge: {}", j.question), j.passed)
    });
    crate::cassette::RecordedChecks {
        target: None,
        test: String::new(),
        run: 0,
        status: status.to_string(),
        checks: assertions.chain(judged).collect(),
        judge_settings: judge.filter(|_| !checks.judge.is_empty()),
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

pub use crate::stats::percent;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Threshold;

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

    fn judge_outage() -> CallError {
        CallError::new(
            CallErrorKind::Provider {
                status: Some(503),
                attempts: 4,
            },
            "openai: HTTP 503: down [4 attempts]",
        )
    }

    /// A failed call errors the sample whatever the body made of it: returned with `?` (its text is
    /// kept), turned into the body's own error, panicked on, or dropped (the body passed).
    #[test]
    fn a_failed_call_errors_the_sample_whatever_the_body_did_with_it() {
        let judge = crate::run::RunError::Call {
            call: "judge",
            error: judge_outage(),
        };
        let calls = [
            (CallRole::Subject, CallEnding::Replayed),
            (CallRole::Judge, CallEnding::Failed(judge_outage())),
        ];
        let returned = of_body(Err(anyhow::Error::from(judge).context("asking about tone")));
        assert_eq!(
            classify(&calls, returned),
            errored("asking about tone: judge call failed: openai: HTTP 503: down [4 attempts]")
        );
        let own = of_body(Err(anyhow::anyhow!("the judge is down")));
        assert_eq!(
            classify(&calls, own),
            errored(
                "judge call failed: openai: HTTP 503: down [4 attempts]; then: the judge is down"
            )
        );
        let panicked = failed("called `Result::unwrap()` on an `Err` value: Call(..)");
        assert!(matches!(
            classify(&calls, panicked),
            SampleOutcome::Errored(m) if m.starts_with("judge call failed: openai: HTTP 503")
        ));
        assert_eq!(
            classify(&calls, SampleOutcome::Passed),
            errored(
                "judge call failed: openai: HTTP 503: down [4 attempts] (the test went on without its answer)"
            )
        );
        // A judge reply without a verdict is a failed call too, said as the judge's error says it.
        let no_verdict =
            CallError::new(CallErrorKind::NoVerdict, "judge returned no verdict: prose");
        assert_eq!(
            classify(
                &[(CallRole::Judge, CallEnding::Failed(no_verdict))],
                SampleOutcome::Passed
            ),
            errored("judge returned no verdict: prose (the test went on without its answer)")
        );
    }

    /// Only when every call ended well does the body decide: its error (its own, `ensure!`, an agent
    /// loop out of turns) fails the sample, even when its text quotes a call's error.
    #[test]
    fn with_every_call_answered_the_body_decides() {
        let answered = [
            (CallRole::Subject, CallEnding::Made),
            (CallRole::Judge, CallEnding::Replayed),
        ];
        assert_eq!(classify(&answered, of_body(Ok(()))), SampleOutcome::Passed);
        let ensured = (|| -> anyhow::Result<()> {
            anyhow::ensure!(1 + 1 == 3, "arithmetic");
            Ok(())
        })();
        assert_eq!(classify(&answered, of_body(ensured)), failed("arithmetic"));
        let turns = crate::agent::AgentError::MaxTurns {
            max_turns: 2,
            last_calls: Vec::new(),
        };
        assert!(matches!(
            classify(&answered, of_body(Err(turns.into()))),
            SampleOutcome::Failed(_)
        ));
        // The text of a library error the body formats itself decides nothing: no call failed.
        let quoted = anyhow::anyhow!(
            "{}",
            crate::run::RunError::Call {
                call: "judge",
                error: judge_outage(),
            }
        );
        assert!(matches!(
            classify(&answered, of_body(Err(quoted))),
            SampleOutcome::Failed(_)
        ));
        // An outcome the assertions decided (an error of their own) stands.
        assert_eq!(classify(&[], errored("x")), errored("x"));
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
        // Before a failed call, and whatever the body did (here it swallowed it and passed).
        let calls = [
            (CallRole::Judge, CallEnding::Failed(judge_outage())),
            (
                CallRole::Judge,
                CallEnding::Unavailable(reason(Ignore::LiveOnly)),
            ),
        ];
        let outcome = classify(&calls, SampleOutcome::Passed);
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
