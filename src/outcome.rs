//! How a sample ends (passed, failed, errored, unavailable) and what the samples of a trial decide.
//! Pure functions: `harness::trial::execute` runs the samples and reports what these decide.

use std::error::Error;

use serde::Serialize;

use crate::agent::AgentError;
use crate::cassette::CassetteError;
use crate::cassette::decision::{Ignore, Unavailable};
use crate::engine::CallError;
use crate::judge::JudgeError;
use crate::mcp::McpError;
use crate::provider::ProviderError;

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
        || error.is::<ProviderError>()
        || error.is::<CallError>()
        || error.is::<CassetteError>()
        || error.is::<McpError>()
        // `AgentError::Mcp` is transparent: its source is the MCP error's source, not the MCP error.
        || matches!(error.downcast_ref::<AgentError>(), Some(AgentError::Mcp(_)))
}

/// The reason a call was not made, when `error` is one (directly, or as the judge's).
fn unavailable<'e>(error: &'e (dyn Error + 'static)) -> Option<&'e Unavailable> {
    match (error.downcast_ref(), error.downcast_ref()) {
        (Some(CallError::Unavailable(u)), _) | (_, Some(JudgeError::Unavailable(u))) => Some(u),
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

/// Decides a trial from its samples, `(run index, outcome)` in run order, of `runs` at
/// `pass_threshold`, when `need` must pass. An errored sample fails the trial whatever the threshold: it hides what the
/// output would have been.
pub fn decide(
    samples: &[(u32, &SampleOutcome)],
    runs: u32,
    need: u32,
    pass_threshold: f64,
) -> Decision {
    let passed = samples
        .iter()
        .filter(|(_, o)| **o == SampleOutcome::Passed)
        .count() as u32;
    let errored = samples
        .iter()
        .filter(|(_, o)| matches!(o, SampleOutcome::Errored(_)))
        .count() as u32;
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
            let total = samples.len();
            let errors = if errored > 0 {
                format!(", {errored} errored")
            } else {
                String::new()
            };
            let why = if passed >= need {
                ": an errored run fails the trial"
            } else {
                ""
            };
            // The rate and its interval: "3/5" alone reads as a fact, not an estimate.
            let rate = crate::stats::Counts::new(passed, total as u32)
                .rate_with_interval()
                .map_or_else(String::new, |r| format!("{r}; "));
            lines.push(format!(
                "{passed}/{total} runs passed{errors} ({rate}need {need}, threshold {}){why}",
                percent(pass_threshold)
            ));
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
    use anyhow::Context;

    fn failed(m: &str) -> SampleOutcome {
        SampleOutcome::Failed(m.into())
    }

    fn errored(m: &str) -> SampleOutcome {
        SampleOutcome::Errored(m.into())
    }

    #[test]
    fn library_errors_are_errors_and_everything_else_is_a_failure() {
        let judge = || JudgeError::NoVerdict("prose".into());
        let errors: Vec<anyhow::Error> = vec![
            judge().into(),
            anyhow::Error::from(judge()).context("asking about tone"),
            Err::<(), _>(judge()).context("while judging").unwrap_err(),
            JudgeError::MissingVerdicts(vec![(2, "B?".into())]).into(),
            CallError::Failed("HTTP 503".into()).into(),
            CassetteError::Invalid {
                path: "x.json".into(),
                message: "bad".into(),
            }
            .into(),
            AgentError::Mcp(McpError::Spawn {
                server: "s".into(),
                message: "gone".into(),
            })
            .into(),
        ];
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
            assert_eq!(decide(&samples, 5, 4, 0.8), want, "{outcomes:?}");
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
                        "[run 2/5] FAILED: no Alice\n[run 5/5] FAILED: no Alice\n3/5 runs passed (60%, 95% \
                         CI 23–88%; need 4, threshold 80%)",
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
                        "[run 3/5] ERROR: model call failed: HTTP 503\n4/5 runs passed, 1 errored (80%, 95% \
                         CI 38–96%; need 4, threshold 80%): an errored run fails the trial",
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
                        "[run 2/5] FAILED: no\n    Alice\n[run 3/5] ERROR: model call failed: HTTP 503\n3/5 runs \
                         passed, 1 errored (60%, 95% CI 23–88%; need 4, threshold 80%)",
                    ),
                ),
            ),
        ]);
        // Even a threshold any single run meets.
        let one_error = [(1, &ok), (2, &ok), (3, &outage), (4, &ok), (5, &ok)];
        assert_eq!(decide(&one_error, 5, 1, 0.01).status, Status::Errored);
    }

    #[test]
    fn a_single_sample_is_reported_as_its_own_message() {
        let outage = errored("model call failed: HTTP 503");
        assert_eq!(
            decide(&[(3, &outage)], 5, 1, 0.8),
            decision(Status::Errored, 0, 1, Some("model call failed: HTTP 503"))
        );
        let bad = failed("no Alice");
        assert_eq!(
            decide(&[(1, &bad)], 1, 1, 1.0),
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
        let d = decide(&[(1, &SampleOutcome::Passed), (2, &no_key)], 2, 2, 1.0);
        assert_eq!(d.status, Status::Ignored);
        assert_eq!(
            d.message.as_deref(),
            Some("no recording; record it with: ...")
        );
        let d = decide(&[(1, &outcome)], 1, 1, 1.0);
        assert_eq!(d.status, Status::LiveOnly);
    }
}
