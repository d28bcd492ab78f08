//! Unit tests of how a sample ends and what a trial's samples decide.

use super::*;
use crate::plan::Threshold;

/// [`super::classify`] of a sample whose calls ended as `calls`.
fn classify(calls: &[(CallRole, CallEnding)], body: SampleOutcome) -> SampleOutcome {
    let ended = Ended {
        calls: calls.to_vec(),
        ..Ended::default()
    };
    super::classify(&ended, body)
}

fn failed(m: &str) -> SampleOutcome {
    SampleOutcome::failed(m)
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
    let ok = |_| SampleOutcome::PASSED;
    // The example: runs = 5 at 0.8 needs 4; four start, all pass, the fifth is never sent.
    let (waves, d) = run_waves(&early(5, 0.8), 16, ok);
    assert_eq!((waves, d.status, d.passed), (vec![4], Status::Passed, 4));
    // One of the four fails: the fifth is sent, and decides.
    let one_bad = |i| {
        if i == 2 {
            failed("no")
        } else {
            SampleOutcome::PASSED
        }
    };
    let (waves, d) = run_waves(&early(5, 0.8), 16, one_bad);
    assert_eq!((waves, d.status), (vec![4, 1], Status::Passed));
    // Two fail among the four: decided the other way without the fifth, and it says so.
    let two_bad = |i| {
        if i <= 2 {
            failed("no")
        } else {
            SampleOutcome::PASSED
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
                        SampleOutcome::PASSED
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
    let ok = |_| SampleOutcome::PASSED;
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
            SampleOutcome::PASSED
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
    SampleOutcome::errored(m)
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
        errored("judge call failed: openai: HTTP 503: down [4 attempts]; then: the judge is down")
    );
    let panicked = failed("called `Result::unwrap()` on an `Err` value: Call(..)");
    let outcome = classify(&calls, panicked);
    assert_eq!(outcome.status(), SampleStatus::Errored);
    assert!(
        outcome
            .message()
            .is_some_and(|m| m.starts_with("judge call failed: openai: HTTP 503"))
    );
    assert_eq!(
        classify(&calls, SampleOutcome::PASSED),
        errored(
            "judge call failed: openai: HTTP 503: down [4 attempts] (the test went on without its answer)"
        )
    );
    // A judge reply without a verdict is a failed call too, said as the judge's error says it.
    let no_verdict = CallError::new(CallErrorKind::NoVerdict, "judge returned no verdict: prose");
    assert_eq!(
        classify(
            &[(CallRole::Judge, CallEnding::Failed(no_verdict))],
            SampleOutcome::PASSED
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
    assert_eq!(classify(&answered, of_body(Ok(()))), SampleOutcome::PASSED);
    let ensured = (|| -> anyhow::Result<()> {
        anyhow::ensure!(1 + 1 == 3, "arithmetic");
        Ok(())
    })();
    assert_eq!(classify(&answered, of_body(ensured)), failed("arithmetic"));
    let turns = crate::agent::AgentError::MaxTurns {
        max_turns: 2,
        last_calls: Vec::new(),
    };
    assert_eq!(
        classify(&answered, of_body(Err(turns.into()))).status(),
        SampleStatus::Failed
    );
    // The text of a library error the body formats itself decides nothing: no call failed.
    let quoted = anyhow::anyhow!(
        "{}",
        crate::run::RunError::Call {
            call: "judge",
            error: judge_outage(),
        }
    );
    assert_eq!(
        classify(&answered, of_body(Err(quoted))).status(),
        SampleStatus::Failed
    );
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
    let (ok, bad) = (SampleOutcome::PASSED, failed("no Alice"));
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
    let ok = SampleOutcome::PASSED;
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
    let outcome = classify(&calls, SampleOutcome::PASSED);
    assert_eq!(
        outcome,
        SampleOutcome::unavailable(reason(Ignore::LiveOnly))
    );
    let no_key = SampleOutcome::unavailable(reason(Ignore::NoKey { var: "K".into() }));
    let d = decide(&[(1, &SampleOutcome::PASSED), (2, &no_key)], &all(2, 1.0));
    assert_eq!(d.status, Status::Ignored);
    assert_eq!(
        d.message.as_deref(),
        Some("no recording; record it with: ...")
    );
    let d = decide(&[(1, &outcome)], &all(1, 1.0));
    assert_eq!(d.status, Status::LiveOnly);
}
