//! Scoring a case's assertions on one run, asking the judge when the score depends on it.

use super::check::{Verdict, check_sync};
use super::kinds::{Assertion, Check};
use crate::checks::AssertionRecord;
use crate::judge::JudgeVerdict;
use crate::outcome::SampleOutcome;
use crate::render::shorten;
use crate::run::PromptRun;

/// Checks every assertion of a case on one run and scores it: passed when every assertion passes, or,
/// with a `min_score` (the suite key `threshold`), when the weight of the passing ones over all weights
/// reaches it. The judge is asked once for all `judge` assertions (one call), and not at all when the
/// case has already failed. A judge that gives no verdict (or cannot be asked) errors the sample
/// whatever the weights: that says nothing about the output.
pub async fn evaluate(
    asserts: &[Assertion],
    min_score: Option<f64>,
    run: &PromptRun,
) -> SampleOutcome {
    let mut verdicts: Vec<Option<Verdict>> = asserts
        .iter()
        .map(|a| (!matches!(a.check, Check::Judge(_))).then(|| check_sync(&a.check, run)))
        .collect();
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    let sync_failed = verdicts.iter().flatten().any(|v| !v.passed);
    // The judge's answers are not known yet: at best they all pass.
    let best = weight_where(asserts, &verdicts, |v| v.as_ref().is_none_or(|v| v.passed));
    let decided = match min_score {
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
                Err(crate::judge::JudgeError::Unavailable(u)) => {
                    return SampleOutcome::Unavailable(u);
                }
                Err(e) => return SampleOutcome::Errored(format!("judge: {e}")),
            };
            for ((i, q), answer) in questions.iter().zip(answers) {
                verdicts[*i] = Some(judged(q, answer));
            }
        }
    }
    let verdicts: Vec<Verdict> = verdicts
        .into_iter()
        .map(|v| v.unwrap_or_else(Verdict::pass))
        .collect();
    run.scope
        .note(|c| c.assertions = records(asserts, &verdicts));
    score(asserts, &verdicts, min_score)
}

/// Each assertion's verdict, for the reports.
fn records(asserts: &[Assertion], verdicts: &[Verdict]) -> Vec<AssertionRecord> {
    asserts
        .iter()
        .zip(verdicts)
        .map(|(a, v)| AssertionRecord {
            kind: a.check.kind().to_string(),
            at: a.at.clone(),
            passed: v.passed,
            message: v.detail.clone(),
        })
        .collect()
}

/// The sum of the weights of the assertions whose verdict satisfies `counts`.
fn weight_where<V>(asserts: &[Assertion], verdicts: &[V], counts: impl Fn(&V) -> bool) -> f64 {
    asserts
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| counts(v))
        .map(|(a, _)| a.weight)
        .sum()
}

/// The verdict on the judge's answer to `question`.
fn judged(question: &str, answer: JudgeVerdict) -> Verdict {
    if answer.passed {
        return Verdict::pass();
    }
    let reasoning = answer
        .reasoning
        .unwrap_or_else(|| "no reasoning given".into());
    let snippet = answer
        .snippet
        .map(|s| format!(" (snippet {:?})", shorten(&s, 120)))
        .unwrap_or_default();
    Verdict::fail(
        "judge",
        format!("the judge to confirm {question:?}"),
        format!("{:?}: {}{snippet}", answer.answer, shorten(&reasoning, 400)),
    )
}

/// The sample's outcome from every assertion's verdict; a failure lists the failed assertions, then
/// the notes of the passing ones.
fn score(asserts: &[Assertion], verdicts: &[Verdict], min_score: Option<f64>) -> SampleOutcome {
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    let passed_weight = weight_where(asserts, verdicts, |v| v.passed);
    let failed: Vec<String> = asserts
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| !v.passed)
        .map(|(a, v)| format!("{}: {}", a.at, v.detail.clone().unwrap_or_default()))
        .collect();
    let score = if total > 0.0 {
        passed_weight / total
    } else {
        1.0
    };
    let ok = match min_score {
        None => failed.is_empty(),
        Some(t) => score + 1e-9 >= t,
    };
    if ok {
        return SampleOutcome::Passed;
    }
    let head = match min_score {
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
    let notes = verdicts
        .iter()
        .filter(|v| v.passed)
        .filter_map(|v| v.detail.clone());
    let mut lines = vec![head];
    lines.extend(failed.into_iter().map(|f| format!("- {f}")));
    lines.extend(notes.map(|n| format!("note: {n}")));
    SampleOutcome::Failed(lines.join("\n"))
}
