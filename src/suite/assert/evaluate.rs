//! Scoring a case's assertions on one run, asking the judge when the score depends on it.

use super::check::{Verdict, check_sync};
use super::kinds::{Assertion, Check};
use crate::harness::outcome::SampleOutcome;
use crate::harness::record::shorten;
use crate::run::PromptRun;

/// Checks every assertion of a case on one run and scores it: passed when every assertion passes, or,
/// with a `threshold`, when the weight of the passing ones over all weights reaches it. The judge is
/// asked once for all `judge` assertions (one call), and not at all when the case has already failed.
/// A judge that gives no verdict (or cannot be asked) errors the sample whatever the weights: that
/// says nothing about the output.
pub async fn evaluate(
    asserts: &[Assertion],
    threshold: Option<f64>,
    run: &PromptRun,
) -> SampleOutcome {
    let mut verdicts: Vec<Option<Verdict>> = asserts
        .iter()
        .map(|a| (!matches!(a.check, Check::Judge(_))).then(|| check_sync(&a.check, run)))
        .collect();
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    let sync_failed = verdicts.iter().flatten().any(|v| !v.passed);
    let best: f64 = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.as_ref().is_none_or(|v| v.passed))
        .map(|(a, _)| a.weight)
        .sum();
    let decided = match threshold {
        None => sync_failed,
        Some(t) => total > 0.0 && best / total + 1e-9 < t,
    };
    let questions: Vec<(usize, &str)> = asserts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match &a.check {
            Check::Judge(q) => Some((i, q.as_str())),
            _ => None,
        })
        .collect();
    if !questions.is_empty() {
        if decided {
            for (i, _) in &questions {
                verdicts[*i] = Some(Verdict {
                    passed: false,
                    detail: Some("judge: not asked, the case fails anyway".into()),
                });
            }
        } else {
            let asked: Vec<&str> = questions.iter().map(|(_, q)| *q).collect();
            let answers = match run.ask_all(&asked).await {
                Ok(answers) => answers,
                Err(e) => return SampleOutcome::Errored(format!("judge: {e}")),
            };
            for ((i, q), verdict) in questions.iter().zip(answers) {
                verdicts[*i] = Some(if verdict.passed {
                    Verdict::pass()
                } else {
                    let reasoning = verdict
                        .reasoning
                        .unwrap_or_else(|| "no reasoning given".into());
                    let snippet = verdict
                        .snippet
                        .map(|s| format!(" (snippet {:?})", shorten(&s, 120)))
                        .unwrap_or_default();
                    Verdict::fail(
                        "judge",
                        format!("the judge to confirm {q:?}"),
                        format!(
                            "{:?}: {}{snippet}",
                            verdict.answer,
                            shorten(&reasoning, 400)
                        ),
                    )
                });
            }
        }
    }

    let verdicts: Vec<Verdict> = verdicts
        .into_iter()
        .map(|v| v.unwrap_or_else(Verdict::pass))
        .collect();
    let passed_weight: f64 = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.passed)
        .map(|(a, _)| a.weight)
        .sum();
    let failed: Vec<String> = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| !v.passed)
        .map(|(a, v)| format!("{}: {}", a.at, v.detail.clone().unwrap_or_default()))
        .collect();
    let score = if total > 0.0 {
        passed_weight / total
    } else {
        1.0
    };
    let ok = match threshold {
        None => failed.is_empty(),
        Some(t) => score + 1e-9 >= t,
    };
    if ok {
        return SampleOutcome::Passed;
    }
    let head = match threshold {
        None => format!(
            "{} of {} assertion{} failed:",
            failed.len(),
            asserts.len(),
            if asserts.len() == 1 { "" } else { "s" }
        ),
        Some(t) => format!(
            "score {score:.2} is below the threshold {t} ({} of {} assertions failed; weight {passed_weight} of {total} passed):",
            failed.len(),
            asserts.len()
        ),
    };
    let notes: Vec<String> = verdicts
        .iter()
        .filter(|v| v.passed)
        .filter_map(|v| v.detail.clone())
        .collect();
    let mut lines = vec![head];
    lines.extend(failed.into_iter().map(|f| format!("- {f}")));
    lines.extend(notes.into_iter().map(|n| format!("note: {n}")));
    SampleOutcome::Failed(lines.join("\n"))
}
